"""The stdio MCP server the capture's agents call: the `mcp` SDK's MCPServer (FastMCP in mcp 1.x).

Started by ``capture.py`` (through pydantic-ai's ``MCPToolset`` over stdio), one process per
scenario. It has its own TracerProvider (``service.name`` ``MCPPA_SERVICE``) and writes every
span it ends, as one OTLP/JSON ExportTraceServiceRequest per line, to ``MCPPA_SPANS``; the
capture merges them into the scenario's trace file as a second ``resourceSpans``.

Every tool body records the ground truth with ``capture_common.record`` and appends the entry
to ``MCPPA_TRUTH`` (JSON lines), which the capture reads back. The server is never told the
call id: the body looks up the id the scripted model gave the call with this name and these
arguments (and the agent whose script it was) in ``MCPPA_IDS``, a file the capture rewrites
before every scenario (``tool_call_id_source: script``).

Modes (``MCPPA_MODE``):
  openinference  openinference-instrumentation-mcp on the server side (extracts the propagated
                 context from ``_meta``); the SDK's own server span middleware is removed so
                 no MCP span is made; each tool body opens one plain span of its own
                 (``server tool body``), the only server span, to show where the context lands.
  semconv        the SDK's own OpenTelemetry middleware (on by default in mcp 2.x) with this
                 process's provider set as the global one; no openinference, no body span.
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

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402

MODE = os.environ.get("MCPPA_MODE", "openinference")
SPANS = Path(os.environ["MCPPA_SPANS"])
TRUTH = Path(os.environ["MCPPA_TRUTH"])
IDS = Path(os.environ["MCPPA_IDS"])


class _LineExporter(SpanExporter):
    """Appends each batch of ended spans to MCPPA_SPANS as one OTLP/JSON line (nothing lost at exit)."""

    def export(self, spans: Any) -> SpanExportResult:
        with SPANS.open("a", encoding="utf-8") as out:
            out.write(json.dumps(cc.spans_json(spans)) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("MCPPA_SERVICE", "mcp-tools-server")}))
provider.add_span_processor(SimpleSpanProcessor(_LineExporter()))

if MODE == "openinference":
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
else:
    trace.set_tracer_provider(provider)

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import Tool as MCPTool  # noqa: E402

_body_tracer = provider.get_tracer("mcp-capture-server")


def _canonical(arguments: dict[str, Any]) -> str:
    """Arguments as the capture keys them: integral floats as ints (the schema made 10 into 10.0)."""
    return json.dumps({k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in arguments.items()},
                      sort_keys=True)


def _scripted(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The id and agent the capture's script gave this call (name + canonical arguments)."""
    table = json.loads(IDS.read_text(encoding="utf-8")) if IDS.exists() else {}
    entry = table.get(f"{name} {_canonical(arguments)}")
    return entry or {"agent": "?"}


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, inside the tool body, that it ran; hand the entry to the capture."""
    script = _scripted(name, arguments)
    ids = {"tool_call_id": script["id"], "tool_call_id_source": "script"} if script.get("id") else {}
    cc.record(name, arguments, outcome, script["agent"], **ids, **extra, recorded_by="mcp_server", _t=time.time_ns())
    entry = cc.truth_snapshot()[-1]
    with TRUTH.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


class _Body:
    """The one span a tool body opens in openinference mode (nothing in semconv mode)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        if MODE == "openinference":
            self._cm = _body_tracer.start_as_current_span("server tool body", attributes={"server.tool_body.tool": self.name})
            self._cm.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if MODE == "openinference":
            self._cm.__exit__(*exc)


class ToolsServer(MCPServer):
    """Advertises one tool it has no implementation for (``get_forecast``): a call to it is
    answered ``Unknown tool`` by the SDK (isError), the way a server whose tool went away answers."""

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        phantom = MCPTool(
            name="get_forecast",
            description="Weather forecast for a city (advertised, but this server no longer has it).",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        )
        return [*tools, phantom]


server = ToolsServer("capture-tools")
if MODE == "openinference":
    from mcp.server._otel import OpenTelemetryMiddleware

    server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    with _Body("multiply"):
        ran("multiply", {"a": a, "b": b})
        return a * b


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    with _Body("add"):
        ran("add", {"a": a, "b": b})
        return a + b


@server.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    with _Body("divide"):
        if b == 0:
            ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
        else:
            ran("divide", {"a": a, "b": b})
        return a / b


@server.tool()
def get_weather(city: str) -> str:
    """Current weather for a city."""
    with _Body("get_weather"):
        ran("get_weather", {"city": city})
        return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@server.tool()
def search(query: str) -> str:
    """Search the web."""
    with _Body("search"):
        ran("search", {"query": query})
        return "<td>price</td><td>42</td>"


@server.tool()
def parse_price(html: str) -> int:
    """Read the price out of an HTML table cell pair."""
    with _Body("parse_price"):
        ran("parse_price", {"html": html})
        return 42


@server.tool()
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    with _Body("compute"):
        ran("compute", {"expression": expression})
        left, right = expression.split("*")
        return float(int(left) * int(right))


@server.tool()
def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    with _Body("lookup"):
        ran("lookup", {"term": term})
        return f"{term}: a statically typed functional language"


@server.tool()
def fetch_page(url: str) -> str:
    """Fetch a web page (this server raises a ToolError: the page is unreachable)."""
    with _Body("fetch_page"):
        ran("fetch_page", {"url": url}, "error", error="ToolError: upstream unreachable")
        raise ToolError(f"upstream unreachable: {url}")


@server.tool()
def delete_file(path: str) -> str:
    """Delete a file (the agent asks a human first)."""
    with _Body("delete_file"):
        ran("delete_file", {"path": path})
        return f"deleted {path}"


if __name__ == "__main__":
    server.run("stdio")
