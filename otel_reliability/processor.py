"""``ReliabilitySpanProcessor``: the in-process front door.

It wraps the processor that exports (``BatchSpanProcessor(exporter)``), forwards every
span to it, and judges each top-level agent run when its span ends. The app thread
only queues the ended span (and holds back spans that may be run spans, so that the
copy it forwards carries the verdict); adapting, assembling and matching happen on a
worker thread, which forwards the held spans once judged.

GenAI event log records reach the same worker through ``log_record_processor()`` (a
``LogRecordProcessor`` for the app's ``LoggerProvider``); they join their spans before the
run is judged.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor

from .adapters import may_be_run, to_event_record, to_record
from .assembly.ownership import enclosing_run
from .emitters.metrics import ReliabilityMetrics
from .emitters.sinks import MetricsSink, PrintSink, StoreSink
from .emitters.span_attributes import evaluation_event, verdict_attributes
from .engine import CallbackSink, Engine, EngineSettings, Pipeline, Sink
from .expectations import DEFAULT_EXPECTATION, Expectation
from .inline import active_check, register_processor
from .log_processor import ReliabilityLogRecordProcessor
from .model import LogData, Role, SpanRecord
from .results import RunResult
from .session_results import SessionResult
from .sources.sdk import attributes_view, from_ended_span, from_readable_span, with_additions
from .stores import ResultStore, open_store, parse_store_spec
from .suppression import suppress_instrumentation_in_this_thread

if TYPE_CHECKING:
    from .reputation import Reputation

logger = logging.getLogger(__name__)

DEFAULT_STORE = "otel-reliability.db"
STORE_FROM_ENVIRONMENT = "$OTEL_RELIABILITY_STORE"  # read when the processor is made, not at import
_WAKE_EVERY = 1024  # also wake the worker each time this many spans wait
_IDLE_WAKE_SECONDS = 0.5  # and at least this often, so spans of unfinished runs get buffered
# After each batch the worker lets spans gather this long (unless drain() or shutdown()
# asks for it): every wake-up costs a GIL hand-over and cold caches. Waking once per run
# instead doubled the worker's CPU per trace when runs arrive as agents make them, and
# raised the app thread's (benchmarks/processor_overhead.py). In its paced loop 5-20 ms cost
# the worker 260-310 us a trace, 50 ms and more 213-240 us; drain() does not wait for it.
_BATCH_WINDOW_SECONDS = 0.05
_SWEEP_SECONDS = 1.0
_OPEN_END = sys.maxsize
_AGENT_RUN = Role.AGENT_RUN


@dataclass(slots=True)
class ProcessorStats:
    """What the processor did, for tests and debugging (the metrics carry the same)."""

    spans: int = 0
    runs_judged: int = 0
    traces_dropped: dict[str, int] = field(default_factory=dict)  # by reason, as ``Pipeline.traces_dropped``
    dropped: dict[str, int] = field(default_factory=dict)


class _Stop:
    pass


class _Watcher:
    """An ``expect(...)`` block as a sink for the one run it saw start."""

    __slots__ = ("name", "_check")

    def __init__(self, check: Any) -> None:
        self.name = "expect"
        self._check = check

    def publish(self, judgements: Sequence[Any]) -> None:
        for judgement in judgements:
            self._check.deliver(judgement.result)

    def close(self) -> None:
        pass


class ReliabilitySpanProcessor(SpanProcessor):
    """Judges every agent run's tool calls as its span ends, and forwards every span.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(
    ...     ReliabilitySpanProcessor(SimpleSpanProcessor(InMemorySpanExporter()), store=None))
    """

    def __init__(
        self,
        span_processor: SpanProcessor | None = None,
        *,
        expectations: Sequence[Expectation | str | Path] = (),
        default_expectation: Expectation = DEFAULT_EXPECTATION,
        store: str | Path | ResultStore | None = STORE_FROM_ENVIRONMENT,
        meter_provider: Any = None,
        on_result: Callable[[RunResult], None] | None = None,
        print_results: bool = False,
        sinks: Sequence[Sink] = (),
        reputation: Reputation | None = None,
        max_traces: int = EngineSettings.model_fields["max_traces"].default,
        max_spans_per_trace: int = EngineSettings.model_fields["max_spans_per_trace"].default,
        trace_ttl: float = EngineSettings.model_fields["trace_ttl"].default,
        max_paused_runs: int = EngineSettings.model_fields["max_paused_runs"].default,
        session_idle: float = EngineSettings.model_fields["session_idle"].default,
        max_sessions: int = EngineSettings.model_fields["max_sessions"].default,
        max_runs_per_session: int = EngineSettings.model_fields["max_runs_per_session"].default,
        max_buffered_bytes: int = EngineSettings.model_fields["max_buffered_bytes"].default,
        max_queue: int = 100_000,
        max_label_values: int = 100,
    ) -> None:
        settings = EngineSettings.checked(
            {"max_traces": max_traces, "max_spans_per_trace": max_spans_per_trace,
             "trace_ttl": trace_ttl, "max_paused_runs": max_paused_runs, "max_buffered_bytes": max_buffered_bytes,
             "session_idle": session_idle, "max_sessions": max_sessions, "max_runs_per_session": max_runs_per_session}
        )
        if reputation is not None:
            from .reputation.processor import wire_reputation

            span_processor, sinks, expectations = wire_reputation(reputation, span_processor, sinks, expectations)
            standings = reputation.store_spec
            if store == STORE_FROM_ENVIRONMENT and standings is not None and parse_store_spec(standings).kind == "sqlite":
                store = standings  # one file for verdicts and standings
        if store == STORE_FROM_ENVIRONMENT:
            store = os.environ.get("OTEL_RELIABILITY_STORE", DEFAULT_STORE)
        engine = Engine(expectations, default_expectation)  # a bad expectation file fails before the store is opened
        self._next = span_processor
        self._store = open_store(store) if isinstance(store, (str, Path)) else store
        self._metrics = ReliabilityMetrics(meter_provider, max_label_values=max_label_values)
        # Where each verdict goes, in this order; a failing one is logged, counted and skipped.
        chosen: list[Sink] = [StoreSink(self._store)] if self._store is not None else []
        chosen += [MetricsSink(self._metrics), *sinks]
        if on_result is not None:
            chosen.append(CallbackSink(on_result))
        if print_results:
            chosen.append(PrintSink())
        self._pipeline = Pipeline(
            engine, chosen, settings=settings, observer=self._metrics,
            on_unjudgeable=lambda _name, _exc: self._count_drop("bad_expectation"),
        )
        self._max_queue = max_queue
        self.stats = ProcessorStats()
        # Written by app threads, drained by the worker: dict and deque operations are
        # atomic under the GIL, which keeps the app-thread path lock-free. The worker is
        # woken only when a possible run span ends (or the backlog grows), not per span:
        # waking a sleeping thread costs a system call.
        self._backlog: deque = deque()
        self._wake = threading.Event()
        self._hurry = threading.Event()  # cuts the batch window short
        self._open: dict[int, Span] = {}
        self._held: set[int] = set()  # id() of each queued span on_end held back (added before it is queued)
        self._watchers: dict[int, Any] = {}
        self._last_sweep = time.monotonic()
        self._metrics.register_buffered(lambda: self.buffered_traces)
        self._metrics.register_buffered_bytes(lambda: self.buffered_bytes)
        self._worker = threading.Thread(target=self._work, name="otel-reliability", daemon=True)
        self._worker.start()
        register_processor(self)

    @property
    def buffered_traces(self) -> int:
        """Traces with ended spans held for judging (bounded by ``max_traces``)."""
        return len(self._pipeline)

    @property
    def buffered_bytes(self) -> int:
        """Estimated bytes of the ended spans held for judging and of paused runs (bounded by
        ``max_buffered_bytes``: beyond it the oldest traces are evicted, and counted)."""
        return self._pipeline.buffered_bytes

    # -- app thread ---------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        span_id = span.context.span_id
        self._open[span_id] = span
        check = active_check()
        if check is not None:
            self._watchers[span_id] = check
        if self._next is not None:
            self._next.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        backlog = len(self._backlog)
        if backlog >= self._max_queue:
            self._open.pop(span.context.span_id, None)
            self._count_drop("queue_full")
            held = False
        else:
            # The span alone, not a (span, held) pair: a held span's id goes in a set
            # (about one span in ten) rather than the app thread allocating a tuple per span.
            held = _may_be_run(span)
            if held:
                self._held.add(id(span))
            self._backlog.append(span)
            if (held or backlog % _WAKE_EVERY == 0) and not self._wake.is_set():
                self._wake.set()
        if not held and self._next is not None:
            self._next.on_end(span)

    def log_record_processor(self) -> ReliabilityLogRecordProcessor:
        """A ``LogRecordProcessor`` that hands GenAI event log records to this processor, for
        instrumentations that write message content as log records (openai-v2's default mode).

        >>> from opentelemetry.sdk._logs import LoggerProvider
        >>> spans = ReliabilitySpanProcessor(store=None)
        >>> LoggerProvider().add_log_record_processor(spans.log_record_processor())
        >>> spans.shutdown()
        """
        return ReliabilityLogRecordProcessor(self)

    def queue_log(self, log: LogData) -> None:
        """Queue a log record for the worker (app thread: one append, as for a span)."""
        if len(self._backlog) >= self._max_queue:
            self._count_log_drop("queue_full")
            return
        self._backlog.append(log)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        drained = self.drain(timeout_millis / 1000)
        if self._next is None:
            return drained
        remaining = max(0, int((deadline - time.monotonic()) * 1000))
        return self._next.force_flush(remaining) and drained

    def judge_session(self, session_id: str, timeout: float = 30.0) -> SessionResult | None:
        """Judge the session (conversation) ``session_id`` now, from its runs judged so far, by the
        ``scope: session`` expectations; stored and counted like an idle session's verdict. None
        when no session expectation selects it or no judged run names it. Sessions are also
        judged once idle for ``session_idle``, and at ``shutdown``.

        >>> from otel_reliability.expectations import Expectation
        >>> processor = ReliabilitySpanProcessor(store=None,
        ...     expectations=[Expectation(name="conversation", scope="session", expected_tool_calls=["a"])])
        >>> processor.judge_session("no-such-conversation") is None
        True
        >>> processor.shutdown()
        """
        if threading.current_thread() is not self._worker:  # (a sink asking would wait on itself)
            self.drain(timeout)  # the runs queued so far are judged first: they may be its turns
        return self._pipeline.judge_session(session_id)

    def shutdown(self) -> None:
        if self._worker.is_alive():
            self._submit(_Stop())
            self._worker.join(timeout=30)
        self._pipeline.end_sessions()  # the end of the input: sessions not judged yet are judged as they stand
        self._pipeline.close()
        if self._next is not None:
            self._next.shutdown()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every span queued so far has been judged and forwarded."""
        if not self._worker.is_alive():
            return True
        done = threading.Event()
        self._submit(done)
        return done.wait(timeout)

    def _submit(self, marker: Any) -> None:
        self._backlog.append(marker)
        self._wake.set()
        self._hurry.set()

    # -- worker -------------------------------------------------------------------

    def _work(self) -> None:
        suppress_instrumentation_in_this_thread()  # the store's writes are not the app's spans
        while True:
            self._wake.wait(_IDLE_WAKE_SECONDS)
            self._wake.clear()
            batch: list[ReadableSpan] = []
            logs: list[LogData] = []
            while self._backlog:
                item = self._backlog.popleft()
                if isinstance(item, (_Stop, threading.Event)):
                    self._process(batch, logs)
                    batch, logs = [], []
                    if isinstance(item, _Stop):
                        return
                    item.set()
                elif type(item) is LogData:
                    logs.append(item)
                else:
                    batch.append(item)
            self._process(batch, logs)
            self._sweep()
            if self._hurry.wait(_BATCH_WINDOW_SECONDS):
                self._hurry.clear()

    def _process(self, spans: list[ReadableSpan], logs: Sequence[LogData] = ()) -> None:
        """Buffer a batch of log records and ended spans, judge the top-level runs among the
        spans, forward the held ones. The records go first: they were emitted while their
        spans were open, so before any run span of the batch ended."""
        if logs:
            self._ingest_logs(logs)
        if not spans:
            return
        held_ids = self._held
        held = [span for span in spans if id(span) in held_ids] if held_ids else []
        held_ids.difference_update([id(span) for span in held])
        forward: dict[int, ReadableSpan] = {id(span): span for span in held}
        try:
            self._ingest(spans, forward)
        except Exception:  # never let one bad batch stop the worker
            logger.exception("otel-reliability could not process %d spans", len(spans))
            self._count_drop("internal_error", len(spans))
        finally:
            self.stats.traces_dropped = self._pipeline.traces_dropped
            if self._next is not None:
                for span in held:
                    self._next.on_end(forward[id(span)])

    def _ingest_logs(self, logs: Sequence[LogData]) -> None:
        try:
            events = [event for event in map(to_event_record, logs) if event is not None]
            if events:
                refused = self._pipeline.add_events(events, time.monotonic())
                if refused:
                    self._count_log_drop("trace_full", len(refused))
        except Exception:  # never let one bad batch stop the worker
            logger.exception("otel-reliability could not process %d log records", len(logs))
            self._count_log_drop("internal_error", len(logs))

    def _ingest(self, spans: list[ReadableSpan], forward: dict[int, ReadableSpan]) -> None:
        self.stats.spans += len(spans)
        records = []
        runs: list[tuple[ReadableSpan, SpanRecord, Any]] = []
        open_spans = self._open
        watchers = self._watchers
        for span in spans:
            record = to_record(from_ended_span(span))
            records.append(record)
            open_spans.pop(record.span_id, None)
            # Emptiness first: watchers are rare, and a span's own watcher was added before it ended.
            watcher = watchers.pop(record.span_id, None) if watchers else None
            if record.role is _AGENT_RUN:
                runs.append((span, record, watcher))
        pipeline = self._pipeline
        refused = pipeline.add(records, time.monotonic())
        if refused:
            self._count_drop("trace_full", len(refused))
        for span, record, watcher in runs:
            trace = pipeline.buffer.records_of(record.trace_id)
            if trace is None or trace.get(record.span_id) is not record:
                continue  # not kept (its trace was full)
            if enclosing_run(record, _Lookup(trace, open_spans)) is not None:
                continue  # a member run: judged with its top-level run
            inline = watcher.expectation if watcher is not None else None
            extra = (_Watcher(watcher),) if watcher is not None else ()
            judgement = pipeline.judge_trace(record.trace_id, record.span_id, inline, extra)
            if judgement is not None:
                self.stats.runs_judged += 1
                if id(span) in forward:
                    forward[id(span)] = _enriched(span, judgement.result)
        for record in records:
            trace = pipeline.buffer.records_of(record.trace_id)
            if trace is not None and record.parent_id not in trace and record.parent_id not in open_spans:
                pipeline.forget(record.trace_id)  # the local root ended: nothing more will arrive

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < _SWEEP_SECONDS:
            return
        self._last_sweep = now
        self._pipeline.expire(now)
        self._pipeline.judge_idle_sessions(now)
        self.stats.traces_dropped = self._pipeline.traces_dropped
        horizon = time.time_ns() - int(self._pipeline.settings.trace_ttl * 1e9)
        for span_id, span in list(self._open.items()):
            if (span.start_time or 0) < horizon:
                self._open.pop(span_id, None)

    def _count_drop(self, reason: str, count: int = 1) -> None:
        self.stats.dropped[reason] = self.stats.dropped.get(reason, 0) + count
        self._metrics.spans_dropped(count, reason)

    def _count_log_drop(self, reason: str, count: int = 1) -> None:
        key = f"log_records_{reason}"
        self.stats.dropped[key] = self.stats.dropped.get(key, 0) + count
        self._metrics.log_records_dropped(count, reason)


class _Lookup:
    """Ended spans of the trace, then spans still open, as records (for ownership walks)."""

    __slots__ = ("_trace", "_open")

    def __init__(self, trace: dict[int, SpanRecord], open_spans: dict[int, Span]) -> None:
        self._trace = trace
        self._open = open_spans

    def get(self, span_id: int) -> SpanRecord | None:
        record = self._trace.get(span_id)
        if record is not None:
            return record
        live = self._open.get(span_id)
        if live is None:
            return None
        record = to_record(from_readable_span(live))
        record.end_ns = _OPEN_END
        return record


def _may_be_run(span: ReadableSpan) -> bool:
    """Spans to hold back until judged: anything an adapter may call a run."""
    parent = span.parent
    return may_be_run(attributes_view(span), parent is None or parent.is_remote)


def _enriched(span: ReadableSpan, result: RunResult) -> ReadableSpan:
    name, event_attributes = evaluation_event(result)
    return with_additions(span, verdict_attributes(result), [Event(name, event_attributes, timestamp=span.end_time)])
