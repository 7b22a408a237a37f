"""The stdio MCP server the capture's agents use (the mcp SDK's MCPServer, formerly FastMCP).

Started by ``MCPServerStdio`` once per scenario, as ``python mcp_server.py``. Environment:

    MCPOA_MODE         plain | semconv. semconv makes this process's TracerProvider the global
                       one, so the SDK's own OpenTelemetry middleware (MCP semantic conventions)
                       records; plain leaves the global provider unset (the SDK's spans are no-ops).
    MCPOA_SPANS_FILE   where this process writes its finished spans (OTLP/JSON, rewritten at
                       every span end, so nothing is lost when the client closes the pipe).
    MCPOA_TRUTH_FILE   where the tool bodies' ground truth goes (rewritten at every record).
    MCPOA_SCRIPT_FILE  JSON list of the scripted calls {name, arguments, tool_call_id, agent}: a
                       body finds its call id and agent there by (name, arguments), since
                       neither reaches an MCP server.
    MCPOA_RETIRE       a tool name removed right after the first tools/list answer (a stale tool
                       list on the client: the model calls a tool the server no longer has).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from opentelemetry import trace as trace_api  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider  # noqa: E402
from openinference.instrumentation.mcp import MCPInstrumentor  # noqa: E402

MODE = os.environ.get("MCPOA_MODE", "plain")
SPANS_FILE = Path(os.environ["MCPOA_SPANS_FILE"])
TRUTH_FILE = Path(os.environ["MCPOA_TRUTH_FILE"])
SCRIPT_FILE = Path(os.environ["MCPOA_SCRIPT_FILE"])
RETIRE = os.environ.get("MCPOA_RETIRE", "")


class FileSpanProcessor(SpanProcessor):
    """Keeps every ended span and rewrites the OTLP/JSON file each time one ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)
        self.path.write_text(json.dumps(cc.spans_json(self.spans)))


provider = TracerProvider(resource=Resource.create({"service.name": "corpus-mcp-openai-agents-server"}))
provider.add_span_processor(FileSpanProcessor(SPANS_FILE))
if MODE == "semconv":
    trace_api.set_tracer_provider(provider)
MCPInstrumentor().instrument(tracer_provider=provider)

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the instrumentor: its hooks wrap on import)


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, from inside a tool body, that it ran, with the scripted call's id and agent."""
    key = json.dumps(arguments, sort_keys=True)
    script = json.loads(SCRIPT_FILE.read_text())  # read at call time: the capture may add to it
    match = next((c for c in script if c["name"] == name and json.dumps(c["arguments"], sort_keys=True) == key), None)
    ids = {"tool_call_id": match["tool_call_id"], "tool_call_id_source": "script"} if match else {}
    cc.record(name, arguments, outcome, match["agent"] if match else "?", **ids, recorded_by="mcp_server",
              t=time.time(), **extra)
    TRUTH_FILE.write_text(json.dumps(cc.truth_snapshot()))


class ToolServer(MCPServer):
    async def list_tools(self):  # type: ignore[no-untyped-def]
        tools = await super().list_tools()
        if RETIRE and self._tool_manager.get_tool(RETIRE):
            self.remove_tool(RETIRE)
        return tools


mcp = ToolServer("calc-tools")


@mcp.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b})
    return a * b


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    ran("add", {"a": a, "b": b})
    return a + b


@mcp.tool()
def divide(a: int, b: int) -> float:
    """Divide a by b."""
    if b == 0:
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
    else:
        ran("divide", {"a": a, "b": b})
    return a / b


@mcp.tool()
def get_weather(city: str) -> str:
    """Current weather for a city."""
    ran("get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@mcp.tool()
def search(query: str) -> str:
    """Search the web."""
    ran("search", {"query": query})
    return "widget price: 42"


@mcp.tool()
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


@mcp.tool()
def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


@mcp.tool()
def legacy_lookup(term: str) -> str:
    """Old encyclopedia lookup (retired by MCPOA_RETIRE in the server_unknown_tool scenario)."""
    ran("legacy_lookup", {"term": term})
    return f"{term}: (legacy entry)"


@mcp.tool()
def delete_file(path: str) -> str:
    """Delete a file."""
    ran("delete_file", {"path": path})
    return f"deleted {path}"


if __name__ == "__main__":
    try:
        mcp.run()  # stdio
    finally:
        provider.force_flush()
