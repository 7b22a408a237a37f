"""The verdict on the run span: reliability.* attributes and the gen_ai.evaluation.result event (SPEC §6)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability.emitters.span_attributes import evaluation_event, verdict_attributes
from otel_reliability.matcher import explain
from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Verdict
from otel_reliability.results import RunResult


def result_with(outcomes: list[str], **verdict_fields) -> RunResult:
    chain = [Attempt(f"tool{i}", {}, outcome, "agent", ("agent",)) for i, outcome in enumerate(outcomes)]
    verdict = Verdict(expectation="case", chain=chain, **{"eval_status": "PASSED", **verdict_fields})
    return RunResult(1, 2, "agent", "case", verdict, 0.0)


@pytest.mark.parametrize(
    ("outcomes", "total", "errored", "refused", "pending"),
    [
        ([], 0, 0, 0, 0),
        ([OK, OK], 2, 0, 0, 0),
        ([OK, ERROR, REFUSED, PENDING, ERROR], 5, 2, 1, 1),
    ],
    ids=["no-calls", "all-ok", "every-outcome"],
)
def test_tool_call_counts_come_from_chain_outcomes(outcomes, total, errored, refused, pending):
    attrs = verdict_attributes(result_with(outcomes))
    assert attrs["reliability.tool_calls.total"] == total
    assert attrs["reliability.tool_calls.errored"] == errored
    assert attrs["reliability.tool_calls.refused"] == refused
    assert attrs["reliability.tool_calls.pending"] == pending


def test_attributes_carry_status_expectation_score_and_string_tuples():
    attrs = verdict_attributes(
        result_with([OK], eval_status="FAILED", score=0.5, missing_tool_calls=["search"], passed_tool_calls=["tool0"])
    )
    assert attrs["reliability.status"] == "FAILED"
    assert attrs["reliability.expectation"] == "case"
    assert attrs["reliability.score"] == 0.5
    assert attrs["reliability.missing_tool_calls"] == ("search",)
    assert attrs["reliability.passed_tool_calls"] == ("tool0",)
    for name in ("failed", "additional"):
        assert attrs[f"reliability.{name}_tool_calls"] == ()
    for name in ("failed_argument_checks", "passed_argument_checks", "order_violations"):
        assert attrs[f"reliability.{name}"] == ()


@pytest.mark.parametrize(
    ("status", "score", "label"),
    [("PASSED", 1.0, "pass"), ("FAILED", 0.25, "fail"), ("FAILED", 0.0, "fail")],
    ids=["passed", "partly-failed", "all-failed"],
)
def test_event_labels_and_scores_the_verdict(status, score, label):
    result = result_with([OK], eval_status=status, score=score)
    name, attrs = evaluation_event(result)
    assert name == "gen_ai.evaluation.result"
    assert attrs == {
        "gen_ai.evaluation.name": "tool_call_reliability",
        "gen_ai.evaluation.score.value": score,
        "gen_ai.evaluation.score.label": label,
        "gen_ai.evaluation.explanation": explain(result.verdict),
    }


def test_sdk_span_accepts_attributes_and_event_unchanged():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = result_with([OK, ERROR], eval_status="FAILED", score=0.5, failed_tool_calls=["tool1"])
    with provider.get_tracer("test").start_as_current_span("invoke_agent agent") as span:
        span.set_attributes(verdict_attributes(result))
        span.add_event(*evaluation_event(result))
    (finished,) = exporter.get_finished_spans()
    assert dict(finished.attributes) == verdict_attributes(result)
    assert finished.events[0].name == "gen_ai.evaluation.result"
    assert dict(finished.events[0].attributes) == evaluation_event(result)[1]
