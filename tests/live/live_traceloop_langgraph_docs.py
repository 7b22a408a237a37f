"""docs/frameworks/traceloop_langgraph.md's snippet, run as written: a langchain ``create_agent``
on ``ChatOpenAI`` and the capture's scripted model (tests/capture/traceloop_langgraph/capture.py),
judged, stored and exported as the captured unknown_tool (the request is in the model span's
traceloop content, the tool never ran)."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("traceloop_langgraph", tmp_path / "results.db", monkeypatch)
    from langchain.agents import create_agent
    from langchain.tools import tool
    from langchain_openai import ChatOpenAI

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("get_stock_price", {"symbol": "ACME"}, "call_stock_1")]),
                      cc.reply("I have no stock tool."))
        model = ChatOpenAI(model="scripted-model", base_url=server.base_url, api_key="scripted", max_retries=0)
        create_agent(model, tools=[multiply], name="calculator").invoke({"messages": [{"role": "user", "content": "Price of ACME?"}]})
    assert_page_judged_as_captured(page, "traceloop_langgraph", "unknown_tool")
