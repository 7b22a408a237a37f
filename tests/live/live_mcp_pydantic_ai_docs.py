"""docs/frameworks/mcp_pydantic_ai.md's snippet, run as written: a pydantic-ai agent whose tools
live on a stdio MCP server (the ``mcp`` SDK's ``MCPServer``, started by ``MCPToolset`` over
fastmcp's ``StdioTransport``), on the capture's scripted model (the single_tool script of
tests/capture/mcp_pydantic_ai/capture.py), judged, stored and exported as the captured
mcp_pydantic_ai_semconv single_tool scenario.

The snippet makes its provider the global one, so the MCP client spans of fastmcp and of the
``mcp`` SDK are recorded in this process and fold into the tool's attempt. The server is wired
as the page says (a provider of its own, exporting over OTLP/gRPC to the endpoint the transport's
``env`` hands it): its ``tools/call multiply`` span reaches the same receiver, in the run's
trace, but never this process's span processor; single_tool reads the same with or without it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from .harness import OtlpTraceSink, assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

os.environ.pop("OPENAI_API_KEY", None)  # the model is the scripted one on 127.0.0.1

CALL_ID = "call_mcppa_sc_single_tool_multiply_1"

# The MCP server, wired as the page says: its own provider, the global one (the SDK's server
# middleware records with it), OTLP/gRPC to OTEL_EXPORTER_OTLP_ENDPOINT, shut down after run().
SERVER = '''
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

provider = TracerProvider()  # service.name from OTEL_SERVICE_NAME
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from mcp.server.mcpserver import MCPServer

server = MCPServer("calc-tools")


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


if __name__ == "__main__":
    server.run("stdio")
    provider.shutdown()
'''


def _server_spans(receiver: OtlpTraceSink, service: str) -> list[tuple[int, str, int]]:
    """(trace id, name, kind) of every span the receiver got from ``service``."""
    found = []
    for request in receiver.requests:
        for resource in request.resource_spans:
            names = {a.value.string_value for a in resource.resource.attributes if a.key == "service.name"}
            if service in names:
                found += [(int.from_bytes(s.trace_id, "big"), s.name, s.kind) for scope in resource.scope_spans for s in scope.spans]
    return found


def test_the_page_s_snippet_judges_a_live_run(tmp_path: Path, monkeypatch):
    page = run_page_snippet("mcp_pydantic_ai", tmp_path / "results.db", monkeypatch)
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    server_py = tmp_path / "server.py"
    server_py.write_text(SERVER)
    # a stdio server inherits only HOME, LOGNAME, PATH, SHELL, TERM, USER and this env
    env = {"PATH": os.environ.get("PATH", ""), "OTEL_EXPORTER_OTLP_ENDPOINT": os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"],
           "OTEL_SERVICE_NAME": "mcp-tools-server"}
    toolset = MCPToolset(StdioTransport(command=sys.executable, args=[str(server_py)], env=env, keep_alive=False), id="tools")

    with cc.ScriptedOpenAI() as model:
        # the capture's single_tool: multiply(a=10, b=5) on the MCP server, then text
        model.script(cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 10, "b": 5}, CALL_ID)]), cc.reply("10 times 5 is 50"))
        calculator = Agent(OpenAIChatModel(model.model, provider=OpenAIProvider(base_url=model.base_url, api_key="scripted-no-key")),
                           name="calculator", toolsets=[toolset])
        result = asyncio.run(calculator.run("What is 10 times 5?"))
        assert model.left() == 0, "the scripted model was asked fewer times than the capture's run"
    assert result.output == "10 times 5 is 50"
    assert_page_judged_as_captured(page, "mcp_pydantic_ai_semconv", "single_tool")
    # the tool ran on the server, whose span reached the page's receiver in the run's trace
    [stored] = page.stored_results()
    server_spans = _server_spans(page.receiver, "mcp-tools-server")
    assert (stored.trace_id, "tools/call multiply", 2) in server_spans, f"the receiver got {server_spans} from the server"  # 2: SERVER
