"""docs/frameworks/crewai.md's snippet (the instrumentation's event-listener mode), run as
written: a one-agent ``Crew`` on CrewAI's ``LLM`` and the capture's scripted model
(tests/capture/crewai/capture.py), judged, stored and exported as the captured
crewai_event_listener tool_error scenario."""

from __future__ import annotations

import os

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

# before crewai is imported: nothing may leave this machine
os.environ.update(CREWAI_DISABLE_TELEMETRY="true", CREWAI_DISABLE_TRACKING="true", CREWAI_TRACING_ENABLED="false")


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("crewai", tmp_path / "results.db", monkeypatch)
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    @tool("divide")
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 0}, "call_div_1")]),
                      cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 2}, "call_div_2")]),
                      cc.reply("10 / 2 = 5"))
        llm = LLM(model=f"openai/{server.model}", base_url=server.base_url, api_key="scripted-no-key", max_retries=0)
        calculator = Agent(role="calculator", goal="answer as the calculator", backstory="You are the calculator.",
                           llm=llm, tools=[divide], verbose=False)
        job = Task(description="Divide 10 by 0, or by something sensible", expected_output="a short answer", agent=calculator)
        Crew(agents=[calculator], tasks=[job], verbose=False).kickoff()
    assert_page_judged_as_captured(page, "crewai_event_listener", "tool_error")
