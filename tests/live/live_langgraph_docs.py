"""docs/frameworks/langgraph.md's snippet, run as written: a ``create_react_agent`` on the
langgraph_subagents capture's scripted chat model, in that capture's venv
(.venv-live-langgraph_subagents), judged, stored and exported as the captured single_tool."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet
from .live_langgraph_subagents_docs import calls, say, scripted


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("langgraph", tmp_path / "results.db", monkeypatch)
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    agent = create_react_agent(scripted(calls(("multiply", {"a": 10, "b": 5}, "call_mul_1")), say("50")), [multiply],
                               name="calculator")
    agent.invoke({"messages": [("user", "What is 10 times 5?")]})
    assert_page_judged_as_captured(page, "langgraph", "single_tool")
