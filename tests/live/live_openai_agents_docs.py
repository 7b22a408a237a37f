"""docs/frameworks/openai_agents.md's snippet, run as written: a live run it wires is judged,
stored and exported. It runs in the openai-agents guardrails capture's venv
(.venv-live-openai_agents_guardrails), with that capture's scripted model, as the captured
openai_agents error_retry scenario."""

from __future__ import annotations

import asyncio

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("openai_agents", tmp_path / "results.db", monkeypatch)
    from agents import Runner, function_tool

    from .live_openai_agents_guardrails import agent

    @function_tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b  # b=0 raises: the SDK hands the model the error, and it retries

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 0}, "call_div_1")]),
                      cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 2}, "call_div_2")]),
                      cc.reply("10 / 2 = 5"))
        asyncio.run(Runner.run(agent(server, "calculator", [divide]), "Divide 10 by 0, or by something sensible"))
    assert_page_judged_as_captured(page, "openai_agents", "error_retry")
