"""docs/frameworks/logfire.md's snippet, run as written: ``logfire.instrument_openai_agents()``
over an Agents SDK run on the capture's scripted model is judged and stored as the captured
logfire_openai_agents tool_error scenario (``fetch_url`` raises: ``FAILED``). It runs in the
Logfire capture's venv (.venv-live-logfire); the program ends with ``logfire.shutdown()``. No
OTLP endpoint is set (Logfire would export there itself), and with no ``OPENAI_API_KEY`` the
SDK's own exporter to OpenAI sends nothing."""

from __future__ import annotations

import asyncio

from .harness import assert_page_stored_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for variable in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(variable, raising=False)
    page = run_page_snippet("logfire", tmp_path / "results.db", monkeypatch, endpoint=None,
                            ends=lambda namespace: namespace["logfire"].shutdown())
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI

    @function_tool
    def fetch_url(url: str) -> str:
        """Fetch a URL (the host is down)."""
        raise ConnectionError("network unreachable")

    with cc.ScriptedOpenAI() as model:
        model.script(cc.reply(tool_calls=[cc.tool_call("fetch_url", {"url": "https://primary.example/notes"}, "call_fetch_1")]),
                     cc.reply("The page could not be fetched: the host is unreachable."))
        client = AsyncOpenAI(base_url=model.base_url, api_key="scripted-no-key", max_retries=0)
        fetcher = Agent(name="fetcher", instructions="Use the tools.", tools=[fetch_url],
                        model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client))
        asyncio.run(Runner.run(fetcher, "Fetch https://primary.example/notes"))
        assert model.left() == 0, model.left()
    assert_page_stored_as_captured(page, "logfire_openai_agents", "tool_error")
