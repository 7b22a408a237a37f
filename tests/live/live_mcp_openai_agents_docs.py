"""docs/frameworks/mcp_openai_agents.md's snippet, run as written: an openai-agents agent whose
tools live on the capture's stdio MCP server (tests/capture/mcp_openai_agents/mcp_server.py,
started by ``MCPServerStdio``), on the capture's scripted model, judged, stored and exported as
the captured mcp_openai_agents_semconv single_tool scenario.

The snippet makes its provider the global one, so the mcp SDK's own MCP-convention client span
(``MCP send tools/call multiply``) is recorded in this process and folds into the tool's
attempt. The server process's spans do not reach this process's span processor (the page says
so): single_tool reads the same with or without them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from .harness import TESTS, assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

os.environ.pop("OPENAI_API_KEY", None)  # the instrumentor replaces the SDK's exporter; nothing goes to OpenAI

MCP_SERVER = TESTS / "capture" / "mcp_openai_agents" / "mcp_server.py"
CALL_ID = "call_mcpoa_semconv_single_tool_multiply_1"


def test_the_page_s_snippet_judges_a_live_run(tmp_path: Path, monkeypatch):
    page = run_page_snippet("mcp_openai_agents", tmp_path / "results.db", monkeypatch)
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI

    # the capture's single_tool: multiply(a=10, b=5) on the MCP server, then text
    arguments = {"a": 10, "b": 5}
    script = tmp_path / "script.json"  # the server's tool bodies find the call's id and agent here
    script.write_text(json.dumps([{"name": "multiply", "arguments": arguments, "tool_call_id": CALL_ID, "agent": "calculator"}]))
    env = {"PATH": os.environ.get("PATH", ""), "MCPOA_MODE": "semconv", "MCPOA_SPANS_FILE": str(tmp_path / "server_spans.json"),
           "MCPOA_TRUTH_FILE": str(tmp_path / "server_truth.json"), "MCPOA_SCRIPT_FILE": str(script)}
    params = {"command": sys.executable, "args": [str(MCP_SERVER)], "env": env, "cwd": str(MCP_SERVER.parent)}

    async def single_tool(model: cc.ScriptedOpenAI) -> None:
        client = AsyncOpenAI(base_url=model.base_url, api_key="scripted-no-key", max_retries=0)
        async with MCPServerStdio(params, name="calc-tools", client_session_timeout_seconds=30) as tools:
            calculator = Agent(name="calculator", instructions="Use the tools.", mcp_servers=[tools],
                               model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client))
            await Runner.run(calculator, "What is 10 times 5?", run_config=RunConfig(trace_include_sensitive_data=True))

    with cc.ScriptedOpenAI() as model:
        model.script(cc.reply(tool_calls=[cc.tool_call("multiply", arguments, CALL_ID)]), cc.reply("50"))
        asyncio.run(single_tool(model))
        assert model.left() == 0, "the scripted model was asked fewer times than the capture's run"
    # the tool really ran on the server (its body records itself there)
    assert [e["name"] for e in json.loads((tmp_path / "server_truth.json").read_text())] == ["multiply"]
    assert_page_judged_as_captured(page, "mcp_openai_agents_semconv", "single_tool")
