"""docs/frameworks/haystack.md's snippet (openinference-instrumentation-haystack), run as written:
a standalone Haystack ``Agent`` on ``OpenAIChatGenerator`` and the capture's scripted model
(tests/capture/haystack/capture.py's single_tool), judged, stored and exported as the captured
haystack single_tool scenario (a run found from the trace's structure, ``NOT_EVALUATED``: no
span records a tool execution)."""

from __future__ import annotations

import os

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

# before haystack is imported (the snippet imports it): nothing may leave this machine
os.environ.update(HAYSTACK_TELEMETRY_ENABLED="False")


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("haystack", tmp_path / "results.db", monkeypatch)
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage
    from haystack.tools import tool
    from haystack.utils import Secret

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 10, "b": 5}, "call_multiply_1")]),
                      cc.reply("10 times 5 is 50."))
        generator = OpenAIChatGenerator(model=server.model, api_base_url=server.base_url,
                                        api_key=Secret.from_token("scripted-no-key"), max_retries=0)
        agent = Agent(chat_generator=generator, tools=[multiply, add],
                      system_prompt="You are a helpful assistant. Use the tools.")
        agent.run(messages=[ChatMessage.from_user("What is 10 times 5?")])
        assert server.left() == 0, server.left()
    assert_page_judged_as_captured(page, "haystack", "single_tool")
