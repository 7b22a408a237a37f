"""The receiver's core: decodes OTLP into records for the engine, and forwards spans.

Both servers call ``accept``, for traces and for logs (GenAI event log records become the
engine's event records, joined to their spans when judged; logs are not forwarded); a judge
thread ticks the engine's quiet rule (a trace is due once its run span has arrived and it
has been quiet for ``decision_wait``). Judging,
paused runs, and the verdicts' sinks (store, metrics, reputation) are the engine's.

Unless ``durability`` is ``none``, every accepted request is in the intake log
(``intake_log``) before ``accept`` returns, and a new service replays the log it finds
before it takes requests: what was acknowledged and not yet judged is judged after a crash.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import zlib
from typing import Callable

from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, generate_latest

from ..adapters import conventions, to_event_record, to_record
from ..emitters.metrics import ReliabilityMetrics
from ..emitters.sinks import MetricsSink, StoreSink
from ..engine import CallbackSink, Engine, Judged, Pipeline, Sink, Turn
from ..engine.pipeline import PausedHook
from ..engine.reload import REFUSED, RELOADED, Reloaded, reload_expectations
from ..expectations import ExpectationError
from ..engine.unmatched import log_unmatched
from ..model import SpanRecord
from ..reputation import Reputation, ReputationSink
from ..results import RunResult
from ..sources import WHOLE, Shard
from ..sources.unicode_repair import LONE_SURROGATE
from ..stores import open_paused_runs, open_shared_sessions, open_store
from ..suppression import suppress_instrumentation_in_this_thread
from .config import ReceiverConfig
from .forwarding import Forwarder
from .held_runs import HeldRunSpans
from .intake import LOGS, Body, IntakeError, Payload, read_payload
from .intake_log import IntakeLog, Logged, TraceLedger
from .intake_startup import open_intake_log, replay
from .intake_metrics import IntakeLogMetrics
from .outcomes import (
    INTAKE_LOG_FULL, INTAKE_LOG_UNWRITABLE, OVERLOADED, SOFT_BYTE_LIMIT, VERDICTS_HELD, Accepted, Overloaded,
)

logger = logging.getLogger(__name__)


class ReceiverService:
    """Intake, trace completion and judging; the servers are thin edges around it.

    With ``workers`` > 1 each process runs one of these for its ``shard`` of the traces
    (``ShardedReceiver``). Paused runs are kept in the results store (a SQLite file or
    PostgreSQL: ``open_paused_runs``) and shared through it with every receiver and shard
    that writes there, a receiver started after a crash included; only a store in memory or
    JSON Lines keeps them in memory, and then ``on_paused`` hands a paused run to the other
    shards, since the trace that resumes it may be another shard's. A shard keeps no intake
    log (the serving process does): ``ledger`` is told which traces enter and leave its buffer.
    """

    def __init__(
        self, config: ReceiverConfig, shard: Shard = WHOLE, on_paused: PausedHook | None = None,
        on_turn: Callable[[int, str, Turn], None] | None = None, *, log_intake: bool = True,
        ledger: TraceLedger | None = None, routed_log: IntakeLog | None = None,
    ) -> None:
        self.config = config
        self.shard = shard
        self._max_buffered_spans = max(1, config.max_buffered_spans // shard.count)
        # Conventions and expectations first: a file that cannot be read must fail before anything is created on disk.
        conventions.use(config.conventions)
        engine = Engine(config.expectations)
        self.store = open_store(config.store, create_parents=config.mkdir)
        settings = config.engine_settings()
        if shard.count > 1:  # each shard buffers its share of the traces: a share of the budget
            settings = settings.model_copy(update={"max_buffered_bytes": settings.max_buffered_bytes // shard.count})
        self._soft_buffered_bytes = settings.soft_buffered_bytes
        self.shared_paused = open_paused_runs(config.store, settings.max_paused_runs)
        self.registry = CollectorRegistry()
        readers: list[MetricReader] = [PrometheusMetricReader(registry=self.registry)]
        if config.metrics_endpoint:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            readers.append(
                PeriodicExportingMetricReader(
                    OTLPMetricExporter(endpoint=config.metrics_endpoint),
                    export_interval_millis=int(config.metrics_interval * 1000),
                )
            )
        # Shards push their metrics over OTLP each as an instance of their own.
        resource = Resource.create({"otel_reliability.shard": shard.index}) if shard.count > 1 else Resource.create()
        self.meter_provider = MeterProvider(metric_readers=readers, resource=resource)
        self.metrics = ReliabilityMetrics(self.meter_provider)
        meter = self.meter_provider.get_meter("otel_reliability.receiver")
        self._received = meter.create_counter(
            "agent.reliability.spans.received", unit="{span}", description="Spans accepted by the receiver"
        )
        self._logs_received = meter.create_counter(
            "agent.reliability.log_records.received", unit="{log_record}",
            description="Log records accepted by the receiver (GenAI events are kept for judging)",
        )
        self.request_duration = meter.create_histogram(
            "agent.reliability.receiver.request.duration",
            unit="s",
            description="Time to handle one OTLP request",
            explicit_bucket_boundaries_advisory=[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
        )
        self.intake_log = open_intake_log(config) if log_intake else None
        # The serving process of shards counts its own (routed) log here: it has no other.
        self.log_metrics = IntakeLogMetrics(meter, self.intake_log or routed_log)
        tracked = self.intake_log if self.intake_log is not None else ledger
        engine = Engine(config.expectations)
        self._judges = log_intake or shard.count > 1  # a sharded receiver's serving process judges nothing
        self.engine = engine
        # Only when something judges sessions: otherwise no turn is kept, so none is shared.
        self.shared_sessions = (
            open_shared_sessions(config.store, settings.session_idle)
            if any(e.scope == "session" for e in engine.expectations)
            else None
        )
        self.reputation = (
            Reputation(config.reputation_store or config.store, meter_provider=self.meter_provider,
                       expectations=engine.expectations)
            if config.reputation
            else None
        )
        self.judged = self.failed = 0  # verdicts since start, for the shutdown log
        self.unjudged: list[int] = []  # after ``stop``: the traces it could not judge (no run span yet) or store
        stored = StoreSink(self.store, on_dropped=lambda count, reason: self.metrics.verdicts_dropped(count, "store", reason))
        sinks: list[Sink] = [stored, MetricsSink(self.metrics), CallbackSink(self._tally, name="tally")]
        if self.reputation is not None:
            sinks.append(ReputationSink(self.reputation))
        self.pipeline = Pipeline(
            engine, sinks, settings=settings, decision_wait=config.decision_wait, observer=self.metrics,
            # A shared store already tells the other shards: handing the run on too would judge twice.
            on_paused=None if self.shared_paused is not None else on_paused, paused=self.shared_paused,
            shared_sessions=self.shared_sessions,
            # Without a shared store, each session is gathered by one shard: the others hand it their turns.
            hand_on_turn=self._hand_on_turn if on_turn is not None and self.shared_sessions is None else None,
            on_trace_enter=tracked.trace_entered if tracked is not None else None,
            on_trace_leave=tracked.trace_left if tracked is not None else None,
        )
        self._on_turn = on_turn
        self.metrics.register_buffered(lambda: len(self.pipeline))
        self.metrics.register_unmatched(engine.use.states)
        self.metrics.register_pending(lambda: self.pipeline.buffer.pending)
        self.metrics.register_buffered_bytes(lambda: self.pipeline.buffered_bytes)
        self.metrics.register_held(lambda: {sink: count for sink, (count, _) in self.pipeline.held.reasons().items()})
        self.forwarder = (
            Forwarder(config.forward_endpoint, config.forward_headers, config.forward_queue_size)
            if config.forward_endpoint
            else None
        )
        # Intake and the held run spans share one lock: a run span is held before its trace can be judged.
        self._lock = threading.Lock()
        self._held = HeldRunSpans(self.forwarder, shard, config.max_traces, self._lock) if self.forwarder else None
        self._stop = threading.Event()
        self._judge_thread = threading.Thread(target=self._judge_loop, name="otel-reliability-judge", daemon=True)
        if self.intake_log is not None:
            self._replay(self.intake_log)

    @property
    def judge_interval(self) -> float:
        """Seconds between two looks for traces that became due."""
        return min(0.1, self.config.decision_wait / 4)

    def start(self, judge_thread: bool = True) -> None:
        """Start forwarding and, unless the caller calls ``judge_tick`` itself, the judge thread."""
        if self.forwarder is not None:
            self.forwarder.start()
        if judge_thread:
            self._judge_thread.start()

    def stop(self) -> None:
        """Judge what has a run span, whether or not it went quiet; flush and close the store."""
        self._stop.set()
        if self._judge_thread.is_alive():
            self._judge_thread.join(timeout=30)
        buffered = len(self.pipeline)
        judged_before = self.judged
        self._release_all(self.pipeline.drain())
        self.pipeline.end_sessions()  # the end of this receiver's input: its sessions are as whole as they get
        if self._held is not None:  # held only when forwarding
            self._held.forward_unjudged()
        if self.forwarder is not None:
            self.forwarder.stop()
        self.pipeline.close()
        self.unjudged = self.pipeline.buffer.unjudged() + self.pipeline.held.trace_ids()
        waiting = len(self.pipeline.buffer.unjudged())  # no run span yet: nothing to judge them by
        if self.intake_log is not None:  # after the store closed: what was judged is stored, or held and kept
            self.intake_log.close(unjudged=self.unjudged)
        if self.shared_paused is not None:
            self.shared_paused.close()
        if self.shared_sessions is not None:
            self.shared_sessions.close()
        if self.reputation is not None:
            self.reputation.close()
        self.meter_provider.shutdown()
        if self._judges:
            log_unmatched(self.engine.use, f"otel-reliability receiver{'' if self.shard.count == 1 else f' shard {self.shard.index}'}")
        logger.info(
            "otel-reliability receiver%s stopped: %d run(s) judged since start (%d failed), %d of them at "
            "shutdown from %d buffered trace(s); %d trace(s) with no run span yet %s; verdicts flushed to %s%s",
            "" if self.shard.count == 1 else f" shard {self.shard.index}", self.judged, self.failed,
            self.judged - judged_before, buffered, waiting,
            f"stay in the intake log ({self.intake_log.directory}) for the next start" if self.intake_log is not None
            else "are dropped (no intake log: durability none)",
            self.config.store,
            f", spans forwarded to {self.config.forward_endpoint}" if self.forwarder is not None else "",
        )

    def _tally(self, result: RunResult) -> None:
        self.judged += 1
        self.failed += not result.passed

    def accept(self, body: Body) -> Accepted:
        """Buffer the spans of one request that this shard owns, logged durably first (see
        ``durability``); raises ``IntakeError`` when the body is not OTLP and ``Overloaded``
        when the buffer or the intake log is full."""
        accepted, ticket = self.take(body)
        if ticket:
            try:
                self.intake_log.wait_durable(ticket)  # type: ignore[union-attr]  # a ticket comes from the log
            except OSError as exc:  # not on disk, so not acknowledged: the client retries
                logger.error("otel-reliability could not flush the intake log: %s", exc)
                raise IntakeError(503, "UNAVAILABLE", f"receiver could not write its intake log ({exc}); retry later") from exc
        return accepted

    def take(self, body: Body, replaying: set[int] | None = None, bounded: bool = True) -> tuple[Accepted, int]:
        """``accept`` without waiting for the intake log: also returns the ticket to pass to
        ``intake_log.wait_durable`` before answering (0 when nothing was logged). ``replaying``:
        the traces whose spans a replayed request may add; the bounds do not refuse a replay,
        nor a request the serving process admitted on this shard's credits (``bounded`` False)."""
        bounded = bounded and replaying is None
        payload = read_payload(body, self.shard)
        if payload.decoded.repaired and replaying is None:  # counted when it came, not again
            self.metrics.text_repaired(payload.decoded.repaired, LONE_SURROGATE)
        if replaying is not None:
            decoded = payload.decoded
            decoded.spans = [span for span in decoded.spans if span.trace_id in replaying]
            decoded.logs = [log for log in decoded.logs if log.trace_id in replaying]
        if body.signal == LOGS:
            return self._accept_logs(payload, body, bounded)
        decoded = payload.decoded
        records = [to_record(span) for span in decoded.spans]
        with self._lock:  # one request at a time: the bound is checked against what it adds
            if bounded:
                self._refuse_when_full(len(records), len(body.data), self.metrics.spans_dropped)
            refused = self.pipeline.add(records, time.monotonic())
            ticket = self._log(body, records)
            if self._held is not None and replaying is None:  # a replayed span was forwarded when it came
                self._held.forward_holding_runs(payload, records)
        reasons = decoded.rejected + refused
        if decoded.rejected:
            self.metrics.spans_dropped(len(decoded.rejected), "invalid")
        if refused:
            self.metrics.spans_dropped(len(refused), "trace_full")
        self._received.add(len(records) - len(refused))
        return Accepted(reasons), ticket

    def _accept_logs(self, payload: Payload, body: Body, bounded: bool) -> tuple[Accepted, int]:
        """Buffer the GenAI event records of one logs request; other log records are accepted
        and dropped (nothing judges them). The same bound as spans: a full buffer refuses."""
        decoded = payload.decoded
        events = [event for event in map(to_event_record, decoded.logs) if event is not None]
        with self._lock:
            if events and bounded:
                self._refuse_when_full(len(events), len(body.data), self.metrics.log_records_dropped)
            refused = self.pipeline.add_events(events, time.monotonic()) if events else []
            ticket = self._log(body, events)
        if decoded.rejected:
            self.metrics.log_records_dropped(len(decoded.rejected), "invalid")
        if refused:
            self.metrics.log_records_dropped(len(refused), "trace_full")
        self._logs_received.add(len(decoded.logs) - len(refused))
        return Accepted(decoded.rejected + refused), ticket

    def _refuse_when_full(self, count: int, body_bytes: int, dropped: Callable[[int, str], None]) -> None:
        refusal = self._refusal(count, body_bytes)
        if refusal is not None:
            dropped(count, refusal)
            self.metrics.refused(refusal)
            raise Overloaded(self.retry_after(refusal), refusal)

    def retry_after(self, refusal: str) -> int:
        """Seconds a refused client is told to wait: ``retry_after``, or at the soft byte limit
        until judged traces leaving make room (their late windows end on this receiver's
        clock), so that an exporter's few retries are not spent before any room can be made."""
        if refusal != SOFT_BYTE_LIMIT:
            return self.config.retry_after
        limit = self._soft_buffered_bytes - self.pipeline.paused.bytes
        wait = self.pipeline.buffer.seconds_until_below(limit, time.monotonic())
        if wait is None:
            return self.config.retry_after
        return max(self.config.retry_after, math.ceil(wait + self.judge_interval))

    def log_has_room(self, body_bytes: int) -> bool:
        """Whether the intake log can take a request of ``body_bytes`` (always, without a log)."""
        return self.intake_log is None or self.intake_log.has_room(body_bytes)

    def log_writable(self) -> bool:
        """Whether the intake log can be written (always, without a log); a faulted log tries to recover first."""
        return self.intake_log is None or self.intake_log.probe()

    def _log(self, body: Body, records: list) -> int:
        """Append the request to the intake log when this shard kept something of it. The body
        goes as received: replaying it rejects the same spans again (decoding and the bounds
        per trace are deterministic, and a trace's every request since it entered the buffer
        is replayed with it), so what replays is what was accepted."""
        if self.intake_log is None or not records:
            return 0
        try:
            return self.intake_log.append(
                Logged(body.signal, body.media_type, body.data), {record.trace_id for record in records}
            )
        except OSError as exc:  # e.g. the disk is full: not logged, so not acknowledged (the retry is deduplicated)
            logger.error("otel-reliability could not append to the intake log: %s", exc)
            raise IntakeError(503, "UNAVAILABLE", f"receiver could not write its intake log ({exc}); retry later") from exc

    def _replay(self, log: IntakeLog) -> None:
        replayed = replay(log, lambda body, alive: self.take(body, replaying=alive)[1])
        self.log_metrics.replayed(log, replayed, "" if self.shard.count == 1 else f" shard {self.shard.index}")

    def _buffered(self) -> int:
        """Spans and event records held: ``max_buffered_spans`` bounds both together."""
        return self.pipeline.buffered_spans + self.pipeline.buffered_events

    def room(self) -> int:
        """Spans the buffer can still take before requests are refused as overloaded."""
        return self._max_buffered_spans - self._buffered()

    def _hand_on_turn(self, session_id: str, turn: Turn) -> bool:
        owner = session_shard(session_id, self.shard.count)
        if owner == self.shard.index:
            return False
        self._on_turn(owner, session_id, turn)  # type: ignore[misc]  # set whenever this is called
        return True

    def keep_turn(self, session_id: str, turn: Turn) -> None:
        """Keep a turn of a session this shard gathers, judged by another shard."""
        self.pipeline.sessions.keep_turn(session_id, turn, time.monotonic())

    def byte_room(self) -> int:
        """Bytes the buffer can still take before it reaches the soft limit (a shard's credit)."""
        return self._soft_buffered_bytes - self.pipeline.buffered_bytes

    def at_soft_byte_limit(self) -> bool:
        """The buffered bytes reached the soft limit: new data is refused until judging or
        expiry frees some (the hard limit, ``max_buffered_bytes``, evicts instead)."""
        return self.pipeline.buffered_bytes >= self._soft_buffered_bytes

    def _refusal(self, incoming: int, body_bytes: int) -> str | None:
        """Why a request of ``incoming`` spans (or event records) and ``body_bytes`` is refused now, or None."""
        if self._buffered() + incoming > self._max_buffered_spans:
            return OVERLOADED
        if self.at_soft_byte_limit():
            return SOFT_BYTE_LIMIT
        if incoming and not self.log_has_room(body_bytes):
            return INTAKE_LOG_FULL
        if incoming and not self.log_writable():
            return INTAKE_LOG_UNWRITABLE
        if self.pipeline.held.at_bound:
            return VERDICTS_HELD
        return None

    def keep_paused(self, keys: list[str], records: list[SpanRecord]) -> None:
        """Remember a run another shard judged paused, for the trace that may resume it here."""
        self.pipeline.keep_paused(keys, records)

    def metrics_text(self) -> bytes:
        return generate_latest(self.registry)

    def judge_due(self) -> None:
        judged, expired = self.pipeline.tick(time.monotonic())
        self._release_all(judged)
        if self._held is not None:
            for trace in expired:
                self._held.release(trace.trace_id, [])

    def _release_all(self, judged: list[Judged]) -> None:
        if self._held is not None:
            for trace in judged:
                self._held.release(trace.trace_id, [j.result for j in trace.judgements])

    def judge_tick(self) -> None:
        """``judge_due``, logging what went wrong instead of raising: the next traces are judged
        whatever one did. The intake log is probed on each tick, so that readiness comes back
        once its disk does, and a deletion its directory refused is retried, whether or not a
        request arrives."""
        try:
            self.judge_due()
        except Exception:
            logger.exception("otel-reliability receiver failed while judging")
        if self.intake_log is not None:
            self.intake_log.probe()

    def reload_expectations(self, counted: bool = True) -> Reloaded:
        """The expectation files read again, all or nothing (``engine/reload.py``); logged, and
        counted unless a shard asks (the serving process counts a reload once)."""
        try:
            reloaded = reload_expectations(self.pipeline, self.config.expectations)
        except ExpectationError as exc:
            if counted:
                self.metrics.expectations_reloaded(REFUSED)
            logger.warning("expectations not reloaded, the old ones stay in force: %s", exc)
            raise
        if counted:
            self.metrics.expectations_reloaded(RELOADED)
        logger.info("expectations reloaded: %s", reloaded.describe())
        return reloaded

    def not_ready(self) -> list[str]:
        """Why this receiver cannot take work now (``/readyz``); empty when it can."""
        log = self.intake_log
        reasons = [] if log is None or log.ready else [f"intake log {log.directory}: {log.fault}"]
        return reasons + [
            f"sink {sink}: {count} verdict(s) held ({reason}), retried with backoff"
            for sink, (count, reason) in self.pipeline.held.reasons().items()
        ]

    def _judge_loop(self) -> None:
        suppress_instrumentation_in_this_thread()
        while not self._stop.wait(self.judge_interval):
            self.judge_tick()


def session_shard(session_id: str, count: int) -> int:
    """The shard that gathers and judges a session: the same in every process (no salted hash).

    >>> session_shard("conv-1", 1)
    0
    """
    return zlib.crc32(session_id.encode("utf-8")) % count
