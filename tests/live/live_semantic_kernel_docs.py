"""docs/frameworks/semantic_kernel.md's snippet, run as written (it switches SK's diagnostics on,
so it runs before ``semantic_kernel`` is imported): a ``ChatCompletionAgent`` with a kernel-function
plugin on the capture's scripted model (tests/capture/semantic_kernel/capture.py), judged, stored
and exported as the captured unknown_tool scenario. The unknown tool leaves no span: its request is
only in SK's ``gen_ai.choice`` log record, so the verdict needs the page's logging wiring."""

from __future__ import annotations

import asyncio
from typing import Annotated

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("semantic_kernel", tmp_path / "results.db", monkeypatch)
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    class MathPlugin:
        @kernel_function(description="Multiply two integers.")
        def multiply(self, a: Annotated[int, "the first factor"], b: Annotated[int, "the second factor"]) -> int:
            return a * b

    with cc.ScriptedOpenAI() as server:  # the captured unknown_tool scenario
        server.script(
            cc.reply(tool_calls=[cc.tool_call("SystemPlugin-format_disk", {"drive": "C:"}, "call_format_disk_1")]),
            cc.reply(tool_calls=[cc.tool_call("MathPlugin-multiply", {"a": 6, "b": 7}, "call_multiply_1")]),
            cc.reply("42"),
        )
        client = AsyncOpenAI(base_url=server.base_url, api_key="scripted-no-key", max_retries=0)
        calculator = ChatCompletionAgent(
            name="calculator", instructions="You are the calculator.",
            service=OpenAIChatCompletion(ai_model_id=server.model, async_client=client),
            plugins=[MathPlugin()], function_choice_behavior=FunctionChoiceBehavior.Auto(),
        )
        asyncio.run(calculator.get_response(messages="Format the disk, then multiply 6 by 7"))
        assert server.left() == 0, "the scripted model was asked for every turn"
    assert_page_judged_as_captured(page, "semantic_kernel", "unknown_tool")
