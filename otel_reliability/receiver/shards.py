"""Judging on several cores: ``workers`` processes share the traces by trace id.

One process cannot judge faster than the GIL lets it, so with ``workers: N`` (N > 1) the
serving process starts N worker processes, keeps for itself the servers, the results API
and ``/metrics``, and sends every request to all workers as bytes. Each worker reads only
the spans and log records of its own traces (trace id mod N, ``sources.Shard``), so all spans of a trace
meet in one process however they are split across requests, and each runs the same
``ReceiverService``: trace completion, judging, the shared store, reputation and
forwarding of its own spans. With ``workers: 1`` the serving process judges everything.

The answer to a request waits for every shard, and a request is taken by all of them or by
none (``admission``: each first reserves room for its share, then all commit or all
release): if any shard is full the client is told to retry and no shard keeps a part of
it. Spans a shard rejects as invalid are reported as partial success.

``/metrics`` adds up the shards' counters, histograms and buffered-trace gauges; the
gauges read from the shared stores (reputation) and the resource come from the serving
process alone. A run one shard judges paused is handed to the others, since the trace
that resumes it may belong to any of them. A session's turns are handed to the one shard
that gathers and judges that session (``session_shard``), unless the store is PostgreSQL,
which shares them between every receiver and shard.

Each shard's process, its main loop and the pipe to it are ``receiver.shard_process``.
"""

from __future__ import annotations

from typing import Any, Iterable

from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric

from ..engine import Turn
from ..model import SpanRecord
from ..sources import Shard
from .config import ReceiverConfig
from .inflight import DECODE_FACTOR, INFLIGHT_BYTES, InflightGate
from .intake import Body, IntakeError
from .outcomes import OVERLOADED, Accepted, Overloaded
from .service import ReceiverService
from .shard_process import ShardWorker

WORKER_DOWN = "worker_down"  # a refusal's reason: a worker did not answer (503 / UNAVAILABLE, retryable)
# what each shard holds: the total is the sum
SUMMED_GAUGES = (
    "agent_reliability_traces_buffered", "agent_reliability_traces_pending", "agent_reliability_buffer_size_bytes",
    "agent_reliability_intake_log_size_bytes",
)
# 1 while no shard's runs matched the expectation: the least over the workers (the serving
# process judges nothing, so its own value would say 1 forever)
LEAST_GAUGES = ("agent_reliability_expectations_unmatched",)


