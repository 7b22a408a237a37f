"""Judging on several cores: ``workers`` processes share the traces by trace id.

One process cannot judge faster than the GIL lets it, so with ``workers: N`` (N > 1) the
serving process starts N shard processes and keeps for itself the servers, the results API,
``/metrics`` and **the one intake log**. Each accepted request is read for its trace ids
only (``sources.trace_ids``), appended once to the log under the next record number, and
sent to the shards that own its traces (trace id mod N), which decode only their own spans;
its answer goes out after the flush that covers it (group commit), without waiting for any
shard. A shard is **admitted on credits** (``credits``): the room in spans and bytes it last
reported, less what was sent to it since; a request some shard has no credit for is
refused whole, retryably, and no shard sees a part of it.

Each shard reports, with its credits, the oldest record it still holds a trace from: a
segment is released once every shard let go of the traces it holds from it. At start the
serving process replays the log to the shards before it listens, and a shard that dies is
started again and given back its traces from the log (``shard_replay``); requests with
spans for it are refused retryably (``worker_down``) until it is back.

``/metrics`` adds up the shards' counters, histograms and buffered-trace gauges; the
gauges read from the shared stores (reputation) and the resource come from the serving
process alone. A run one shard judges paused is handed to the others, since the trace
that resumes it may belong to any of them. A session's turns are handed to the one shard
that gathers and judges that session (``session_shard``), unless the store is PostgreSQL,
which shares them between every receiver and shard.

Each shard's process, its main loop and the pipe to it are ``receiver.shard_process``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Iterable

from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric

from ..engine import Turn
from ..engine.reload import Reloaded
from ..expectations import ExpectationError
from ..model import SpanRecord
from ..sources import Shard, TraceInputError
from ..sources.trace_ids import request_trace_ids
from .config import ReceiverConfig
from .credits import Credits
from .inflight import DECODE_FACTOR, INFLIGHT_BYTES, InflightGate
from .intake import JSON, LOGS, Body, IntakeError
from .intake_births import births_note
from .intake_log import Logged
from .intake_startup import open_intake_log
from .outcomes import INTAKE_LOG_FULL, INTAKE_LOG_UNWRITABLE, SOFT_BYTE_LIMIT, Accepted, Overloaded
from .service import ReceiverService
from .shard_process import Report, ShardWorker
from .shard_replay import replay_at_start, replay_to_shard

logger = logging.getLogger(__name__)

WORKER_DOWN = "worker_down"  # a refusal's reason: a shard is down, being restarted (503 / UNAVAILABLE, retryable)
# what each shard holds: the total is the sum
SUMMED_GAUGES = (
    "agent_reliability_traces_buffered", "agent_reliability_traces_pending", "agent_reliability_buffer_size_bytes",
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
        self.count = count
        self.log = open_intake_log(config, routed=True) if count > 1 else None
        # With workers, this service judges nothing (no request reaches its ``accept``): it
        # holds the store and reputation the API reads, and the instruments only the
        # serving process records (request latency, refusals, its log) or reads from the shared stores.
        self._local = ReceiverService(config, log_intake=count == 1, routed_log=self.log)
        self.store = self._local.store
        self.reputation = self._local.reputation
        self.request_duration = self._local.request_duration
        self.metrics = self._local.metrics
        self.inflight = InflightGate(config.inflight_limit())
        self._intake = threading.Lock()  # record numbers, the log's order and each shard's order agree
        self._seq = 0  # the last record number given; 0 is a log of one process's
        self._stopping = False
        spans_share = max(1, config.max_buffered_spans // max(1, count))
        bytes_share = int(config.engine_settings().soft_buffered_bytes // max(1, count))
        self._fresh_credits = lambda: Credits(spans_share, bytes_share, self.config.retry_after)
        self._credits = [self._fresh_credits() for _ in range(count if count > 1 else 0)]
        self._low_water = [0] * count
        self._noted = [-1] * count  # the last record number each shard's births were noted up to
        self._started = False  # every shard started and the log replayed: a stop may write a checkpoint
        self._reloading = threading.Lock()
        self._workers: list[ShardWorker] = []
        try:
            for index in range(count) if count > 1 else ():  # appended one by one: a failure stops those started
                self._workers.append(self._start_worker(index))
            for worker in self._workers:
                worker.wait_ready()
            if self.log is not None:
                with self._intake:
                    replayed = replay_at_start(self.log, count, self._replay_send, self._next_seq)
                self._local.log_metrics.replayed(self.log, replayed, "")
            self._started = True
        except BaseException:
            self.stop()
            raise

    def _start_worker(self, index: int) -> ShardWorker:
        return ShardWorker(self.config, Shard(index, self.count), self._hand_on_paused, self._hand_on_turn,
                           self._reported, self._exited)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _replay_send(self, index: int, seq: int, body: Body, alive: set[int]) -> None:
        self._workers[index].take(seq, body, alive)

    def start(self) -> None:
        self._local.start(judge_thread=not self._workers)  # with workers it has nothing to judge

    def stop(self) -> None:
        """Every shard judges what has a run span, flushes and closes (see ``ReceiverService.stop``);
        the log keeps what they could not judge, named in its checkpoint."""
        self._stopping = True
        for worker in self._workers:
            worker.ask_to_stop()
        self._local.stop()
        unjudged: list[int] | None = [] if self._started else None
        for worker in self._workers:
            try:
                left = worker.stopped.result(timeout=120)  # it judges what has a run span first
            except TimeoutError:
                left = None
            worker.join()
            unjudged = None if left is None or unjudged is None else unjudged + left
        if self.log is not None:
            self.log.close(unjudged=unjudged)  # None: a shard could not say; every segment stays

    def accept(self, body: Body) -> Accepted:
        """Take the request if its decoding fits ``max_inflight_bytes`` (``inflight``), else
        refuse it retryably; see ``_route``."""
        cost = DECODE_FACTOR * len(body.data)
        if not self.inflight.try_acquire(cost):
            self.metrics.refused(INFLIGHT_BYTES)
            raise Overloaded(self.config.retry_after, INFLIGHT_BYTES)
        try:
            return self._route(body) if self._workers else self._local.accept(body)
        finally:
            self.inflight.release(cost)

    def _route(self, body: Body) -> Accepted:
        """Log the request once and send each shard its traces, or refuse it whole; the answer
        waits for the log's flush, never for a shard."""
        try:
            ids = request_trace_ids(body.data, json=body.media_type == JSON, logs=body.signal == LOGS)
        except TraceInputError as exc:
            raise IntakeError(400, "INVALID_ARGUMENT", str(exc)) from exc
        count = self.count
        shares = [0] * count
        for trace_id, items in ids.counts.items():
            shares[trace_id % count] += items
        if ids.unowned:  # shard 0 rejects (and counts) malformed ids, and takes log records of no trace
            shares[0] += ids.unowned
        # OTLP/JSON is decoded whole by every shard, and shard 0 alone counts what it rejects or repairs
        targets = [index for index in range(count) if shares[index] or (index == 0 and body.media_type == JSON)]
        if not targets:
            return Accepted([])
        per_item = len(body.data) / max(1, ids.items)
        ticket = 0
        with self._intake:
            self._refuse_unless_admitted(body, targets, shares, per_item, ids.items)
            seq = self._next_seq()
            if self.log is not None:
                try:
                    ticket = self.log.append(Logged(body.signal, body.media_type, body.data, seq=seq), ())
                except OSError as exc:  # e.g. the disk is full: not logged, so not acknowledged
                    logger.error("otel-reliability could not append to the intake log: %s", exc)
                    raise IntakeError(503, "UNAVAILABLE", f"receiver could not write its intake log ({exc}); retry later") from exc
            for index in targets:
                self._credits[index].charge(seq, shares[index], int(shares[index] * per_item))
                self._workers[index].take(seq, body)
        if ticket:
            try:
                self.log.wait_durable(ticket)  # type: ignore[union-attr]  # a ticket comes from the log
            except OSError as exc:  # not on disk, so not acknowledged: the client retries
                logger.error("otel-reliability could not flush the intake log: %s", exc)
                raise IntakeError(503, "UNAVAILABLE", f"receiver could not write its intake log ({exc}); retry later") from exc
        return Accepted(ids.rejected)

    def _refuse_unless_admitted(self, body: Body, targets: list[int], shares: list[int], per_item: float,
                                items: int) -> None:
        log = self.log
        reason = None
        retry_after = self.config.retry_after
        if log is not None and not log.has_room(len(body.data)):
            reason = INTAKE_LOG_FULL
        elif log is not None and not log.probe():
            reason = INTAKE_LOG_UNWRITABLE
        else:
            for index in targets:
                if not self._workers[index].alive:
                    self.metrics.refused(WORKER_DOWN)
                    raise IntakeError(503, "UNAVAILABLE", f"receiver worker {index} is restarting; retry later")
                reason = self._credits[index].refusal(shares[index], int(shares[index] * per_item))
                if reason is not None:
                    if reason == SOFT_BYTE_LIMIT:  # the shard knows when its buffer makes room
                        retry_after = self._credits[index].retry_after
                    break
        if reason is None:
            return
        dropped = self.metrics.log_records_dropped if body.signal == LOGS else self.metrics.spans_dropped
        dropped(items, reason)
        self.metrics.refused(reason)
        raise Overloaded(retry_after, reason)

    def _reported(self, index: int, report: Report) -> None:
        """A shard's report (its reader thread): its credits, its births into the log, and the
        segments no shard holds a trace from any more released."""
        self._credits[index].report(report.seq, report.spans, report.nbytes, report.refusal, report.retry_after)
        self._low_water[index] = report.low_water
        log = self.log
        if log is None:
            return
        try:
            if report.births or report.seq > self._noted[index]:
                log.append(births_note(self.count, index, report.seq, report.births), ())
                self._noted[index] = report.seq
            oldest = min(self._low_water)
            if log.releasable(oldest):
                log.sync()  # the births a replay needs are on disk before the records they follow go
                log.release_before(oldest)
        except OSError as exc:  # the log is faulted: segments stay, and requests are refused until it recovers
            logger.warning("otel-reliability could not note shard %d's births in the intake log: %s", index, exc)

    def _exited(self, index: int) -> None:
        """A shard died: start it again and give it its traces back, from a thread of its own."""
        if self._stopping:
            return
        logger.error("otel-reliability receiver worker %d exited; starting it again", index)
        threading.Thread(target=self._restart, args=(index,), name=f"otel-reliability-restart-{index}",
                         daemon=True).start()

    def _restart(self, index: int) -> None:
        old = self._workers[index]
        old.join()
        try:
            worker = self._start_worker(index)
            worker.wait_ready()
        except Exception:
            logger.exception("otel-reliability receiver worker %d could not be started again", index)
            return
        with self._intake:  # no new record meanwhile: the replay is all it must hold
            self._workers[index] = worker
            self._credits[index] = self._fresh_credits()
            self._noted[index] = -1
            sent = replay_to_shard(self.log, self.count, index, self._replay_send) if self.log is not None else 0
        logger.info("otel-reliability receiver worker %d is back; %d logged request(s) given back to it", index, sent)

    def not_ready(self) -> list[str]:
        """Why the receiver cannot take work now, every worker asked (``/readyz``); empty when it can."""
        if not self._workers:
            return self._local.not_ready()
        log = self.log
        reasons = [] if log is None or log.probe() else [f"intake log {log.directory}: {log.fault}"]
        pending = [(worker, worker.call("readiness")) for worker in self._workers]
        for worker, reply in pending:
            try:
                reasons += [f"worker {worker.shard.index}: {reason}" for reason in worker.result(reply)]
            except IntakeError as down:
                reasons.append(str(down))
        return reasons

    def reload_expectations(self) -> Reloaded:
        """Reload the expectation files (``SIGHUP``, ``POST /api/v1/reload``): validated by
        this process first, so a bad file reaches no shard; then every shard reloads them.
        ``ExpectationError`` when a file cannot be used (every set unchanged) or a shard
        refused (a file changed meanwhile: that shard keeps its old set; reload again)."""
        with self._reloading:  # one reload at a time: shards must not end on different sets
            reloaded = self._local.reload_expectations()
            pending = [(worker, worker.call("reload")) for worker in self._workers]
            refused = []
            for worker, reply in pending:
                try:
                    outcome, detail = worker.result(reply)
                except IntakeError as down:
                    outcome, detail = "refused", str(down)
                if outcome != "reloaded":
                    refused.append(f"worker {worker.shard.index}: {detail}")
            if refused:
                raise ExpectationError("; ".join(refused))
            return reloaded

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
