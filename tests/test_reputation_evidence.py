"""Evidence from judged runs: which items each dimension gets, from real matcher verdicts.

Each scenario builds a run (attempts with outcomes), judges it with the real matcher
against an expectation, and lists the evidence ``(dimension, source, passed)`` it
yields; details are checked where they carry the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from otel_reliability.expectations import Expectation, ExpectedOutput
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Run
from otel_reliability.reputation.evidence import (
    case_key,
    chain_signature,
    evaluation_evidence,
    run_evidence,
    stability_evidence,
)
from otel_reliability.results import RunResult


def attempt(tool: str, outcome: str = OK, span_id: int | None = None, agent: str = "forecaster") -> Attempt:
    return Attempt(tool, {"city": "Paris"}, outcome, agent, (agent,), span_id=span_id)


def judged(expectation: Expectation, *attempts: Attempt) -> tuple[RunResult, Expectation]:
    chain = list(attempts)
    for i, a in enumerate(chain):
        a.start_ns = i
    run = Run(1, 2, "forecaster", "invoke_agent forecaster", 0, 9, own_attempts=chain)
    verdict = evaluate(run, expectation)
    return RunResult(1, 2, "forecaster", expectation.name, verdict, 0.0), expectation


WEATHER = Expectation(name="weather", expected_tool_calls=["get_weather"])


@dataclass(frozen=True)
class Scenario:
    id: str
    expectation: Expectation
    attempts: tuple[Attempt, ...]
    evidence: list[tuple[str, str, bool]]
    output: str | None = None
    details: dict[str, str] = field(default_factory=dict)  # source -> substring of its detail
    denied: frozenset[int] = frozenset()


SCENARIOS = [
    Scenario(
        "clean_call_passes_chain_and_compliance",
        WEATHER,
        (attempt("get_weather"),),
        [("isnad", "matcher", True), ("isnad", "tool_outcomes", True), ("adalah", "refusals", True)],
        details={"matcher": "expectation 'weather' met: get_weather"},
    ),
    Scenario(
        "missing_expected_tool_breaks_the_chain",
        WEATHER,
        (attempt("search_web"),),
        [("isnad", "matcher", False), ("isnad", "tool_outcomes", True), ("adalah", "refusals", True)],
        details={"matcher": "missing get_weather; unexpected search_web"},
    ),
    Scenario(
        "errored_then_clean_retry_meets_expectation_but_breaks_a_link",
        WEATHER,
        (attempt("get_weather", ERROR), attempt("get_weather")),
        [("isnad", "matcher", True), ("isnad", "tool_outcomes", False), ("adalah", "refusals", True)],
        details={"tool_outcomes": "broken links: get_weather (error)"},
    ),
    Scenario(
        "pending_call_is_a_broken_link",
        Expectation(name="paused", expected_tool_calls=None),
        (attempt("delete_files", PENDING),),
        [("isnad", "tool_outcomes", False), ("adalah", "refusals", True)],
    ),
    Scenario(
        "refused_call_breaks_compliance",
        Expectation(name="guarded", expected_tool_calls=["get_weather"], allow_additional_tool_calls=True),
        (attempt("delete_files", REFUSED), attempt("get_weather")),
        [("isnad", "matcher", True), ("isnad", "tool_outcomes", True), ("adalah", "refusals", False)],
        details={"refusals": "refused: delete_files"},
    ),
    Scenario(
        "tool_outside_allowed_tools_breaks_compliance",
        Expectation(name="allowed", allowed_tools=["get_weather"]),
        (attempt("get_weather"), attempt("search_web")),
        [("isnad", "tool_outcomes", True), ("adalah", "policy:allowed_tools", False), ("adalah", "refusals", True)],
        details={"policy:allowed_tools": "search_web is not in allowed_tools"},
    ),
    Scenario(
        "forbidden_tool_and_call_limit_each_give_an_item",
        Expectation(name="limits", forbidden_tools=["delete_files"], max_tool_calls=1),
        (attempt("get_weather"), attempt("delete_files")),
        [
            ("isnad", "tool_outcomes", True),
            ("adalah", "policy:forbidden_tools", False),
            ("adalah", "policy:max_tool_calls", False),
            ("adalah", "refusals", True),
        ],
    ),
    Scenario(
        "error_policies_are_not_compliance",
        Expectation(name="errors", max_errors=0, fail_on=["error"]),
        (attempt("get_weather", ERROR),),
        [("isnad", "tool_outcomes", False), ("adalah", "refusals", True)],
    ),
    Scenario(
        "order_audit_reports_violations",
        Expectation(name="ordered", expected_tool_calls=["search", "parse"], order="exact", expected_chain=["search", "parse"]),
        (attempt("parse"), attempt("search")),
        [("isnad", "matcher", True), ("isnad", "order_audit", False), ("isnad", "tool_outcomes", True), ("adalah", "refusals", True)],
        details={"order_audit": "step 1: expected search, got parse"},
    ),
    Scenario(
        "expected_output_facts_are_checked_one_by_one",
        Expectation(
            name="facts",
            expected_tool_calls=["get_weather"],
            expected_output=ExpectedOutput(contains=["25°C", "sunny"], regex=[r"\bParis\b"], equals="Paris: 25°C, sunny"),
        ),
        (attempt("get_weather"),),
        [
            ("isnad", "matcher", True),
            ("isnad", "tool_outcomes", True),
            ("adalah", "refusals", True),
            ("sidq", "fact_check", True),
            ("sidq", "fact_check", False),
            ("sidq", "fact_check", True),
            ("sidq", "fact_check", False),
        ],
        output="Paris: 25°C, cloudy",
    ),
    Scenario(
        "facts_without_a_recorded_output_give_no_evidence",
        Expectation(name="facts", expected_output=ExpectedOutput(contains=["25°C"])),
        (),
        [],
        output=None,
    ),
    Scenario(
        "default_expectation_without_tools_gives_no_evidence",
        Expectation(name="default", fail_on=["error", "refused"]),
        (),
        [],
    ),
    Scenario(
        "expecting_no_tools_and_calling_none_is_chain_evidence",
        Expectation(name="chat_only", expected_tool_calls=[]),
        (),
        [("isnad", "matcher", True)],
        details={"matcher": "no tool, as expected"},
    ),
    Scenario(
        "calls_the_access_policy_denied_are_not_held_against_the_agent",
        Expectation(name="guarded", expected_tool_calls=None),
        (attempt("get_weather"), attempt("send_email", ERROR, span_id=77)),
        [("isnad", "tool_outcomes", True), ("adalah", "refusals", True)],
        denied=frozenset({77}),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_run_evidence(scenario: Scenario):
    result, expectation = judged(scenario.expectation, *scenario.attempts)
    evidence = run_evidence(result, expectation, output=scenario.output, denied_span_ids=scenario.denied)
    assert [(e.dimension, e.source, e.passed) for e in evidence] == scenario.evidence
    by_source = {e.source: e.detail for e in evidence}
    for source, text in scenario.details.items():
        assert text in by_source[source], by_source[source]
    assert all(e.confidence == 1.0 for e in evidence)


def test_without_the_expectation_object_chain_checks_are_read_from_the_verdict():
    """Inline expectations (``expect(...)``) reach reputation by name only."""
    result, _ = judged(WEATHER, attempt("search_web"))
    evidence = run_evidence(result, None)
    assert [(e.dimension, e.source, e.passed) for e in evidence] == [
        ("isnad", "matcher", False),
        ("isnad", "tool_outcomes", True),
        ("adalah", "refusals", True),
    ]


def test_fact_confidence_is_applied_to_fact_items():
    expectation = Expectation(name="facts", expected_output=ExpectedOutput(contains=["25°C"]))
    result, _ = judged(expectation)
    [fact] = run_evidence(result, expectation, output="25°C", fact_confidence=0.9)
    assert (fact.dimension, fact.passed, fact.confidence) == ("sidq", True, 0.9)


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"gen_ai.evaluation.name": "judge", "gen_ai.evaluation.score.label": "pass"}, ("evaluation:judge", True)),
        ({"gen_ai.evaluation.name": "judge", "gen_ai.evaluation.score.label": "Incorrect"}, ("evaluation:judge", False)),
        ({"gen_ai.evaluation.name": "faithfulness", "gen_ai.evaluation.score.value": 0.5}, ("evaluation:faithfulness", True)),
        ({"gen_ai.evaluation.name": "faithfulness", "gen_ai.evaluation.score.value": 0.49}, ("evaluation:faithfulness", False)),
        # The label wins over the value when it is readable.
        ({"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "fail", "gen_ai.evaluation.score.value": 0.9}, ("evaluation:j", False)),
        ({"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "meh", "gen_ai.evaluation.score.value": 0.9}, ("evaluation:j", True)),
        ({"gen_ai.evaluation.name": "j", "gen_ai.evaluation.score.label": "meh"}, None),
        ({"gen_ai.evaluation.name": "tool_call_reliability", "gen_ai.evaluation.score.label": "pass"}, None),
    ],
    ids=["pass_label", "fail_label", "value_at_threshold", "value_below", "label_beats_value", "unknown_label_falls_back_to_value", "unreadable", "our_own_event"],
)
def test_evaluation_events_from_other_evaluators(attributes, expected):
    item = evaluation_evidence(attributes, confidence=0.7)
    if expected is None:
        assert item is None
    else:
        assert (item.source, item.passed, item.dimension, item.confidence) == (*expected, "sidq", 0.7)


def test_chain_signature_names_agent_tool_and_outcome_in_order():
    chain = [attempt("search"), attempt("lookup", ERROR, agent="researcher"), attempt("summarize")]
    assert chain_signature(chain) == "forecaster/search:ok > researcher/lookup:error > forecaster/summarize:ok"
    assert chain_signature([]) == "(no tool calls)"


@pytest.mark.parametrize(
    ("previous", "current", "passed"),
    [(None, "a/x:ok", None), ("a/x:ok", "a/x:ok", True), ("a/x:ok", "a/x:error", False), ("a/x:ok > a/y:ok", "a/y:ok > a/x:ok", False)],
    ids=["first_run_has_nothing_to_compare", "same_chain", "outcome_changed", "order_changed"],
)
def test_stability_compares_with_the_previous_run_of_the_case(previous, current, passed):
    item = stability_evidence("weather", previous, current)
    assert (None if item is None else item.passed) == passed
    if item is not None:
        assert item.dimension == "dabt"


def test_runs_under_the_default_expectation_are_not_a_case():
    result, _ = judged(Expectation(name="default"))
    assert case_key(result) is None
    result, _ = judged(WEATHER, attempt("get_weather"))
    assert case_key(result) == "weather"
