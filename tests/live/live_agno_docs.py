"""docs/frameworks/agno.md's snippet, run as written: a live run it wires is judged, stored and
exported. agno is in the main .venv (the test extra), so this runs there; the scripted model is
tests/test_live_agno.py's (agno's ``OpenAIChat`` over an ``httpx.MockTransport``)."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("agno", tmp_path / "results.db", monkeypatch)
    from tests.test_live_agno import isolated, tool_call_limit

    # one call runs, the second is refused by the tool-call limit
    isolated(lambda: tool_call_limit().run("Multiply 10 by 5, then add 1."))
    assert_page_judged_as_captured(page, "agno", "agent_tool_call_limit")
