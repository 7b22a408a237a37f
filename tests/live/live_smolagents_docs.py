"""docs/frameworks/smolagents.md's snippet, run as written: a live run it wires is judged, stored
and exported."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("smolagents", tmp_path / "results.db", monkeypatch)
    from .live_smolagents import unknown_tool

    unknown_tool()
    assert_page_judged_as_captured(page, "smolagents", "unknown_tool")
