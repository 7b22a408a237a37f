"""docs/frameworks/openai_agents_guardrails.md's snippet, run as written: a live run it wires is
judged and stored."""

from __future__ import annotations

import asyncio

from .harness import captured_statuses, run_page_snippet, stored_statuses

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    store = tmp_path / "results.db"
    wired = run_page_snippet("openai_agents_guardrails", store, monkeypatch)
    from .live_openai_agents_guardrails import single_tool

    with cc.ScriptedOpenAI() as server:
        asyncio.run(single_tool(server))
    wired["provider"].shutdown()
    assert stored_statuses(store) == captured_statuses("openai_agents_guardrails", "single_tool")
