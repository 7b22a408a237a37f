"""docs/frameworks/beeai.md's snippet, run as written: a ``RequirementAgent`` with
``final_answer_as_tool=False`` on beeai's ``OpenAIChatModel`` and the capture's scripted model
(tests/capture/beeai/capture.py), judged, stored and exported as the captured beeai
unknown_tool_auto_choice scenario (the unknown tool ``pending``: its answer names no call id;
then multiply ``ok``)."""

from __future__ import annotations

import asyncio
import os

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

# before beeai (LiteLLM) is imported: LiteLLM would fetch its model price map from the network
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("BEEAI_LOG_LEVEL", "ERROR")


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("beeai", tmp_path / "results.db", monkeypatch)
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.memory import UnconstrainedMemory
    from beeai_framework.tools import tool

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    def call(name: str, arguments: dict, n: int = 1) -> dict:
        return cc.tool_call(name, arguments, f"call_beeai_unknown_tool_auto_choice_{name}_{n}")

    async def unknown_tool_auto_choice() -> None:
        with cc.ScriptedOpenAI() as server:
            server.script(cc.reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                          cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                          cc.reply(content="42"))
            llm = OpenAIChatModel(server.model, base_url=server.base_url, api_key="scripted-no-key",
                                  tool_choice_support={"required", "none", "single", "auto"})
            calculator = RequirementAgent(llm=llm, tools=[multiply], name="calculator", memory=UnconstrainedMemory(),
                                          final_answer_as_tool=False)
            await calculator.run("Format the disk, then multiply 6 by 7")

    asyncio.run(unknown_tool_auto_choice())
    assert_page_judged_as_captured(page, "beeai", "unknown_tool_auto_choice")
