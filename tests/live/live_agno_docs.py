"""docs/frameworks/agno.md's snippet, run as written: a live run it wires is judged, stored and
exported. agno is in the main .venv (the test extra), so this runs there; the scripted model is
tests/test_live_agno.py's (agno's ``OpenAIChat`` over an ``httpx.MockTransport``)."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("agno", tmp_path / "results.db", monkeypatch)
    from agno.agent import Agent

    from tests.test_live_agno import add, answer, isolated, multiply, scripted_model, tool_calls

    # the captured agent_tool_call_limit: of two calls in one turn, the limit lets the first run
    agent = Agent(
        name="Limited Agent",
        id="limited-agent",
        model=scripted_model(tool_calls(("call_mul_1", "multiply", {"a": 10, "b": 5}), ("call_add_1", "add", {"a": 50, "b": 1})),
                             answer("10 * 5 = 50; I could not run the addition.")),
        tools=[multiply, add],
        tool_call_limit=1,
        telemetry=False,
    )
    isolated(lambda: agent.run("Multiply 10 by 5, then add 1."))
    assert_page_judged_as_captured(page, "agno", "agent_tool_call_limit")
