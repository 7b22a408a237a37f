"""Guesses the spans leave: outcomes they leave open (``Attempt.could_be``): a call nothing
answered may have been cut off by a limit, or be held for a decision that may yet reject it; an error span whose arguments did not parse may
be a refusal. The verdict says only what every reading agrees on; a check that a reading
would change is not evaluated, naming the call. And a run no span names (called after its
span) leaves unknown whose calls are whose: the per-agent checks are not judged on it."""

from __future__ import annotations

from dataclasses import replace
from itertools import count
from pathlib import Path

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import DEFAULT_EXPECTATION, Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.matcher.undecided import MAX_OPEN
from otel_reliability.model import ERROR, NOT_EVALUATED, OK, PENDING, REFUSED, Attempt, Run
from otel_reliability.sources import read_telemetry

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
_clock = count(1)


def call(tool: str, outcome: str = OK, could_be: str | None = None) -> Attempt:
    return Attempt(tool, {}, outcome, "solo", ("solo",), start_ns=next(_clock), could_be=could_be)


def run_of(*attempts: Attempt) -> Run:
    return Run(trace_id=1, span_id=2, agent="solo", span_name="invoke_agent solo", start_ns=0, end_ns=0, own_attempts=list(attempts))


CUT_OFF = call("add", PENDING, could_be=REFUSED)  # unanswered: held, or cut off by a limit
UNPARSED = call("multiply", ERROR, could_be=REFUSED)  # failed with arguments that did not parse

SCENARIOS = [
    # (what, attempts, expectation, status, undecided check named, or None)
    ("fail_on refused cannot tell a cut-off call from a held one", [call("multiply"), CUT_OFF], DEFAULT_EXPECTATION, NOT_EVALUATED, "the policies"),
    ("a call with no other reading passes the default", [call("multiply"), call("add")], DEFAULT_EXPECTATION, "PASSED", None),
    ("a call limit holds whichever it was", [call("multiply"), CUT_OFF], Expectation(name="x", max_tool_calls=2), "PASSED", None),
    ("fail_on error and refused fails either way", [UNPARSED, call("multiply")], DEFAULT_EXPECTATION, "FAILED", None),
    ("fail_on error alone depends on it", [UNPARSED, call("multiply")], Expectation(name="x", fail_on=["error"]), NOT_EVALUATED, "the policies"),
    ("an expected call with no clean execution is missing either way", [CUT_OFF], Expectation(name="x", expected_tool_calls=["add"]), "FAILED", None),
    ("another failing check still fails the run", [CUT_OFF, call("rm")], Expectation(name="x", forbidden_tools=["rm"], fail_on=["refused"]), "FAILED", None),
]


@pytest.mark.parametrize(("what", "attempts", "expectation", "status", "undecided"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_a_verdict_says_only_what_every_reading_of_an_open_outcome_agrees_on(what, attempts, expectation, status, undecided):
    verdict = evaluate(run_of(*attempts), expectation)
    assert verdict.eval_status == status
    named = [c for c in verdict.unevaluated_checks if "the spans cannot tell" in c]
    if undecided is None:
        assert named == []
    else:
        assert len(named) == 1 and named[0].startswith(undecided)
        open_ = next(a for a in attempts if a.could_be)
        assert f"{open_.tool} was {open_.outcome} or {open_.could_be}" in named[0]


def test_past_the_bound_of_open_outcomes_every_counting_check_is_undecided():
    attempts = [replace(CUT_OFF, start_ns=next(_clock)) for _ in range(MAX_OPEN + 1)]
    verdict = evaluate(run_of(*attempts), Expectation(name="x", max_tool_calls=99))
    assert verdict.eval_status == NOT_EVALUATED and verdict.score == 1.0


CAPTURED = [
    # (trace, tool, outcome, other reading, default verdict)
    ("agent_framework/blocked_tool_call_limit", "add", PENDING, REFUSED, NOT_EVALUATED),
    ("semantic_kernel/blocked_tool_call_limit", "MathPlugin-multiply", PENDING, REFUSED, NOT_EVALUATED),
    ("mcp_openai_agents/invalid_arguments_json", "multiply", ERROR, REFUSED, "FAILED"),
    ("mcp_pydantic_ai/invalid_arguments", "multiply", ERROR, REFUSED, "FAILED"),
]


@pytest.mark.parametrize(("trace", "tool", "outcome", "other", "status"), CAPTURED, ids=[c[0] for c in CAPTURED])
def test_captured_calls_the_spans_leave_open_are_read_both_ways(trace, tool, outcome, other, status):
    logs = CORPUS / f"{trace}.logs.json"  # content some frameworks record only in log records
    results = judge_spans(Engine(), read_telemetry(CORPUS / f"{trace}.json").spans, read_telemetry(logs).logs if logs.exists() else ())
    (result,) = results
    opened = [a for a in result.verdict.chain if a.could_be is not None]
    assert [(a.tool, a.outcome, a.could_be) for a in opened] == [(tool, outcome, other)]
    assert result.verdict.eval_status == status


def test_a_call_held_for_a_decision_may_yet_be_refused():
    """pydantic-ai's deferred tool, its run cut where it waits for the decision: one pending call
    (the model's request and the span that held it), which a rejection would make refused."""
    spans = read_telemetry(CORPUS / "mcp_pydantic_ai" / "approval_approved.json").spans
    deferral = next(s for s in spans if "pydantic_ai.tool.deferral.name" in s.attributes)
    paused = [s for s in spans if s.parent_id == 0 or s.start_ns <= deferral.end_ns]
    (result,) = judge_spans(Engine(), paused, ())
    assert [(a.tool, a.outcome, a.could_be) for a in result.verdict.chain] == [("delete_file", PENDING, REFUSED)]
    assert result.verdict.eval_status == NOT_EVALUATED


def run_named_after_its_span(*attempts: Attempt) -> Run:
    run = run_of(*attempts)
    run.agent, run.agent_named = "workflow.run", False
    return run


BY_AGENT = [
    # (what, run, expected by agent, status)
    ("a shortfall where a run names no agent is not told", run_named_after_its_span(call("add")), {"calculator": ["add"]}, NOT_EVALUATED),
    ("a shortfall where every run is named fails", run_of(call("add")), {"calculator": ["add"]}, "FAILED"),
    ("a pair the named calls satisfy passes", run_of(call("add")), {"solo": ["add"]}, "PASSED"),
]


@pytest.mark.parametrize(("what", "run", "by_agent", "status"), BY_AGENT, ids=[b[0] for b in BY_AGENT])
def test_calls_by_agent_are_not_judged_on_a_run_no_span_names(what, run, by_agent, status):
    verdict = evaluate(run, Expectation(name="x", expected_tool_calls_by_agent=by_agent))
    assert verdict.eval_status == status
    if status == NOT_EVALUATED:
        assert verdict.missing_tool_calls == [] and "workflow.run" in verdict.unevaluated_checks[0]
