"""Reputation fed from real SDK spans through ``ReliabilitySpanProcessor(reputation=...)``: the run's output against
``expected_output``, evaluator events on the spans, post-hoc judges, policy marks on tool
spans, and the reputation gauges.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Status, StatusCode

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.expectations import Expectation, ExpectedOutput
from otel_reliability.reputation import AccessPolicy, Grade, Reputation, ReputationConfig

WEATHER = Expectation(
    name="weather",
    match={"agent": "forecaster"},
    expected_tool_calls=["get_weather"],
    allowed_tools=["get_weather"],
    expected_output=ExpectedOutput(contains=["25°C"]),
)


def evaluation_event(name: str, label: str | None = None, value: float | None = None) -> dict:
    attributes = {"gen_ai.evaluation.name": name}
    if label is not None:
        attributes["gen_ai.evaluation.score.label"] = label
    if value is not None:
        attributes["gen_ai.evaluation.score.value"] = value
    return attributes


class Harness:
    def __init__(self, tmp_path, **options) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[self.reader])
        options.setdefault("config", ReputationConfig(evaluators={"human_review": {"confidence": 1.0}}))
        self.reputation = Reputation(str(tmp_path / "reliability.db"), expectations=[WEATHER], meter_provider=meters, cache_seconds=0, **options)
        self.processor = ReliabilitySpanProcessor(SimpleSpanProcessor(self.exporter), reputation=self.reputation, meter_provider=meters)
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("test")

    def run(self, *, agent="forecaster", output="Paris: 25°C, sunny", tools=(("get_weather", None),), run_events=(), tool_events=()):
        with self.tracer.start_as_current_span(
            f"invoke_agent {agent}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
        ) as run:
            for i, (tool, error) in enumerate(tools):
                with self.tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": tool,
                        "gen_ai.tool.call.id": f"call_{i}",
                        "gen_ai.tool.call.arguments": json.dumps({"city": "Paris"}),
                    },
                ) as span:
                    if error:
                        span.set_status(Status(StatusCode.ERROR, error))
                    for attributes in tool_events:
                        span.add_event("gen_ai.evaluation.result", attributes)
            for attributes in run_events:
                run.add_event("gen_ai.evaluation.result", attributes)
            run.set_attribute("final_result", output)
        self.processor.drain()
        return run

    def evidence(self, agent="forecaster") -> list[tuple[str, str, bool, float]]:
        [entry] = self.reputation.window(agent, limit=1)
        return [(e.dimension, e.source, e.passed, e.confidence) for e in entry.evidence]

    def gauges(self) -> dict[str, tuple[float, str]]:
        found = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "agent.reliability.reputation.score":
                        for point in metric.data.data_points:
                            found[point.attributes["gen_ai.agent.name"]] = (point.value, point.attributes["reliability.grade"])
        return found

    def close(self):
        self.provider.shutdown()
        self.reputation.close()


@pytest.fixture
def harness(tmp_path):
    h = Harness(tmp_path)
    yield h
    h.close()


BASE = [
    ("isnad", "matcher", True, 1.0),
    ("isnad", "tool_outcomes", True, 1.0),
    ("adalah", "policy:allowed_tools", True, 1.0),
    ("adalah", "refusals", True, 1.0),
]

SCENARIOS = [
    ("output_states_the_fact", dict(), BASE + [("sidq", "fact_check", True, 1.0)]),
    ("output_lacks_the_fact", dict(output="Paris: 18°C"), BASE + [("sidq", "fact_check", False, 1.0)]),
    (
        "judge_event_on_the_run_span_counts_at_its_confidence",
        dict(run_events=[evaluation_event("answer_quality", "fail")]),
        BASE + [("sidq", "fact_check", True, 1.0), ("sidq", "evaluation:answer_quality", False, 0.7)],
    ),
    (
        "configured_evaluator_on_a_tool_span",
        dict(tool_events=[evaluation_event("human_review", value=0.9)]),
        BASE + [("sidq", "fact_check", True, 1.0), ("sidq", "evaluation:human_review", True, 1.0)],
    ),
]


@pytest.mark.parametrize(("id_", "run", "evidence"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_spans_give_the_runs_evidence(harness, id_, run, evidence):
    harness.run(**run)
    assert harness.evidence() == evidence


def test_stability_compares_consecutive_runs_of_the_expectation(harness):
    harness.run()
    harness.run()
    assert ("dabt", "stability", True, 1.0) in harness.evidence()
    harness.run(tools=(("get_weather", "upstream timeout"),), output="I could not get the weather.")
    evidence = harness.evidence()
    assert ("dabt", "stability", False, 1.0) in evidence
    assert ("isnad", "tool_outcomes", False, 1.0) in evidence
    assert ("sidq", "fact_check", False, 1.0) in evidence


def test_a_post_hoc_judge_amends_the_recorded_run(harness):
    run = harness.run()
    before = harness.reputation.standing("forecaster").dimensions["sidq"]
    with harness.tracer.start_as_current_span("evaluate answer", links=[Link(run.get_span_context())]) as judge:
        judge.add_event("gen_ai.evaluation.result", evaluation_event("answer_quality", "incorrect"))
    standing = harness.reputation.standing("forecaster", fresh=True)
    assert (before, standing.evaluations) == (100.0, 1)
    assert standing.dimensions["sidq"] == pytest.approx(100 / 1.7)
    assert ("sidq", "evaluation:answer_quality", False, 0.7) in harness.evidence()


def test_gauge_reports_each_agents_score_and_current_grade(harness):
    harness.run()  # the first run of a case has no stability evidence: dabt counts 0
    assert harness.gauges() == {"forecaster": (80.0, "Saduq")}
    harness.run()
    assert harness.gauges() == {"forecaster": (100.0, "Thiqah")}, "the Saduq series is gone"
    harness.run(agent="helper", output="?")  # no expectation: chain and compliance evidence only
    assert harness.gauges() == {"forecaster": (100.0, "Thiqah"), "helper": (50.0, "Da'if")}


def test_tool_spans_of_agents_below_the_required_grade_are_marked_and_counted(tmp_path):
    policy = AccessPolicy(grades={Grade.THIQAH: {"allowed_actions": ["*"]}, Grade.SADUQ: {"allowed_actions": ["get_weather"]}})
    h = Harness(tmp_path, policy=policy)
    try:
        h.run()  # unrated (Matruk by default, no rule): get_weather denied, marked
        assert h.reputation.standing("forecaster").grade is Grade.SADUQ
        h.run()  # Saduq may get_weather
        assert h.reputation.standing("forecaster").grade is Grade.THIQAH
        h.run(tools=(("get_weather", None), ("delete_files", None)))  # Thiqah may do anything
        marked = [s for s in h.exporter.get_finished_spans() if s.attributes.get("reliability.policy.denied")]
        assert [(s.name, s.attributes["reliability.grade"]) for s in marked] == [("execute_tool get_weather", "Matruk")]
        assert "default is deny" in marked[0].attributes["reliability.policy.reason"]
        # The marked call did run: it is evidence like any other.
        [first] = h.reputation.window("forecaster")[-1:]
        assert ("isnad", "tool_outcomes", True) in [(e.dimension, e.source, e.passed) for e in first.evidence]
        counts = {}
        for resource in h.reader.get_metrics_data().resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "agent.reliability.policy.denied":
                        counts = {p.attributes["gen_ai.tool.name"]: p.value for p in metric.data.data_points}
        assert counts == {"get_weather": 1}
        exported = h.exporter.get_finished_spans()
        assert len(exported) == len({s.context.span_id for s in exported}) == 7, "every span exported once"
    finally:
        h.close()


def test_verdicts_still_reach_the_results_store_and_the_run_span(harness, tmp_path):
    from otel_reliability.stores import open_store

    harness.run()
    [run_span] = [s for s in harness.exporter.get_finished_spans() if s.name == "invoke_agent forecaster"]
    assert run_span.attributes["reliability.status"] == "PASSED"
    results = open_store(tmp_path / "reliability.db")
    try:
        assert [r.expectation for r in results.query()] == ["weather"]
    finally:
        results.close()


def test_a_call_the_guard_blocked_is_not_held_against_the_agent(tmp_path):
    h = Harness(tmp_path, policy=AccessPolicy(grades={Grade.THIQAH: {"allowed_actions": ["*"]}}))
    try:

        @h.reputation.guard(agent="janitor")
        def delete_files() -> str:
            raise AssertionError("must not run")

        run_attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "janitor"}
        tool_attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "delete_files"}
        with h.tracer.start_as_current_span("invoke_agent janitor", attributes=run_attributes) as run:
            with h.tracer.start_as_current_span("execute_tool delete_files", attributes=tool_attributes) as tool:
                try:
                    delete_files()  # unrated: Matruk, no rule, the default denies
                except PermissionError as exc:  # as agent frameworks record a tool that raised
                    tool.set_status(Status(StatusCode.ERROR, str(exc)))
            run.set_attribute("final_result", "I may not delete files.")
        h.processor.drain()
        [blocked] = [s for s in h.exporter.get_finished_spans() if s.name == "execute_tool delete_files"]
        assert blocked.attributes["reliability.policy.denied"] is True
        assert blocked.attributes["reliability.grade"] == "Matruk"
        [latest] = h.reputation.window("janitor")
        assert latest.passed is False, "the verdict still sees the errored attempt"
        assert latest.evidence == [], "but reputation does not: blocking it was the policy's doing"
        counts = {}
        for resource in h.reader.get_metrics_data().resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "agent.reliability.policy.denied":
                        counts = {p.attributes["gen_ai.tool.name"]: p.value for p in metric.data.data_points}
        assert counts == {"delete_files": 1}, "counted once, by the guard"
    finally:
        h.close()
