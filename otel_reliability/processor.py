"""``ReliabilitySpanProcessor``: the in-process front door.

It wraps the processor that exports (``BatchSpanProcessor(exporter)``), forwards every
span to it, and judges each top-level agent run when its span ends. The app thread
only queues the ended span (and holds back spans that may be run spans, so that the
copy it forwards carries the verdict); adapting, assembling and matching happen on a
worker thread, which forwards the held spans once judged.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor

from .adapters import to_record
from .adapters.genai import RUN_OPERATIONS
from .assembly.ownership import enclosing_run
from .emitters.metrics import ReliabilityMetrics
from .emitters.span_attributes import evaluation_event, verdict_attributes
from .emitters.table import render_table
from .engine import Engine
from .expectations import DEFAULT_EXPECTATION, Expectation
from .inline import active_check, register_processor
from .continuations import PausedRuns
from .model import Role, SpanRecord
from .results import RunResult
from .sources.sdk import attributes_view, events_or_links, from_ended_span, from_readable_span
from .stores import ResultStore, open_store

logger = logging.getLogger(__name__)

DEFAULT_STORE = "otel-reliability.db"
_WAKE_EVERY = 1024  # also wake the worker each time this many spans wait
_IDLE_WAKE_SECONDS = 0.5  # and at least this often, so spans of unfinished runs get buffered
# After each batch the worker lets spans gather this long (unless drain() or shutdown()
# asks for it): every wake-up costs a GIL hand-over and cold caches. Waking once per run
# instead doubled the worker's CPU per trace when runs arrive as agents make them, and
# raised the app thread's (benchmarks/processor_overhead.py); 5 ms and 20 ms measured
# alike, and the shorter window keeps verdicts prompt.
_BATCH_WINDOW_SECONDS = 0.005
_OPEN_END = sys.maxsize
_AGENT_RUN = Role.AGENT_RUN


@dataclass(slots=True)
class ProcessorStats:
    """What the processor did, for tests and debugging (the metrics carry the same)."""

    spans: int = 0
    runs_judged: int = 0
    traces_evicted: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Trace:
    records: dict[int, SpanRecord] = field(default_factory=dict)
    touched: float = 0.0


class _Stop:
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
        store: str | Path | ResultStore | None = os.environ.get("OTEL_RELIABILITY_STORE", DEFAULT_STORE),
        meter_provider: Any = None,
        on_result: Callable[[RunResult], None] | None = None,
        print_results: bool = False,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
        trace_ttl_seconds: float = 600.0,
        max_queue: int = 100_000,
        max_paused_runs: int = 1_000,
        max_label_values: int = 100,
    ) -> None:
        self._next = span_processor
        self._engine = Engine(expectations, default_expectation)
        self._store = open_store(store) if isinstance(store, (str, Path)) else store
        self._metrics = ReliabilityMetrics(meter_provider, max_label_values=max_label_values)
        # Where each verdict goes, in this order; a failing one is logged and skipped.
        self._sinks: list[tuple[str, Callable[[RunResult], Any]]] = [
            (name, sink)
            for name, sink in (
                ("store", self._store.add if self._store is not None else None),
                ("metrics", self._metrics.record),
                ("callback", on_result),
                ("print", render_table if print_results else None),
            )
            if sink is not None
        ]
        self._max_traces = max_traces
        self._max_spans_per_trace = max_spans_per_trace
        self._ttl = trace_ttl_seconds
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
        self._watchers: dict[int, Any] = {}
        # Worker-only state.
        self._traces: OrderedDict[int, _Trace] = OrderedDict()
        self._paused = PausedRuns(max_paused_runs)
        self._last_sweep = time.monotonic()
        self._metrics.register_buffered(lambda: self.buffered_traces)
        self._worker = threading.Thread(target=self._work, name="otel-reliability", daemon=True)
        self._worker.start()
        register_processor(self)

    @property
    def buffered_traces(self) -> int:
        """Traces with ended spans held for judging (bounded by ``max_traces``)."""
        return len(self._traces)

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
            # The span alone, not a (span, held) pair: the worker asks _may_be_run again
            # rather than the app thread allocating a tuple per span.
            self._backlog.append(span)
            held = _may_be_run(span)
            if (held or backlog % _WAKE_EVERY == 0) and not self._wake.is_set():
                self._wake.set()
        if not held and self._next is not None:
            self._next.on_end(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        drained = self.drain(timeout_millis / 1000)
        if self._next is None:
            return drained
        remaining = max(0, int((deadline - time.monotonic()) * 1000))
        return self._next.force_flush(remaining) and drained

    def shutdown(self) -> None:
        if self._worker.is_alive():
            self._submit(_Stop())
            self._worker.join(timeout=30)
        if self._store is not None:
            self._store.close()
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
        while True:
            self._wake.wait(_IDLE_WAKE_SECONDS)
            self._wake.clear()
            while self._backlog:
                item = self._backlog.popleft()
                if isinstance(item, _Stop):
                    return
                if isinstance(item, threading.Event):
                    item.set()
                else:
                    self._process(item)
            self._sweep()
            if self._hurry.wait(_BATCH_WINDOW_SECONDS):
                self._hurry.clear()

    def _process(self, span: ReadableSpan) -> None:
        held = _may_be_run(span)  # what on_end decided: an ended span no longer changes
        forward: ReadableSpan | None = span if held else None
        try:
            forward = self._ingest(span, held)
        except Exception:  # never let one bad span stop the worker
            logger.exception("otel-reliability could not process span %r", getattr(span, "name", span))
            self._count_drop("internal_error")
        finally:
            if forward is not None and self._next is not None:
                self._next.on_end(forward)

    def _ingest(self, span: ReadableSpan, held: bool) -> ReadableSpan | None:
        """Buffer one ended span; judge it if it is a top-level run. Returns what to forward."""
        self.stats.spans += 1
        record = to_record(from_ended_span(span))
        span_id = record.span_id
        trace_id = record.trace_id
        open_spans = self._open
        open_spans.pop(span_id, None)
        # Emptiness first: watchers are rare, and a span's own watcher was added before it ended.
        watcher = self._watchers.pop(span_id, None) if self._watchers else None
        traces = self._traces
        trace = traces.get(trace_id)
        if trace is None:
            trace = traces[trace_id] = _Trace()
            self._evict_overflow()
        else:
            traces.move_to_end(trace_id)
        trace.touched = time.monotonic()
        records = trace.records
        if len(records) >= self._max_spans_per_trace:
            self._count_drop("trace_full")
            return span if held else None
        records[span_id] = record
        forward = span if held else None
        if record.role is _AGENT_RUN and enclosing_run(record, _Lookup(trace, open_spans)) is None:
            result = self._judge(record, trace, watcher)
            if result is not None and held:
                forward = _enriched(span, result)
        if record.parent_id not in records and record.parent_id not in open_spans:
            del traces[trace_id]  # the local root ended: nothing more will arrive
        return forward

    def _judge(self, record: SpanRecord, trace: _Trace, watcher: Any) -> RunResult | None:
        records = list(trace.records.values())
        earlier = self._paused.predecessors(records, [record.run_key])
        if earlier:
            records = earlier + records
        inline = watcher.expectation if watcher is not None else None
        try:
            run, result = self._engine.judge_run(records, record.span_id, inline)
        except ValueError as exc:  # e.g. the run span names an expectation nobody loaded
            logger.warning("otel-reliability could not judge run %r: %s", record.name, exc)
            self._count_drop("bad_expectation")
            return None
        if run is None or result is None:
            return None
        self.stats.runs_judged += 1
        self._paused.remember(run, records)
        self._publish(result, watcher)
        return result

    def _publish(self, result: RunResult, watcher: Any) -> None:
        sinks = self._sinks if watcher is None else [*self._sinks, ("expect", watcher.deliver)]
        for name, sink in sinks:
            try:
                sink(result)
            except Exception:
                logger.exception("otel-reliability %s failed for run %x", name, result.run_span_id)

    def _evict_overflow(self) -> None:
        while len(self._traces) > self._max_traces:
            self._traces.popitem(last=False)
            self._count_eviction()

    def _sweep(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < 1.0:
            return
        self._last_sweep = now
        while self._traces:
            trace_id, trace = next(iter(self._traces.items()))
            if now - trace.touched < self._ttl:
                break
            del self._traces[trace_id]
            self._count_eviction()
        horizon = time.time_ns() - int(self._ttl * 1e9)
        for span_id, span in list(self._open.items()):
            if (span.start_time or 0) < horizon:
                self._open.pop(span_id, None)

    def _count_eviction(self) -> None:
        self.stats.traces_evicted += 1
        self._metrics.traces_evicted()

    def _count_drop(self, reason: str) -> None:
        self.stats.dropped[reason] = self.stats.dropped.get(reason, 0) + 1
        self._metrics.spans_dropped(1, reason)


class _Lookup:
    """Ended spans of the trace, then spans still open, as records (for ownership walks)."""

    __slots__ = ("_trace", "_open")

    def __init__(self, trace: _Trace, open_spans: dict[int, Span]) -> None:
        self._trace = trace
        self._open = open_spans

    def get(self, span_id: int) -> SpanRecord | None:
        record = self._trace.records.get(span_id)
        if record is not None:
            return record
        live = self._open.get(span_id)
        if live is None:
            return None
        record = to_record(from_readable_span(live))
        record.end_ns = _OPEN_END
        return record


def _may_be_run(span: ReadableSpan) -> bool:
    """Cheap test for spans to hold back until judged: anything an adapter may call a run."""
    attributes = attributes_view(span)
    operation = attributes.get("gen_ai.operation.name")
    if operation is not None:  # the GenAI adapter reads the span, whatever else it carries
        return operation in RUN_OPERATIONS
    kind = attributes.get("openinference.span.kind")
    return kind == "AGENT" or (kind == "CHAIN" and (span.parent is None or span.parent.is_remote))


def _enriched(span: ReadableSpan, result: RunResult) -> ReadableSpan:
    name, event_attributes = evaluation_event(result)
    return with_additions(span, verdict_attributes(result), [Event(name, event_attributes, timestamp=span.end_time)])


def with_additions(span: ReadableSpan, attributes: dict[str, Any], events: Sequence[Event] = ()) -> ReadableSpan:
    """A copy of an ended span with more attributes and events: the span itself can no longer change."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes={**attributes_view(span), **attributes},
        events=(*events_or_links(span, "events"), *events),
        links=events_or_links(span, "links"),
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )
