"""docs/frameworks/mcp_pydantic_ai.md's snippet, run as written: a pydantic-ai agent whose tools
live on a stdio MCP server (the ``mcp`` SDK's ``MCPServer``, started by ``MCPToolset`` over
fastmcp's ``StdioTransport``), on the capture's scripted model (the tool_error script of
tests/capture/mcp_pydantic_ai/capture.py: divide(b=0) raises on the server, the model retries
with b=2), judged, stored and exported as the captured mcp_pydantic_ai_semconv tool_error
scenario.

The snippet makes its provider the global one, so the MCP client spans of fastmcp and of the
``mcp`` SDK are recorded in this process and fold into the tool's attempt. The server is wired
as the page says (a provider of its own, exporting over OTLP/gRPC to the endpoint the transport's
``env`` hands it): its ``tools/call divide`` spans reach the same receiver, in the run's
trace, but never this process's span processor, which reads the failure from the client spans
(fastmcp's ``tools/call divide`` is ERROR; the SDK's ``MCP send`` span records no outcome)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from .harness import OtlpTraceSink, assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

os.environ.pop("OPENAI_API_KEY", None)  # the model is the scripted one on 127.0.0.1

CALL_ID = "call_mcppa_sc_tool_error_divide_{}"

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
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


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
        # the capture's tool_error: divide(10, 0) raises on the server (isError), pydantic-ai sends a
        # retry prompt, the model retries with b=2, then answers
        model.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 0}, CALL_ID.format(1))]),
                     cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 2}, CALL_ID.format(2))]),
                     cc.reply("10 / 2 = 5"))
        calculator = Agent(OpenAIChatModel(model.model, provider=OpenAIProvider(base_url=model.base_url, api_key="scripted-no-key")),
                           name="calculator", toolsets=[toolset])
        result = asyncio.run(calculator.run("Divide 10 by 0, or by something sensible"))
        assert model.left() == 0, "the scripted model was asked fewer times than the capture's run"
    assert result.output == "10 / 2 = 5"
    assert_page_judged_as_captured(page, "mcp_pydantic_ai_semconv", "tool_error")
    # both calls ran on the server, whose spans reached the page's receiver in the run's trace
    [stored] = page.stored_results()
    server_spans = _server_spans(page.receiver, "mcp-tools-server")
    calls = [span for span in server_spans if span == (stored.trace_id, "tools/call divide", 2)]  # 2: SERVER
    assert len(calls) == 2, f"the receiver got {server_spans} from the server"