class ShardedReceiver:
    """The serving process's face of N shards: the same surface the servers use of a
    ``ReceiverService`` (``accept``, ``metrics_text``, ``store``, ``reputation``…).

    >>> from otel_reliability.receiver.config import ReceiverConfig
    >>> receiver = ShardedReceiver(ReceiverConfig(store=":memory:", workers=1))
    >>> receiver.stop()
    """

    def __init__(self, config: ReceiverConfig) -> None:
        count = config.workers
        self.config = config
        # With workers, this service judges nothing (no request reaches its ``accept``): it
        # holds the store and reputation the API reads, and the instruments only the
        # serving process records (request latency) or reads from the shared stores.
        self._local = ReceiverService(config, log_intake=count == 1)  # each worker logs its own share
        self.store = self._local.store
        self.reputation = self._local.reputation
        self.request_duration = self._local.request_duration
        self.metrics = self._local.metrics  # what the serving process counts itself: refusals
        self.inflight = InflightGate(config.inflight_limit())
        self._workers: list[ShardWorker] = []
        try:
            for index in range(count) if count > 1 else ():  # appended one by one: a failure stops those started
                self._workers.append(ShardWorker(config, Shard(index, count), self._hand_on_paused, self._hand_on_turn))
            for worker in self._workers:
                worker.wait_ready()
        except BaseException:
            self.stop()
            raise

    def start(self) -> None:
        self._local.start(judge_thread=not self._workers)  # with workers it has nothing to judge

    def stop(self) -> None:
        """Every shard judges what has a run span, flushes and closes (see ``ReceiverService.stop``)."""
        for worker in self._workers:
            worker.ask_to_stop()
        self._local.stop()
        for worker in self._workers:
            worker.join()

    def accept(self, body: Body) -> Accepted:
        """Take the request if its decoding fits ``max_inflight_bytes`` (``inflight``), else
        refuse it retryably; see ``_accept``."""
        cost = DECODE_FACTOR * len(body.data)
        if not self.inflight.try_acquire(cost):
            self.metrics.refused(INFLIGHT_BYTES)
            raise Overloaded(self.config.retry_after, INFLIGHT_BYTES)
        try:
            return self._accept(body)
        finally:
            self.inflight.release(cost)

    def _accept(self, body: Body) -> Accepted:
        """Every shard takes its spans of the request, or none does; raises what the first
        failing shard raised."""
        if not self._workers:
            return self._local.accept(body)
        asked = [(worker, worker.call("reserve", body.media_type, body.signal, payload=body.data)) for worker in self._workers]
        reserved: list[tuple[ShardWorker, int]] = []
        refusal: IntakeError | Overloaded | None = None
        for worker, reply in asked:
            try:
                answer = worker.result(reply)
            except IntakeError as down:
                refusal = refusal or down
                continue
            if answer is None:
                reserved.append((worker, reply.call_id))  # type: ignore[attr-defined]  # ShardWorker.call names each reply
            else:
                refusal = refusal or Overloaded(*answer)
        if refusal is not None:
            reason = refusal.reason if isinstance(refusal, Overloaded) else OVERLOADED
            for worker, call_id in reserved:
                worker.tell("release", call_id, reason)
            # once per request, here: each shard counts its own spans
            self.metrics.refused(reason if isinstance(refusal, Overloaded) else WORKER_DOWN)
            raise refusal
        pending = [worker.call("commit", call_id) for worker, call_id in reserved]
        outcomes = [_outcome(worker.result(reply)) for worker, reply in zip(self._workers, pending, strict=True)]
        for outcome in outcomes:
            if isinstance(outcome, IntakeError):
                raise outcome
        for outcome in outcomes:
            if isinstance(outcome, Overloaded):
                raise outcome
        # every outcome is Accepted here: the loops above raised any other
        return Accepted([reason for outcome in outcomes if isinstance(outcome, Accepted) for reason in outcome.reasons])

    def not_ready(self) -> list[str]:
        """Why the receiver cannot take work now, every worker asked (``/readyz``); empty when it can."""
        if not self._workers:
            return self._local.not_ready()
        pending = [(worker, worker.call("readiness")) for worker in self._workers]
        reasons = []
        for worker, reply in pending:
            try:
                reasons += [f"worker {worker.shard.index}: {reason}" for reason in worker.result(reply)]
            except IntakeError as down:
                reasons.append(str(down))
        return reasons

    def metrics_text(self) -> bytes:
        pending = [worker.call("metrics") for worker in self._workers]
        families = list(self._local.registry.collect())
        others: list[Metric] = []
        for worker, reply in zip(self._workers, pending, strict=True):
            try:
                others.extend(worker.result(reply))
            except IntakeError:  # a shard that is down: report the others (its absence is logged)
                continue
        return generate_latest(_Families(merge_families(families, others)))

    def _hand_on_paused(self, keys: list[str], records: list[SpanRecord], origin: int) -> None:
        for worker in self._workers:
            if worker.shard.index != origin:
                worker.tell("paused", keys, records)

    def _hand_on_turn(self, owner: int, session_id: str, turn: Turn) -> None:
        self._workers[owner].tell("turn", session_id, turn)


def _outcome(reply: tuple) -> Accepted | IntakeError | Overloaded:
    kind, *details = reply
    if kind == "invalid":
        return IntakeError(*details)
    if kind == "overloaded":
        return Overloaded(*details)
    return Accepted(*details)


def merge_families(own: list[Metric], others: Iterable[Metric]) -> list[Metric]:
    """``own`` with the other shards' samples added: counters, histograms and the gauges in
    ``SUMMED_GAUGES`` sum per label set; any other family is the serving process's alone."""
    by_name = {family.name: family for family in own}
    totals: dict[str, dict[tuple, float]] = {}
    others = list(others)
    least: dict[str, dict[tuple, float]] = {}
    for family in others:
        if family.name in LEAST_GAUGES:
            kept = least.setdefault(family.name, {})
            for sample in family.samples:
                key = _sample_key(sample)
                kept[key] = min(kept.get(key, sample.value), sample.value)
    for name, values in least.items():
        mine = by_name.get(name)
        if mine is not None:
            mine.samples = []
            for (sample_name, labels), value in values.items():
                mine.add_sample(sample_name, dict(labels), value)
    for family in others:
        if family.type not in ("counter", "histogram") and family.name not in SUMMED_GAUGES:
            continue
        mine = by_name.get(family.name)
        if mine is None:
            mine = by_name[family.name] = Metric(family.name, family.documentation, family.type, family.unit)
        sums = totals.get(family.name)
        if sums is None:
            sums = totals[family.name] = {_sample_key(s): s.value for s in mine.samples}
        for sample in family.samples:
            key = _sample_key(sample)
            sums[key] = sums.get(key, 0.0) + sample.value
    for name, sums in totals.items():
        family = by_name[name]
        family.samples = []
        for (sample_name, labels), value in sums.items():
            family.add_sample(sample_name, dict(labels), value)
    return list(by_name.values())


def _sample_key(sample: Any) -> tuple:
    return sample.name, tuple(sorted(sample.labels.items()))


class _Families:
    """What ``generate_latest`` asks of a registry."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families
