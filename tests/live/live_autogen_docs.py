"""docs/frameworks/autogen.md's snippet, run as written: a live run it wires is judged, stored
and exported."""

from __future__ import annotations

import asyncio

from .harness import assert_page_judged_as_captured, run_page_snippet


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("autogen", tmp_path / "results.db", monkeypatch)  # sets the global provider first
    from .live_autogen import tool_error

    asyncio.run(tool_error())
    assert_page_judged_as_captured(page, "autogen", "tool_error")
