"""docs/frameworks/smolagents.md's snippet, run as written: a live run it wires is judged and stored."""

from __future__ import annotations

from .harness import captured_statuses, run_page_snippet, stored_statuses


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    store = tmp_path / "results.db"
    wired = run_page_snippet("smolagents", store, monkeypatch)
    from .live_smolagents import unknown_tool

    unknown_tool()
    wired["provider"].shutdown()
    assert stored_statuses(store) == captured_statuses("smolagents", "unknown_tool")
