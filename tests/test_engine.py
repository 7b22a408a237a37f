"""One engine behind every front door: the same records through the span processor, the
receiver and ``eval`` give the same stored results, standings and metric points; a sink that
fails is counted and stops no other sink; the engine's own I/O is not traced back into the app."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor, __version__
from otel_reliability.engine import Engine, EngineSettings, SettingsError, judge_spans
from otel_reliability.expectations import DEFAULT_EXPECTATION, Expectation
from otel_reliability.model import SpanData
from otel_reliability.receiver.config import ReceiverConfig
from otel_reliability.receiver.intake import JSON, Body
from otel_reliability.receiver.service import ReceiverService
from otel_reliability.reputation import Reputation
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store

from .receiver_harness import remap_corpus
from .sdk_replay import replay_events

LATE_TRACE = "agno/team_nested.json"  # its tool spans also arrive after the trace was judged once
# Every door judges with an expectation that samples half the runs (the others get the default
# expectation): the same trace ids must give the same decisions through each.
SAMPLED = Expectation(name="sampled-half", sample_rate=0.5, fail_on=["error", "refused", "pending"])
SAMPLING_LABELS = ("reliability.expectation", "reliability.sampling.decision")


def _spans_of(path: Path) -> list[SpanData]:
    return list(read_spans(path))


def _stored(path: Path) -> list[dict[str, Any]]:
    store = open_store(path)
    try:
        return _comparable(store.query(limit=None))
    finally:
        store.close()


def _standings(path: Path) -> dict[str, tuple]:
    reputation = Reputation(path)
    try:
        return {
            s.agent: (s.evaluations, None if s.score is None else round(s.score, 9), s.grade and s.grade.value)
            for s in reputation.standings()
        }
    finally:
        reputation.close()


EVALUATION_LABELS = ("gen_ai.agent.name", "reliability.status", "reliability.expectation")


def _evaluations(reader: InMemoryMetricReader, name: str = "agent.reliability.evaluations",
                 labels: tuple[str, ...] = EVALUATION_LABELS) -> dict[tuple, int]:
    """``agent.reliability.evaluations`` by (agent, status, expectation), or another counter by its labels."""
    points = {}
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        points[tuple(point.attributes[k] for k in labels)] = point.value
    return points


def _through_the_processor(workdir: Path, files: list[Path]) -> tuple[list, dict, dict]:
    store = workdir / "processor.db"
    reader = InMemoryMetricReader()
    reputation = Reputation(store)
    processor = ReliabilitySpanProcessor(
        SimpleSpanProcessor(InMemorySpanExporter()), reputation=reputation,
        meter_provider=MeterProvider(metric_readers=[reader]), expectations=[SAMPLED],
    )
    for path in files:
        for kind, span in replay_events(_spans_of(path)):
            (processor.on_start if kind == "start" else processor.on_end)(span)
        processor.drain()
    metrics = _evaluations(reader)
    sampling = _evaluations(reader, "agent.reliability.sampling", SAMPLING_LABELS)
    processor.shutdown()
    reputation.close()
    return _stored(store), _standings(store), metrics, sampling


def _through_the_receiver(workdir: Path, files: list[Path]) -> tuple[list, dict, dict]:
    store = workdir / "receiver.db"
    expectations = workdir / "sampled.json"
    expectations.write_text(json.dumps({"expectations": [SAMPLED.model_dump(exclude_defaults=True)]}))
    service = ReceiverService(
        ReceiverConfig(store=str(store), grpc_endpoint=None, http_endpoint=None, expectations=[str(expectations)])
    )
    for path in files:
        document = json.loads(path.read_bytes())
        if path.relative_to(path.parents[1]).as_posix() == LATE_TRACE:
            held_back = _hold_back_tool_spans(document)
            service.accept(Body(json.dumps(document).encode(), JSON))
            service.pipeline.drain()  # judged once without its tool spans …
            service.accept(Body(json.dumps(held_back).encode(), JSON))  # … which then arrive late
        else:
            service.accept(Body(path.read_bytes(), JSON))
    service.pipeline.drain()  # the end of the input: what is left, the late trace again
    metrics_text = service.metrics_text().decode()
    service.stop()
    return _stored(store), _standings(store), _prometheus_evaluations(metrics_text), _prometheus_sampling(metrics_text)


def _hold_back_tool_spans(document: dict) -> dict:
    """Take the tool spans out of ``document`` and return them as a request of their own."""
    late = json.loads(json.dumps(document))
    for resource, late_resource in zip(document["resourceSpans"], late["resourceSpans"]):
        for scope, late_scope in zip(resource["scopeSpans"], late_resource["scopeSpans"]):
            tools = [s for s in scope["spans"] if _is_tool(s)]
            scope["spans"] = [s for s in scope["spans"] if not _is_tool(s)]
            late_scope["spans"] = tools
    return late


def _is_tool(span: dict) -> bool:
    return any(a["key"] == "openinference.span.kind" and a["value"].get("stringValue") == "TOOL" for a in span["attributes"])


def _prometheus_evaluations(text: str) -> dict[tuple, int]:
    """``agent_reliability_evaluations_total`` by (agent, status, expectation), and the re-judgements
    (``agent_reliability_evaluations_late_total``) under the key ``"late"``."""
    from prometheus_client.parser import text_string_to_metric_families

    points: dict = {"late": 0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "agent_reliability_evaluations_total":
                points[tuple(sample.labels[k.replace(".", "_")] for k in EVALUATION_LABELS)] = int(sample.value)
            elif sample.name == "agent_reliability_evaluations_late_total":
                points["late"] += int(sample.value)
    return points


def _prometheus_sampling(text: str) -> dict[tuple, int]:
    """``agent_reliability_sampling_total`` by (expectation, decision)."""
    from prometheus_client.parser import text_string_to_metric_families

    points: dict = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "agent_reliability_sampling_total":
                points[tuple(sample.labels[k.replace(".", "_")] for k in SAMPLING_LABELS)] = int(sample.value)
    return points


def _through_eval(files: list[Path]) -> list[dict[str, Any]]:
    return _comparable(judge_spans(Engine([SAMPLED]), [span for path in files for span in _spans_of(path)]))


def _comparable(results) -> list[dict[str, Any]]:
    """Every stored field of each result but the time it was judged, in id order."""
    records = [{k: v for k, v in r.to_record().items() if k != "evaluated_at"} for r in results]
    return sorted(records, key=lambda r: (r["trace_id"], r["run_span_id"]))


@pytest.fixture(scope="module")
def doors(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("doors")
    files = remap_corpus(workdir / "corpus", salt="doors")  # the agno files share ids: made unique
    return {
        "processor": _through_the_processor(workdir, files),
        "receiver": _through_the_receiver(workdir, files),
        "eval": _through_eval(files),
    }


def test_the_corpus_gives_the_same_stored_results_through_every_front_door(doors):
    expected = doors["eval"]
    assert len(expected) >= 40 and any(r["eval_status"] == "FAILED" for r in expected)
    assert any(a["outcome"] == "pending" for r in expected for a in r["chain"]), "paused runs are compared too"
    assert doors["processor"][0] == expected
    assert doors["receiver"][0] == expected


def test_sampling_decides_alike_through_every_front_door(doors):
    expected = doors["eval"]
    judged_by = [r["expectation"] for r in expected]
    sampled, skipped = judged_by.count("sampled-half"), judged_by.count("default")
    assert sampled + skipped == len(expected) and sampled >= 10 and skipped >= 10
    for result in expected:  # an unsampled run is judged by the default expectation, by trace id alone
        assert (result["expectation"] == "sampled-half") == sampled_at_half(int(result["trace_id"], 16))
    # the stored results of every door are equal (test above), decisions included; the counts:
    assert doors["processor"][3] == {("sampled-half", "sampled"): sampled, ("sampled-half", "skipped"): skipped}
    receiver = doors["receiver"][3]  # the receiver also counted the verdicts re-judgements superseded
    assert receiver.keys() == doors["processor"][3].keys()
    assert all(receiver[key] >= count for key, count in doors["processor"][3].items())


def sampled_at_half(trace_id: int) -> bool:
    """The documented rule, written out: the first 8 bytes of SHA-256 of the 16-byte id, under half the range."""
    digest = hashlib.sha256(trace_id.to_bytes(16, "big")).digest()
    return int.from_bytes(digest[:8], "big") < 2**63


def test_every_stored_result_names_its_evaluator_and_expectation_digest(doors):
    digests = {"sampled-half": SAMPLED.digest, "default": DEFAULT_EXPECTATION.digest}
    for door in ("processor", "receiver"):
        for result in doors[door][0]:
            assert result["evaluator"] == {
                "name": "otel-reliability", "version": __version__, "expectation_digest": digests[result["expectation"]],
            }


def test_the_corpus_gives_the_same_standings_through_the_processor_and_the_receiver(doors):
    standings = doors["processor"][1]
    assert len(standings) >= 5
    assert doors["receiver"][1] == standings


def test_the_corpus_gives_the_same_evaluation_counts_through_the_processor_and_the_receiver(doors):
    processor, receiver = doors["processor"][2], dict(doors["receiver"][2])
    assert sum(processor.values()) == len(doors["eval"])
    # The receiver also counted each verdict a re-judgement superseded: the late trace's first
    # one, and a resumed run's judged before the paused run it resumes (the spans of one file
    # reach a receiver together, in file order; in process, a paused run ends before it resumes).
    late = receiver.pop("late")
    assert late >= 1
    assert sum(receiver.values()) == sum(processor.values()) + late
    assert all(receiver.get(labels, 0) >= count for labels, count in processor.items())


# -- sinks -----------------------------------------------------------------------------


class BrokenStore:
    def add_many(self, results):
        raise OSError("disk full")

    def close(self):
        pass


def _run_span(provider_tracer, agent: str) -> None:
    with provider_tracer.start_as_current_span(
        f"invoke_agent {agent}", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    ):
        with provider_tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}):
            pass  # a model call (its content not captured): the run's refusals could be seen
        with provider_tracer.start_as_current_span(
            "execute_tool multiply", attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "multiply"}
        ):
            pass


@pytest.mark.parametrize(
    ("failure", "store", "callback_raises"),
    [
        pytest.param("store", BrokenStore(), None, id="a-store-that-raises"),
        pytest.param("callback", None, SystemExit(3), id="a-callback-that-raises-SystemExit"),
        pytest.param("callback", None, ValueError("bad"), id="a-callback-that-raises"),
    ],
)
def test_a_failing_sink_is_counted_and_the_others_still_publish(failure, store, callback_raises):
    from opentelemetry.sdk.trace import TracerProvider

    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    seen = []

    def callback(result):
        seen.append(result.agent)
        if callback_raises is not None:
            raise callback_raises

    processor = ReliabilitySpanProcessor(
        SimpleSpanProcessor(exporter), store=store, on_result=callback, meter_provider=MeterProvider(metric_readers=[reader])
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    _run_span(tracer, "first")
    _run_span(tracer, "second")  # the worker outlived the first failure
    assert processor.drain()

    assert seen == ["first", "second"]
    runs = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert [s.attributes["reliability.status"] for s in runs] == ["PASSED", "PASSED"]
    assert sum(_evaluations(reader).values()) == 2, "the metrics sink still counted both"
    failures = {}
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "agent.reliability.sink.failures":
                    failures = {p.attributes["reliability.sink"]: p.value for p in metric.data.data_points}
    assert failures == {failure: 2}
    provider.shutdown()


def test_instrumentations_are_suppressed_while_the_worker_publishes():
    from opentelemetry.sdk.trace import TracerProvider

    enabled = []
    processor = ReliabilitySpanProcessor(store=None, on_result=lambda _: enabled.append(is_instrumentation_enabled()))
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _run_span(provider.get_tracer("test"), "calc")
    assert processor.drain()
    assert enabled == [False], "a store write or a callback's HTTP call would be traced back into the app"
    assert is_instrumentation_enabled(), "the app's own threads keep their instrumentation"
    provider.shutdown()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_traces": 0}, "max_traces: must be at least 1, got 0"),
        ({"trace_ttl": -1}, "trace_ttl: must be more than 0, got -1"),
        ({"max_spans_per_trace": "many"}, "max_spans_per_trace: expected a whole number, got 'many'"),
        ({"max_buffered_bytes": 1000}, "max_buffered_bytes: must be at least 1048576, got 1000"),
    ],
)
def test_bad_engine_settings_are_refused_at_construction_naming_the_setting(settings, message):
    with pytest.raises(SettingsError, match=message):
        ReliabilitySpanProcessor(store=None, **settings)
    with pytest.raises(SettingsError, match=message):
        EngineSettings.checked(settings)


def test_both_doors_share_the_engine_defaults():
    # The processor judges when a run ends (no late window) and cannot refuse its app (no soft limit).
    receiver_only = {"late_window", "soft_limit_ratio"}
    processor_defaults = {
        name: ReliabilitySpanProcessor.__init__.__kwdefaults__[name]
        for name in EngineSettings.model_fields
        if name not in receiver_only
    }
    receiver = ReceiverConfig().engine_settings()
    assert processor_defaults == {name: getattr(receiver, name) for name in processor_defaults}


def _records(scenario: str) -> list:
    from otel_reliability.adapters import to_record

    from .corpus import CORPUS

    return [to_record(span) for span in read_spans(CORPUS / f"{scenario}.json")]


@pytest.mark.parametrize("other_pauses_last", [True, False], ids=["other-agent-paused-last", "other-agent-paused-first"])
def test_a_resumed_run_finds_its_paused_run_when_another_agent_left_the_same_call_id_pending(other_pauses_last):
    # Both leave `call_del_1` pending: pydantic-ai's "janitor" (paused, then resumed in a second
    # trace) and agno's "Files Agent". Whichever paused last, the janitor's resumption joins its own run.
    from otel_reliability.engine import Pipeline

    janitor = _records("pydantic_ai/refused_approval_denied")
    resumed_trace = max(janitor, key=lambda r: r.start_ns).trace_id
    paused = [r for r in janitor if r.trace_id != resumed_trace]
    resuming = [r for r in janitor if r.trace_id == resumed_trace]
    other = _records("agno/agent_paused_confirmation")
    pipeline = Pipeline(Engine())
    for records in [paused, other] if other_pauses_last else [other, paused]:
        pipeline.add(records, now=0.0)
        pipeline.drain()
    pipeline.add(resuming, now=1.0)
    [judged] = pipeline.drain()
    [judgement] = judged.judgements
    # joined, the denial answers the pending call (alone, the resumption has no attempt and passes)
    assert [(a.tool, a.outcome) for a in judgement.run.chain()] == [("delete_file", "refused")]
    assert judgement.result.verdict.eval_status == "FAILED"
