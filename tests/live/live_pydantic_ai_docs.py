"""docs/frameworks/pydantic_ai.md's snippet, run as written: a live run it wires is judged,
stored and exported. pydantic-ai is in the main .venv (the test extra), so this runs there, with
tests/test_live_pydantic_ai.py's scripted ``FunctionModel``."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("pydantic_ai", tmp_path / "results.db", monkeypatch)  # instruments every agent
    from pydantic_ai import Agent, ModelRetry

    from tests.test_live_pydantic_ai import call, scripted, text

    # the captured error_retry scenario: divide(b=0) raises ModelRetry, the retry with b=2 runs
    agent = Agent(
        scripted(call("divide", {"a": 10, "b": 0}, "call_div_1"), call("divide", {"a": 10, "b": 2}, "call_div_2"),
                 text("10 / 2 = 5")),
        name="calculator",
    )

    @agent.tool_plain(retries=2)
    def divide(a: float, b: float) -> float:
        if b == 0:
            raise ModelRetry("b must not be zero")
        return a / b

    agent.run_sync("Divide 10 by 0, or by something sensible")
    assert_page_judged_as_captured(page, "pydantic_ai", "error_retry")
