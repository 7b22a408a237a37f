"""docs/frameworks/agent_framework.md's snippet, run as written: an ``Agent`` on the framework's
Chat Completions client and the capture's scripted model (tests/capture/agent_framework/capture.py),
traced by the framework's own instrumentation through the global providers the snippet sets,
judged, stored and exported as the captured agent_framework tool_error scenario."""

from __future__ import annotations

import asyncio
import os

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

# before agent_framework is imported: its settings read the environment once. Unset, the semantic
# conventions are the framework's default (gen_ai_latest_experimental), as in corpus/agent_framework/.
for _name in ("OTEL_SEMCONV_STABILITY_OPT_IN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL",
              "ENABLE_INSTRUMENTATION", "ENABLE_SENSITIVE_DATA"):
    os.environ.pop(_name, None)


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("agent_framework", tmp_path / "results.db", monkeypatch)
    from agent_framework import Agent
    from agent_framework.openai import OpenAIChatCompletionClient

    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    async def tool_error(server: cc.ScriptedOpenAI) -> None:
        client = OpenAIChatCompletionClient(model=server.model, base_url=server.base_url, api_key="scripted-no-key")
        calculator = Agent(client=client, name="calculator", tools=[divide],
                           instructions="You are calculator. Use your tools.")
        await calculator.run("Divide 10 by 0, or by something sensible")

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10.0, "b": 0.0}, "call_live_divide_1")]),
                      cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10.0, "b": 2.0}, "call_live_divide_2")]),
                      cc.reply("10 / 0 is undefined; 10 / 2 = 5."))
        asyncio.run(tool_error(server))
        assert server.left() == 0, f"{server.left()} scripted answers were never asked for"
    assert_page_judged_as_captured(page, "agent_framework", "tool_error")
