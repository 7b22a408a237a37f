"""ReliabilityMetrics on a real SDK MeterProvider read through an InMemoryMetricReader (SPEC §6)."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_reliability.emitters.metrics import ReliabilityMetrics
from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Verdict
from otel_reliability.results import RunResult


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


def metrics_on(reader: InMemoryMetricReader, max_label_values: int = 100) -> ReliabilityMetrics:
    return ReliabilityMetrics(MeterProvider(metric_readers=[reader]), max_label_values=max_label_values)


def points(reader: InMemoryMetricReader, name: str) -> dict[frozenset, object]:
    """Data points of one metric keyed by their attributes: sums as values, histograms as points."""
    found: dict[frozenset, object] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        found[frozenset(point.attributes.items())] = getattr(point, "value", point)
    return found


def labels(**attributes: str) -> frozenset:
    return frozenset({key.replace("__", "."): value for key, value in attributes.items()}.items())


def run(agent: str, attempts: list[tuple[str, str, str]], expectation: str = "case", **verdict_fields) -> RunResult:
    chain = [Attempt(tool, {}, outcome, caller, (agent, caller)) for caller, tool, outcome in attempts]
    verdict = Verdict(expectation=expectation, chain=chain, **{"eval_status": "PASSED", **verdict_fields})
    return RunResult(1, 2, agent, expectation, verdict, 0.0)


def test_evaluations_count_by_agent_status_and_expectation(reader):
    m = metrics_on(reader)
    m.record(run("calc", [], eval_status="PASSED"))
    m.record(run("calc", [], eval_status="PASSED"))
    m.record(run("calc", [], eval_status="FAILED", score=0.0))
    m.record(run("web", [], expectation="browse"))
    assert points(reader, "agent.reliability.evaluations") == {
        labels(gen_ai__agent__name="calc", reliability__status="PASSED", reliability__expectation="case"): 2,
        labels(gen_ai__agent__name="calc", reliability__status="FAILED", reliability__expectation="case"): 1,
        labels(gen_ai__agent__name="web", reliability__status="PASSED", reliability__expectation="browse"): 1,
    }


@pytest.mark.parametrize(
    ("attempts", "verdict_fields", "outcomes", "unexpected"),
    [
        (
            [("calc", "add", OK), ("calc", "add", OK), ("calc", "div", ERROR)],
            {},
            {("calc", "add", "ok"): 2, ("calc", "div", "error"): 1},
            {},
        ),
        (
            [("calc", "rm", REFUSED), ("calc", "ask", PENDING)],
            {},
            {("calc", "rm", "refused"): 1, ("calc", "ask", "pending"): 1},
            {},
        ),
        (
            [("calc", "add", OK), ("calc", "shell", ERROR)],
            {"failed_tool_calls": ["shell"]},
            {("calc", "add", "ok"): 1, ("calc", "shell", "error"): 1},
            {("calc", "shell"): 1},
        ),
        (
            [("team", "search", OK), ("writer", "draft", OK)],
            {"additional_tool_calls": ["draft"]},
            {("team", "search", "ok"): 1, ("writer", "draft", "ok"): 1},
            {("writer", "draft"): 1},
        ),
        (
            # the matcher lists a tool that was only refused once, however often it was asked for
            [("calc", "format_disk", REFUSED), ("calc", "format_disk", REFUSED), ("calc", "add", OK)],
            {"failed_tool_calls": ["format_disk"]},
            {("calc", "format_disk", "refused"): 2, ("calc", "add", "ok"): 1},
            {("calc", "format_disk"): 2},
        ),
        (
            [("team", "lookup", OK), ("member", "lookup", ERROR)],
            {"failed_tool_calls": ["lookup", "lookup"]},
            {("team", "lookup", "ok"): 1, ("member", "lookup", "error"): 1},
            {("team", "lookup"): 1, ("member", "lookup"): 1},
        ),
        (
            [],
            {"failed_tool_calls": ["ghost"]},
            {},
            {},
        ),
    ],
    ids=[
        "each-attempt-once-by-outcome",
        "refused-and-pending",
        "strict-unexpected-counted-beside-its-outcome-not-as-one",
        "lenient-additional-counted-for-the-member-that-called",
        "every-refused-attempt-of-an-unexpected-tool-counts",
        "each-caller-of-an-unexpected-tool-counted-for-its-own-calls",
        "a-name-without-an-attempt-counts-no-call",
    ],
)
def test_tool_calls_count_each_attempt_under_one_outcome_and_unexpected_apart(
    reader, attempts, verdict_fields, outcomes, unexpected
):
    agent = attempts[0][0] if attempts else "team"
    metrics_on(reader).record(run(agent, attempts, **verdict_fields))
    assert points(reader, "agent.reliability.tool_calls") == {
        labels(gen_ai__agent__name=a, gen_ai__tool__name=t, reliability__outcome=o): n for (a, t, o), n in outcomes.items()
    }
    assert points(reader, "agent.reliability.tool_calls.unexpected") == {
        labels(gen_ai__agent__name=a, gen_ai__tool__name=t): n for (a, t), n in unexpected.items()
    }


def test_score_histogram_uses_zero_to_one_buckets(reader):
    m = metrics_on(reader)
    for score in (1.0, 1.0, 0.5, 0.0):
        m.record(run("calc", [], score=score))
    (point,) = points(reader, "agent.reliability.score").values()
    assert point.explicit_bounds == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert point.count == 4 and point.sum == 2.5
    assert point.bucket_counts[0] == 1  # 0.0
    assert point.bucket_counts[5] == 1  # 0.5 in (0.4, 0.5]
    assert point.bucket_counts[10] == 2  # 1.0 in (0.9, 1.0]


@pytest.mark.parametrize(
    ("limit", "agents", "expected"),
    [
        (3, ["a", "b", "c"], {"a": 1, "b": 1, "c": 1}),
        (2, ["a", "b", "c", "d", "a"], {"a": 2, "b": 1, "_other": 2}),
        (1, ["a", "b", "c"], {"a": 1, "_other": 2}),
    ],
    ids=["at-the-cap", "over-the-cap-known-values-keep-their-label", "cap-of-one"],
)
def test_agent_label_overflows_to_other(reader, limit, agents, expected):
    m = metrics_on(reader, max_label_values=limit)
    for agent in agents:
        m.record(run(agent, []))
    counted = {dict(key)["gen_ai.agent.name"]: value for key, value in points(reader, "agent.reliability.evaluations").items()}
    assert counted == expected


def test_each_label_key_has_its_own_cap(reader):
    m = metrics_on(reader, max_label_values=2)
    m.record(run("a", [("a", "t1", OK), ("a", "t2", OK), ("a", "t3", OK)], expectation="e1"))
    m.record(run("b", [], expectation="e2"))
    m.record(run("c", [], expectation="e3"))
    tools = {dict(key)["gen_ai.tool.name"] for key in points(reader, "agent.reliability.tool_calls")}
    evaluations = points(reader, "agent.reliability.evaluations")
    assert tools == {"t1", "t2", "_other"}
    assert {dict(key)["reliability.expectation"] for key in evaluations} == {"e1", "e2", "_other"}
    assert {dict(key)["gen_ai.agent.name"] for key in evaluations} == {"a", "b", "_other"}


def test_self_observability_instruments(reader):
    m = metrics_on(reader)
    buffered = [7]
    m.register_buffered(lambda: buffered[0])
    m.register_buffered_bytes(lambda: 4096)
    m.traces_dropped(1, "max_bytes")
    m.traces_dropped(2, "max_bytes")
    m.traces_dropped(1, "ttl_expired_unjudged")
    m.paused_runs_dropped(1, "max_paused_runs")
    m.refused("soft_byte_limit")
    m.late_evaluation()
    m.spans_dropped(5, "buffer_full")
    m.spans_dropped(1, "malformed")
    assert points(reader, "agent.reliability.traces.buffered") == {frozenset(): 7}
    assert points(reader, "agent.reliability.buffer.size") == {frozenset(): 4096}
    assert points(reader, "agent.reliability.traces.dropped") == {
        frozenset({("reason", "max_bytes")}): 3,
        frozenset({("reason", "ttl_expired_unjudged")}): 1,
    }
    assert points(reader, "agent.reliability.paused_runs.dropped") == {frozenset({("reason", "max_paused_runs")}): 1}
    assert points(reader, "agent.reliability.refusals") == {frozenset({("reason", "soft_byte_limit")}): 1}
    assert points(reader, "agent.reliability.evaluations.late") == {frozenset(): 1}
    assert points(reader, "agent.reliability.spans.dropped") == {
        frozenset({("reason", "buffer_full")}): 5,
        frozenset({("reason", "malformed")}): 1,
    }
    buffered[0] = 3
    assert points(reader, "agent.reliability.traces.buffered") == {frozenset(): 3}


def test_buffered_gauge_reports_nothing_until_a_callback_is_registered(reader):
    metrics_on(reader)
    assert points(reader, "agent.reliability.traces.buffered") == {}


def test_cap_must_be_positive():
    with pytest.raises(ValueError, match="max_label_values"):
        ReliabilityMetrics(MeterProvider(), max_label_values=0)


def test_a_batch_counts_the_same_as_recording_one_by_one():
    results = [
        run("calc", [("calc", "add", OK), ("calc", "div", ERROR)]),
        run("calc", [("calc", "add", OK), ("calc", "rm", REFUSED)], eval_status="FAILED", failed_tool_calls=["rm"]),
        run("web", [("web", "fetch", REFUSED)], expectation="other"),
    ]
    single, batched = InMemoryMetricReader(), InMemoryMetricReader()
    one_by_one = metrics_on(single)
    for result in results:
        one_by_one.record(result)
    metrics_on(batched).record_many(results)
    for name in ("agent.reliability.evaluations", "agent.reliability.tool_calls", "agent.reliability.tool_calls.unexpected"):
        assert points(batched, name) == points(single, name)
