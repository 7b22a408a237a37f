"""docs/frameworks/openai_agents_guardrails.md's snippet, run as written: a live run it wires is
judged, stored and exported."""

from __future__ import annotations

import asyncio

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("openai_agents_guardrails", tmp_path / "results.db", monkeypatch)
    from .live_openai_agents_guardrails import single_tool

    with cc.ScriptedOpenAI() as server:
        asyncio.run(single_tool(server))
    assert_page_judged_as_captured(page, "openai_agents_guardrails", "single_tool")
