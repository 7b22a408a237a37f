"""Where the receiver's CPU goes, stage by stage: microseconds per span, single-threaded, in-process.

Run: ``python benchmarks/receiver_stages.py [--requests N] [--traces-per-request N]
[--traces-per-tick N] [--rounds N]``

The requests are ``receiver_throughput.py``'s agent-shaped ones (11 spans a trace, 50
traces a request). Each goes through what ``otel-reliability serve`` does with it
(``receiver/service.py``: ``accept``, then the judge thread's ``_judge`` and
``_publish``), one stage at a time, timed apart:

parse_request → decode_request → to_record → the engine's trace buffer (add, due,
expire) → assemble + Engine.judge → SQLiteStore.add_many → Reputation.record_many →
ReliabilityMetrics.record_many

A judge tick publishes ``--traces-per-tick`` traces together, as the judge thread does
with what became due since its last tick. Stores are real SQLite files in a temporary
directory, reputation shares the results file as ``serve`` does by default, and the
garbage collector is tuned as ``serve`` tunes it. Every round uses new trace ids on the
same stores; the best round of each stage is printed, and the best round's total.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from opentelemetry.exporter.prometheus import PrometheusMetricReader  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from prometheus_client import CollectorRegistry  # noqa: E402
from receiver_throughput import SPANS_PER_TRACE, build_requests  # noqa: E402

from otel_reliability.adapters import to_record  # noqa: E402
from otel_reliability.emitters.metrics import ReliabilityMetrics  # noqa: E402
from otel_reliability.emitters.sinks import MetricsSink, StoreSink  # noqa: E402
from otel_reliability.engine import Engine, Pipeline  # noqa: E402
from otel_reliability.receiver.tuning import tune_garbage_collection  # noqa: E402
from otel_reliability.reputation import Reputation, ReputationSink  # noqa: E402
from otel_reliability.sources import decode_request, parse_request  # noqa: E402
from otel_reliability.stores.sqlite import SQLiteStore  # noqa: E402

STAGES = ("parse_request", "decode_request", "to_record", "completion", "assemble+judge",
          "store.add_many", "reputation", "metrics")


class Stages:
    """The receiver's engine path without its servers and threads, each sink timed on its own."""

    def __init__(self, workdir: Path) -> None:
        store = workdir / "stages.db"
        engine = Engine()
        self.store = StoreSink(SQLiteStore(store))
        self.meter_provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=CollectorRegistry())])
        self.metrics = MetricsSink(ReliabilityMetrics(self.meter_provider))
        self.reputation = ReputationSink(
            Reputation(store, meter_provider=self.meter_provider, expectations=engine.expectations), owned=True
        )
        self.pipeline = Pipeline(engine, decision_wait=0.2)  # its sinks are timed one by one below
        self.clock = 0.0  # the buffer is given its time: each tick is a decision_wait after the last

    def round(self, payloads: list[bytes], requests_per_tick: int) -> dict[str, float]:
        """Seconds spent in each stage on ``payloads``."""
        spent = dict.fromkeys(STAGES, 0.0)
        clock = time.perf_counter

        def timed(stage: str, work, *args):
            start = clock()
            out = work(*args)
            spent[stage] += clock() - start
            return out

        for first in range(0, len(payloads), requests_per_tick):
            for payload in payloads[first:first + requests_per_tick]:
                request = timed("parse_request", parse_request, payload)
                decoded = timed("decode_request", decode_request, request)
                records = timed("to_record", lambda: [to_record(span) for span in decoded.spans])
                timed("completion", self.pipeline.add, records, self.clock)
            self.clock += 1.0
            due = timed("completion", self.pipeline.buffer.due, self.clock)
            timed("completion", self.pipeline.expire, self.clock)
            judgements = timed("assemble+judge", lambda: [j for t in due for j in self.pipeline.judge_due(t).judgements])
            timed("store.add_many", self.store.publish, judgements)
            timed("metrics", self.metrics.publish, judgements)
            timed("reputation", self.reputation.publish, judgements)
        return spent

    def close(self) -> None:
        self.store.close()
        self.reputation.close()
        self.meter_provider.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=40, help="requests a round (default 40)")
    parser.add_argument("--traces-per-request", type=int, default=50)
    parser.add_argument("--traces-per-tick", type=int, default=100, help="traces a judge tick publishes together")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    requests_per_tick = max(1, args.traces_per_tick // args.traces_per_request)
    traces = args.requests * args.traces_per_request
    spans = traces * SPANS_PER_TRACE
    with tempfile.TemporaryDirectory() as workdir:
        pipeline = Stages(Path(workdir))
        tune_garbage_collection()
        pipeline.round(build_requests(1 << 40, args.requests, args.traces_per_request), requests_per_tick)  # warm-up
        rounds = []
        for r in range(args.rounds):
            payloads = build_requests(r * traces + 1, args.requests, args.traces_per_request)
            rounds.append(pipeline.round(payloads, requests_per_tick))
        pipeline.close()
    print(f"{spans} spans a round ({traces} traces, {args.traces_per_request} a request, "
          f"{requests_per_tick * args.traces_per_request} a judge tick); best of {args.rounds} rounds, µs a span:")
    for stage in STAGES:
        print(f"  {stage:<16} {min(r[stage] for r in rounds) / spans * 1e6:6.2f}")
    print(f"  {'total':<16} {min(sum(r.values()) for r in rounds) / spans * 1e6:6.2f}")


if __name__ == "__main__":
    main()
