"""docs/frameworks/llama_index.md's snippet, run as written: a ``FunctionAgent`` on the real
``OpenAILike`` LLM and the capture's scripted model (tests/capture/llama_index/capture.py),
judged, stored and exported as the captured tool_error scenario."""

# No "from __future__ import annotations": FunctionTool reads the tool's annotations as classes.
import asyncio

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


async def tool_error(server: cc.ScriptedOpenAI) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai_like import OpenAILike

    server.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 0}, "call_div_1")]),
                  cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 2}, "call_div_2")]),
                  cc.reply("10 / 2 = 5"))
    llm = OpenAILike(model=server.model, api_base=server.base_url, api_key="scripted-no-key",
                     is_chat_model=True, is_function_calling_model=True, max_retries=0)
    agent = FunctionAgent(name="calculator", description="the calculator agent", llm=llm,
                          tools=[FunctionTool.from_defaults(fn=divide)])
    await agent.run("Divide 10 by 0, or by something sensible")


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("llama_index", tmp_path / "results.db", monkeypatch)
    with cc.ScriptedOpenAI() as server:
        asyncio.run(tool_error(server))
    assert_page_judged_as_captured(page, "llama_index", "tool_error")
