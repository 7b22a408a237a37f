"""docs/frameworks/openai_v2.md's snippet, run as written (default mode: content only in log
records): the capture's tool loop (tests/capture/openai_v2/tool_loop.py) on the real ``openai``
client and the scripted model, its spans and log records on the page's providers. The call the
loop refuses is known from the log records alone, so the verdict needs the page's logs wiring."""

from __future__ import annotations

import sys

from .harness import TESTS, assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

sys.path.insert(0, str(TESTS / "capture" / "openai_v2"))  # tool_loop: the app's agent loop


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")  # as the page says
    page = run_page_snippet("openai_v2", tmp_path / "results.db", monkeypatch)
    from openai import OpenAI
    from opentelemetry.util.genai.handler import TelemetryHandler
    from tool_loop import GenAISpans, Tool, ToolLoopAgent

    spans = GenAISpans(TelemetryHandler(tracer_provider=page.namespace["provider"], logger_provider=page.namespace["logs"]))
    multiply = Tool("multiply", "Multiply two integers.", {"a": "integer", "b": "integer"}, lambda ctx, a, b: a * b)
    with cc.ScriptedOpenAI() as server:  # the captured unknown_tool scenario
        server.script(cc.reply(tool_calls=[cc.tool_call("get_stock_price", {"symbol": "ACME"}, "call_stock_1")]),
                      cc.reply("I have no stock tool."))
        client = OpenAI(base_url=server.base_url, api_key="scripted", max_retries=0)
        ToolLoopAgent("calculator", client, spans, [multiply]).run("Price of ACME?")
    assert_page_judged_as_captured(page, "openai_v2", "unknown_tool")
