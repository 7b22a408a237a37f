"""Online sampling (``sample_rate``: a run is judged by an expectation iff a hash of its trace id
falls under the rate, so every door and every re-judgement agrees) and provenance (every result
names ``evaluator`` = {name, version, expectation_digest}, in the JSON and on the evaluation
event) — plus where partial credit shows: the run span and the ``trajectory.f1`` histogram."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor, __version__
from otel_reliability.cli import main
from otel_reliability.emitters.metrics import ReliabilityMetrics
from otel_reliability.engine import Engine
from otel_reliability.engine.sampling import sampled
from otel_reliability.expectations import Expectation, ExpectationError, load_expectations
from otel_reliability.model import ERROR, OK, Attempt, Run

from .corpus import CORPUS
from .sdk_replay import replay_events
from .test_emitters_metrics import labels, points

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"  # calculator calls multiply


# -- sampling ----------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("ids", ["random", "sequential"])
def test_the_sampled_fraction_of_10000_trace_ids_is_close_to_the_rate(rate, ids):
    rng = random.Random(15)
    trace_ids = [rng.getrandbits(128) for _ in range(10_000)] if ids == "random" else list(range(1, 10_001))
    fraction = sum(sampled(t, rate) for t in trace_ids) / len(trace_ids)
    # four standard deviations of a binomial share: a fair hash stays inside
    assert abs(fraction - rate) <= 4 * (rate * (1 - rate) / len(trace_ids)) ** 0.5


def test_a_higher_rate_samples_every_run_a_lower_one_does():
    trace_ids = range(1, 2001)
    low = {t for t in trace_ids if sampled(t, 0.2)}
    high = {t for t in trace_ids if sampled(t, 0.6)}
    assert low < high


def test_the_decision_is_the_documented_hash():
    for trace_id in (1, 0x0AF7651916CD43DD8448EB211C80319C, 2**128 - 1):
        share = int.from_bytes(hashlib.sha256(trace_id.to_bytes(16, "big")).digest()[:8], "big") / 2**64
        assert sampled(trace_id, 0.5) == (share < 0.5)
        assert sampled(trace_id, 1.0)


def run_with_an_error(trace_id: int) -> Run:
    attempt = Attempt("fetch", {}, ERROR, "bot", ("bot",), error="timeout")
    return Run(trace_id, 2, "bot", "invoke_agent bot", 1, 2, own_attempts=[attempt])


def test_an_unsampled_run_still_gets_the_default_checks():
    engine = Engine([Expectation(name="nightly", sample_rate=0.5, expected_tool_calls=["fetch"])])
    skipped = next(t for t in range(1, 100) if not sampled(t, 0.5))
    result = engine.judge(run_with_an_error(skipped))
    assert (result.expectation, result.verdict.eval_status) == ("default", "FAILED")
    assert result.verdict.policy_violations == ["fail_on error: 1 tool call errored (fetch)"]
    assert (result.sampling.expectation, result.sampling.decision) == ("nightly", "skipped")


def test_a_rejudgement_in_another_engine_decides_alike():
    expectation = Expectation(name="nightly", sample_rate=0.3, expected_tool_calls=["fetch"])
    first, second = Engine([expectation]), Engine([expectation])
    for trace_id in range(1, 200):
        assert first.judge(run_with_an_error(trace_id)).expectation == second.judge(run_with_an_error(trace_id)).expectation


def test_expectations_without_a_rate_are_not_counted_as_sampled():
    result = Engine([Expectation(name="all", expected_tool_calls=["fetch"])]).judge(run_with_an_error(7))
    assert result.sampling is None and result.expectation == "all"


@pytest.mark.parametrize("rate", [0, -0.5, 1.5, "half"])
def test_a_sample_rate_outside_0_to_1_is_refused(tmp_path, rate):
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"expectations": [{"name": "x", "sample_rate": rate}]}))
    with pytest.raises(ExpectationError, match="sample_rate"):
        load_expectations([path])


def test_sampling_decisions_are_counted_by_expectation_and_decision():
    reader = InMemoryMetricReader()
    metrics = ReliabilityMetrics(MeterProvider(metric_readers=[reader]))
    engine = Engine([Expectation(name="nightly", sample_rate=0.5, expected_tool_calls=["fetch"])])
    results = [engine.judge(run_with_an_error(t)) for t in range(1, 101)]
    metrics.record_many(results)
    taken = sum(sampled(t, 0.5) for t in range(1, 101))
    assert points(reader, "agent.reliability.sampling") == {
        labels(reliability__expectation="nightly", reliability__sampling__decision="sampled"): taken,
        labels(reliability__expectation="nightly", reliability__sampling__decision="skipped"): 100 - taken,
    }


# -- provenance ------------------------------------------------------------------------


def test_the_digest_is_sha256_of_the_canonical_json_without_defaults():
    expectation = Expectation(name="calc", expected_tool_calls=["multiply"], max_total_tokens=500)
    canonical = '{"expected_tool_calls":["multiply"],"max_total_tokens":500,"name":"calc"}'
    assert expectation.digest == hashlib.sha256(canonical.encode()).hexdigest()


def test_the_digest_ignores_spelling_and_follows_meaning(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "expectations:\n  - name: calc\n    expected_tool_calls: [multiply]\n    order: any\n    sample_rate: 1\n"
    )
    (tmp_path / "b.json").write_text(json.dumps({"expectations": [{"expected_tool_calls": ["multiply"], "name": "calc"}]}))
    (tmp_path / "c.toml").write_text('[[expectations]]\nname = "calc"\nexpected_tool_calls = ["multiply", "add"]\n')
    [a], [b], [c] = (load_expectations([tmp_path / name]) for name in ("a.yaml", "b.json", "c.toml"))
    assert a.digest == b.digest
    assert c.digest != a.digest


def eval_json(*args, capsys) -> dict:
    main(["eval", *map(str, args), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_eval_json_names_the_evaluator_and_the_partial_credit(tmp_path, capsys):
    path = tmp_path / "calc.json"
    path.write_text(json.dumps({"expectations": [{"name": "calc", "expected_tool_calls": ["multiply", "add"]}]}))
    [result] = eval_json(SINGLE_TOOL, "--expectations", path, capsys=capsys)["results"]
    [expectation] = load_expectations([path])
    assert result["evaluator"] == {"name": "otel-reliability", "version": __version__, "expectation_digest": expectation.digest}
    assert result["trajectory"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "lcs_f1": None}
    assert result["usage"]["model_calls"] == 2


def test_the_processor_puts_provenance_on_the_event_and_partial_credit_on_the_run_span():
    from otel_reliability.sources import read_spans

    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    expectation = Expectation(name="calc", expected_tool_calls=["multiply", "add"], expected_chain=["multiply"])
    processor = ReliabilitySpanProcessor(
        SimpleSpanProcessor(exporter), store=None, expectations=[expectation],
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    for kind, span in replay_events(list(read_spans(SINGLE_TOOL))):
        (processor.on_start if kind == "start" else processor.on_end)(span)
    processor.drain()
    [run] = [s for s in exporter.get_finished_spans() if "reliability.status" in (s.attributes or {})]
    attributes = dict(run.attributes)
    assert {k: v for k, v in attributes.items() if k.startswith("reliability.trajectory.")} == {
        "reliability.trajectory.precision": 1.0,
        "reliability.trajectory.recall": 0.5,
        "reliability.trajectory.f1": pytest.approx(2 / 3),
        "reliability.trajectory.lcs_f1": 1.0,
    }
    [event] = [e for e in run.events if e.name == "gen_ai.evaluation.result"]
    assert {k: v for k, v in event.attributes.items() if k.startswith("reliability.evaluator.")} == {
        "reliability.evaluator.name": "otel-reliability",
        "reliability.evaluator.version": __version__,
        "reliability.evaluator.expectation_digest": expectation.digest,
    }
    [f1] = points(reader, "agent.reliability.trajectory.f1").values()
    assert (f1.count, f1.sum) == (1, pytest.approx(2 / 3))
    processor.shutdown()


def test_runs_without_expected_calls_record_no_trajectory_point():
    reader = InMemoryMetricReader()
    metrics = ReliabilityMetrics(MeterProvider(metric_readers=[reader]))
    result = Engine().judge(Run(1, 2, "bot", "invoke_agent bot", 1, 2, own_attempts=[Attempt("f", {}, OK, "bot", ("bot",))]))
    metrics.record(result)
    assert result.verdict.trajectory is None
    assert points(reader, "agent.reliability.trajectory.f1") == {}


@pytest.mark.parametrize("store_name", ["results.db", "results.jsonl"])
def test_stores_give_back_trajectory_usage_and_evaluator(store_name, tmp_path, capsys):
    from otel_reliability.results import RunResult
    from otel_reliability.stores import open_store

    path = tmp_path / "calc.json"
    path.write_text(json.dumps({"expectations": [{"name": "calc", "expected_tool_calls": ["multiply", "add"],
                                                  "expected_chain": ["multiply"]}]}))
    [result] = eval_json(SINGLE_TOOL, "--expectations", path, capsys=capsys)["results"]
    store = open_store(tmp_path / store_name)
    try:
        store.add_many([RunResult.from_json(result)])
        [stored] = store.query(limit=None)
    finally:
        store.close()
    assert {k: stored.to_json()[k] for k in ("trajectory", "usage", "evaluator")} == {
        k: result[k] for k in ("trajectory", "usage", "evaluator")
    }
    assert result["trajectory"]["lcs_f1"] == 1.0
