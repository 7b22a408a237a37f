"""docs/frameworks/autogen.md's snippet, run as written: a live run it wires is judged and stored."""

from __future__ import annotations

import asyncio

from .harness import captured_statuses, run_page_snippet, stored_statuses


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    store = tmp_path / "results.db"
    wired = run_page_snippet("autogen", store, monkeypatch)  # sets the global provider first
    from .live_autogen import tool_error

    asyncio.run(tool_error())
    wired["provider"].shutdown()
    assert stored_statuses(store) == captured_statuses("autogen", "tool_error")
