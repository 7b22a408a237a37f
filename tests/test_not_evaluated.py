"""Where the spans lack what a check needs, the verdict says NOT_EVALUATED and why — never a
pass or a failure by default (SPEC §3 "Never fabricate", §5.2 "Not evaluable", §10 exit 3)."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_reliability.cli import main
from otel_reliability.emitters.metrics import ReliabilityMetrics
from otel_reliability.emitters.span_attributes import evaluation_event, verdict_attributes
from otel_reliability.expectations import Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, OK, Attempt, Run
from otel_reliability.reputation.evidence import run_evidence
from otel_reliability.results import RunResult

from .corpus import CORPUS

NOT_CAPTURED = "arguments of multiply not captured: enable content capture"
UNTIMED = "order not evaluated: the tool calls carry no start times to order them by"


def call(tool: str, arguments=None, outcome: str = OK, start_ns: int = 1) -> Attempt:
    """An attempt; ``arguments=None`` stands for arguments no span recorded."""
    return Attempt(tool, arguments or {}, outcome, "calc", ("calc",), start_ns=start_ns, arguments_captured=arguments is not None)


def verdict_of(expectation: Expectation, *attempts: Attempt):
    run = Run(1, 2, "calc", "invoke_agent calc", 0, 9, own_attempts=list(attempts))
    return evaluate(run, expectation)


MULTIPLY_10 = Expectation(name="args", expected_tool_call_arguments={"multiply": {"a": 10}})
ORDERED = Expectation(name="ordered", order="exact", expected_chain=["search", "multiply"])

SCENARIOS = {
    "arguments_not_captured_are_not_evaluated": (MULTIPLY_10, [call("multiply")], "NOT_EVALUATED", [NOT_CAPTURED]),
    "captured_empty_arguments_fail": (MULTIPLY_10, [call("multiply", {})], "FAILED", []),
    "captured_wrong_arguments_fail": (MULTIPLY_10, [call("multiply", {"a": 11})], "FAILED", []),
    "one_captured_call_that_matches_passes": (
        MULTIPLY_10, [call("multiply"), call("multiply", {"a": 10}, start_ns=2)], "PASSED", []
    ),
    "captured_mismatch_beside_an_uncaptured_call_is_not_evaluated": (
        MULTIPLY_10, [call("multiply", {"a": 11}), call("multiply", start_ns=2)], "NOT_EVALUATED", [NOT_CAPTURED]
    ),
    "ignore_mode_needs_no_arguments": (
        Expectation(name="i", expected_tool_call_arguments={"multiply": {"a": 10}}, argument_match="ignore"),
        [call("multiply")], "PASSED", [],
    ),
    "an_uncaptured_call_that_errored_gives_a_plain_failure": (
        MULTIPLY_10, [call("multiply", outcome=ERROR)], "FAILED", []
    ),
    "a_failed_check_beats_an_unevaluated_one": (
        Expectation(name="both", expected_tool_calls=["multiply", "add"], expected_tool_call_arguments={"multiply": {"a": 10}}),
        [call("multiply")], "FAILED", [NOT_CAPTURED],
    ),
    "order_without_start_times_is_not_evaluated": (
        ORDERED, [call("search", {}, start_ns=0), call("multiply", {}, start_ns=0)], "NOT_EVALUATED", [UNTIMED]
    ),
    "order_with_start_times_is_judged": (
        ORDERED, [call("multiply", {}, start_ns=1), call("search", {}, start_ns=2)], "FAILED", []
    ),
}


@pytest.mark.parametrize("expectation, attempts, status, unevaluated", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_a_check_the_spans_cannot_support_is_not_evaluated(expectation, attempts, status, unevaluated):
    verdict = verdict_of(expectation, *attempts)
    assert (verdict.eval_status, verdict.unevaluated_checks) == (status, unevaluated)


def test_the_score_counts_only_the_checks_that_could_be_judged():
    expectation = Expectation(name="two", expected_tool_calls=["multiply"], expected_tool_call_arguments={"multiply": {"a": 10}})
    verdict = verdict_of(expectation, call("multiply"))
    assert (verdict.eval_status, verdict.score, verdict.failed_argument_checks, verdict.passed_argument_checks) == (
        "NOT_EVALUATED", 1.0, [], []
    )


def test_the_run_span_and_the_evaluation_event_say_not_evaluated():
    verdict = verdict_of(MULTIPLY_10, call("multiply"))
    result = RunResult(1, 2, "calc", "args", verdict, 0.0)
    attributes = verdict_attributes(result)
    _, event = evaluation_event(result)
    assert attributes["reliability.status"] == "NOT_EVALUATED"
    assert attributes["reliability.unevaluated_checks"] == (NOT_CAPTURED,)
    assert event["gen_ai.evaluation.score.label"] == "not_evaluated"
    assert event["gen_ai.evaluation.explanation"] == f"Expectation 'args' not evaluated: 1 tool call; {NOT_CAPTURED}."


def test_an_unevaluated_argument_check_gives_no_chain_integrity_evidence():
    expectation = Expectation(name="args", expected_tool_calls=["multiply"], expected_tool_call_arguments={"multiply": {"a": 10}})
    result = RunResult(1, 2, "calc", "args", verdict_of(expectation, call("multiply")), 0.0)
    sources = [(e.dimension, e.source, e.passed) for e in run_evidence(result, expectation)]
    assert sources == [("isnad", "tool_outcomes", True), ("adalah", "refusals", True)]


def test_an_unevaluated_order_gives_no_order_audit_but_keeps_the_name_checks():
    expectation = Expectation(name="o", expected_tool_calls=["search", "multiply"], order="exact", expected_chain=["search", "multiply"])
    untimed = verdict_of(expectation, call("search", {}, start_ns=0), call("multiply", {}, start_ns=0))
    items = run_evidence(RunResult(1, 2, "calc", "o", untimed, 0.0), expectation)
    assert [(e.source, e.passed) for e in items if e.dimension == "isnad"] == [("matcher", True), ("tool_outcomes", True)]


CONTENT_OFF = CORPUS / "openai_v2_latest" / "single_tool_content_off.json"


def run_eval(tmp_path, capsys, expectation: dict, *paths):
    expectations = tmp_path / "e.json"
    expectations.write_text(json.dumps({"expectations": [expectation]}))
    code = main(["eval", *map(str, paths), "--expectations", str(expectations), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_eval_exits_3_when_content_capture_was_off_and_arguments_are_expected(tmp_path, capsys):
    code, document = run_eval(tmp_path, capsys, {"name": "args", "expected_tool_call_arguments": {"multiply": {"a": 10}}}, CONTENT_OFF)
    [result] = document["results"]
    assert code == 3
    assert (result["eval_status"], result["unevaluated_checks"]) == ("NOT_EVALUATED", [NOT_CAPTURED])
    assert document["summary"] == {"runs": 1, "passed": 0, "failed": 0, "not_evaluated": 1}


def test_eval_exits_1_when_another_run_failed(tmp_path, capsys):
    failing = CORPUS / "pydantic_ai" / "single_tool.json"
    code, document = run_eval(
        tmp_path, capsys, {"name": "args", "expected_tool_call_arguments": {"multiply": {"a": 11}}}, CONTENT_OFF, failing
    )
    assert code == 1
    assert document["summary"] == {"runs": 2, "passed": 0, "failed": 1, "not_evaluated": 1}


def test_the_table_names_what_was_not_evaluated(tmp_path, capsys):
    expectations = tmp_path / "e.json"
    expectations.write_text(json.dumps({"expectations": [{"name": "args", "expected_tool_call_arguments": {"multiply": {"a": 10}}}]}))
    report = tmp_path / "report.txt"
    code = main(["eval", str(CONTENT_OFF), "--expectations", str(expectations), "--output", str(report)])
    text = report.read_text()
    assert code == 3
    assert "NOT_EVALUATED" in text and "0 failed, 1 not evaluated" in text
    # each problem on a line of its own below the table, after the run's short trace id
    assert "not evaluated: arguments of multiply not captured: enable content capture" in " ".join(text.split())


def test_evaluations_are_counted_under_the_not_evaluated_status():
    reader = InMemoryMetricReader()
    metrics = ReliabilityMetrics(MeterProvider(metric_readers=[reader]))
    metrics.record(RunResult(1, 2, "calc", "args", verdict_of(MULTIPLY_10, call("multiply")), 0.0))
    [point] = [
        point
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "agent.reliability.evaluations"
        for point in metric.data.data_points
    ]
    assert (point.attributes["reliability.status"], point.value) == ("NOT_EVALUATED", 1)
