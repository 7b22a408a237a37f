"""The span processor's worker side: ended SDK spans in, verdicts published, held spans out.

``ReliabilitySpanProcessor`` queues spans on the app's thread and runs a worker thread;
what that worker does with a batch lives here: records into the engine's buffer, each
top-level run judged as its span ends (ownership asked of the ended spans and of those
still open), the held run spans forwarded, enriched, to the wrapped processor. Nothing
here raises: a batch that fails is logged and counted, and its held spans still go on.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, cast

from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor

from ..adapters import may_be_run, to_event_record, to_record
from ..assembly.ownership import enclosing_run
from ..emitters.metrics import ReliabilityMetrics
from ..emitters.span_attributes import evaluation_event, verdict_attributes
from ..engine import Pipeline
from ..model import LogData, Role, SpanRecord
from ..results import RunResult
from ..sources.sdk import attributes_view, from_ended_span, from_readable_span, with_additions

logger = logging.getLogger(__name__)

_SWEEP_SECONDS = 1.0
_OPEN_END = sys.maxsize
_AGENT_RUN = Role.AGENT_RUN


@dataclass(slots=True)
class ProcessorStats:
    """What the processor did, for tests and debugging (the metrics carry the same)."""

    spans: int = 0
    runs_judged: int = 0
    traces_dropped: dict[str, int] = field(default_factory=dict)  # by reason, as ``Pipeline.traces_dropped``
    open_spans_forgotten: int = 0  # started spans no longer tracked (over max_open_spans, or past trace_ttl)
    forward_failures: int = 0  # held spans the wrapped processor raised on
    dropped: dict[str, int] = field(default_factory=dict)


class SpanJudging:
    """One processor's buffer, open spans and counters, used from its worker thread (the
    app's threads only add to ``open_spans`` and ``watchers``, which are plain dicts)."""

    def __init__(
        self,
        new_pipeline: Callable[[], Pipeline],
        metrics: ReliabilityMetrics,
        wrapped: SpanProcessor | None,
        max_open_spans: int,
    ) -> None:
        self.new_pipeline = new_pipeline
        self.pipeline = new_pipeline()
        self.metrics = metrics
        self.wrapped = wrapped
        self.max_open_spans = max_open_spans
        self.stats = ProcessorStats()
        # started, not ended (the live span, or the snapshot on_end hands over): at most max_open_spans
        self.open_spans: dict[int, ReadableSpan] = {}
        self.watchers: dict[int, Any] = {}  # span id → the expect(...) block open when it started
        self.held: set[int] = set()  # id() of each queued span on_end held back (added before it is queued)
        self.torn: set[int] = set()  # traces whose spans a fork lost: their runs get no verdict
        # Traces with a run judged top-level although its parent span is local: this processor
        # never saw that parent start (added to the provider mid-run, or its open span forgotten),
        # so the parent may be a run that ends later and supersedes the verdict. Kept buffered.
        self.awaiting_parent: set[int] = set()
        # Runs judged top-level only for now: an open local ancestor may still turn out to be a
        # run (LangChain's instrumentation names its supervisor graph a run only as it ends), so
        # their spans wait unforwarded until every such ancestor ended. By trace.
        # (span, record, watcher, held: the app thread held the span back, so it is ours to forward)
        self.deferred: dict[int, list[tuple[ReadableSpan, SpanRecord, Any, bool]]] = {}
        self._deferring: set[int] = set()  # id() of this batch's held spans that wait
        self._last_sweep = time.monotonic()

    def process(self, spans: list[ReadableSpan], logs: Sequence[LogData] = (), judge: bool = True) -> None:
        """Buffer a batch of log records and ended spans, judge the top-level runs among the
        spans, forward the held ones. The records go first: they were emitted while their
        spans were open, so before any run span of the batch ended. Without ``judge`` the
        spans are only buffered (the parent of a fork judges and forwards them)."""
        if logs:
            self._ingest_logs(logs)
        if not spans:
            return
        # what on_end decided (an ended span no longer changes), read from the ids it held
        held_ids = self.held
        held = [span for span in spans if id(span) in held_ids] if held_ids else []
        if held:
            held_ids.difference_update([id(span) for span in held])
        if not judge:
            held = []  # queued before a fork: the parent forwards them
        forward: dict[int, ReadableSpan] = {id(span): span for span in held}
        deferring = self._deferring
        try:
            self._ingest(spans, forward, judge)
        except BaseException:  # never let one bad batch stop the worker
            logger.exception("otel-reliability could not process %d spans", len(spans))
            self.count_drop("internal_error", len(spans))
        finally:
            self.stats.traces_dropped = self.pipeline.traces_dropped
            self.forward([forward[id(span)] for span in held if id(span) not in deferring])
            deferring.clear()

    def forward(self, spans: Sequence[ReadableSpan]) -> None:
        """Hand held spans to the wrapped processor; one it raises on is logged and counted."""
        if self.wrapped is None:
            return
        for span in spans:
            try:
                self.wrapped.on_end(span)
            except BaseException:  # on the worker: SystemExit here would only end this thread
                logger.exception("otel-reliability: the wrapped span processor failed on span %r", span.name)
                self.stats.forward_failures += 1
                self.metrics.sink_failed("span_processor")

    def _ingest_logs(self, logs: Sequence[LogData]) -> None:
        try:
            events = [event for event in map(to_event_record, logs) if event is not None]
            if events:
                refused = self.pipeline.add_events(events, time.monotonic())
                if refused:
                    self.count_log_drop("trace_full", len(refused))
        except BaseException:  # never let one bad batch stop the worker
            logger.exception("otel-reliability could not process %d log records", len(logs))
            self.count_log_drop("internal_error", len(logs))

    def _ingest(self, spans: list[ReadableSpan], forward: dict[int, ReadableSpan], judge: bool) -> None:
        self.stats.spans += len(spans)
        records = []
        runs: list[tuple[ReadableSpan, SpanRecord, Any]] = []
        open_spans = self.open_spans
        watchers = self.watchers
        for span in spans:
            record = to_record(from_ended_span(span))
            records.append(record)
            open_spans.pop(record.span_id, None)
            # Emptiness first: watchers are rare, and a span's own watcher was added before it ended.
            watcher = watchers.pop(record.span_id, None) if watchers else None
            if judge and record.role is _AGENT_RUN:
                runs.append((span, record, watcher))
        pipeline = self.pipeline
        refused = pipeline.add(records, time.monotonic())
        if refused:
            self.count_drop("trace_full", len(refused))
        for span, record, watcher in runs:
            trace = pipeline.buffer.records_of(record.trace_id)
            if trace is None or trace.get(record.span_id) is not record:
                continue  # not kept (its trace was full)
            if _open_ancestor_may_be_run(record, open_spans):
                held = id(span) in forward
                self.deferred.setdefault(record.trace_id, []).append((span, record, watcher, held))
                if held:
                    self._deferring.add(id(span))
                continue
            self._judge_run(span, record, watcher, trace, forward)
        if self.deferred:
            self._judge_deferred({record.trace_id for record in records})
        for span, record in zip(spans, records, strict=True):
            trace = pipeline.buffer.records_of(record.trace_id)
            if trace is None or record.parent_id in trace or record.parent_id in open_spans:
                continue
            if record.trace_id in self.awaiting_parent and _has_unseen_local_parent(span, record, trace, open_spans):
                continue
            if judge and record.trace_id not in self.torn:
                # a run no span marks has no span whose end makes it due: the local root's end does
                self._judge_unmarked(record.trace_id, forward)
            pipeline.forget(record.trace_id)  # the local root ended: nothing more will arrive
            self.torn.discard(record.trace_id)
            self.awaiting_parent.discard(record.trace_id)

    def _judge_run(
        self, span: ReadableSpan, record: SpanRecord, watcher: Any, trace: dict[int, SpanRecord],
        forward: dict[int, ReadableSpan],
    ) -> None:
        """Judge a run whose span ended, unless it is a member of a run (judged with it)."""
        open_spans = self.open_spans
        # enclosing_run reads only .get, which _Lookup answers from ended and open spans alike
        if enclosing_run(record, cast(Mapping[int, SpanRecord], _Lookup(trace, open_spans))) is not None:
            return  # a member run: judged with its top-level run
        if record.trace_id in self.torn:
            self.count_drop("fork")  # its spans from before a fork are lost: no verdict rather than a wrong one
            return
        if _has_unseen_local_parent(span, record, trace, open_spans):
            self.awaiting_parent.add(record.trace_id)
        inline = watcher.expectation if watcher is not None else None
        extra = (_Watcher(watcher),) if watcher is not None else ()
        judgement = self.pipeline.judge_trace(record.trace_id, record.span_id, inline, extra)
        if judgement is not None:
            self.stats.runs_judged += 1
            if id(span) in forward:
                forward[id(span)] = _enriched(span, judgement.result)

    def _judge_unmarked(self, trace_id: int, forward: dict[int, ReadableSpan]) -> None:
        """Judge the runs found from a trace's structure (its local root ended), and forward each
        held span a run was found from with the verdict on it, as a run span's."""
        judgements = self.pipeline.judge_unmarked(trace_id)
        self.stats.runs_judged += len(judgements)
        if not judgements:
            return
        held = {span.context.span_id: key for key, span in forward.items()}
        for judgement in judgements:
            key = held.get(judgement.result.run_span_id)
            if key is not None:
                forward[key] = _enriched(forward[key], judgement.result)

    def _judge_deferred(self, traces: set[int]) -> None:
        """The waiting runs of ``traces`` whose open ancestors have all ended: judged (or found
        members of the run an ancestor turned out to be), then forwarded."""
        for trace_id in traces & self.deferred.keys():
            waiting = self.deferred[trace_id]
            ready = [entry for entry in waiting if not _open_ancestor_may_be_run(entry[1], self.open_spans)]
            if not ready:
                continue
            still = [entry for entry in waiting if entry not in ready]
            if still:
                self.deferred[trace_id] = still
            else:
                del self.deferred[trace_id]
            trace = self.pipeline.buffer.records_of(trace_id)
            forward = {id(span): span for span, _, _, held in ready if held}
            for span, record, watcher, _ in ready:
                if trace is not None and trace.get(record.span_id) is record:
                    self._judge_run(span, record, watcher, trace, forward)
            self.forward(list(forward.values()))  # a span on_end did not hold went on as it ended

    def forward_deferred(self, keep: Callable[[int], bool] = lambda _trace: False) -> None:
        """Forward, as they are, the waiting run spans of traces ``keep`` does not keep (all by
        default: at shutdown; on a sweep, those of traces that left the buffer)."""
        for trace_id in [t for t in self.deferred if not keep(t)]:
            self.forward([span for span, _, _, held in self.deferred.pop(trace_id) if held])

    def sweep(self) -> None:
        """Now and then: drop traces and open spans past ``trace_ttl``."""
        now = time.monotonic()
        if now - self._last_sweep < _SWEEP_SECONDS:
            return
        self._last_sweep = now
        self.pipeline.expire(now)
        self.pipeline.judge_idle_sessions(now)
        self.stats.traces_dropped = self.pipeline.traces_dropped
        horizon = time.time_ns() - int(self.pipeline.settings.trace_ttl * 1e9)
        forgotten = 0
        # App threads start spans meanwhile: ``dict.copy()`` is one C call that runs no Python
        # code, where ``list(items())`` makes a tuple per span, which may run a garbage
        # collection, its finalizers, and so another thread that adds to the dict (RuntimeError).
        for span_id, span in self.open_spans.copy().items():
            if (span.start_time or 0) < horizon and self.open_spans.pop(span_id, None) is not None:
                forgotten += 1
        for span_id in [s for s in list(self.watchers) if s not in self.open_spans]:
            self.watchers.pop(span_id, None)
        buffer = self.pipeline.buffer
        self.awaiting_parent = {t for t in self.awaiting_parent if buffer.records_of(t) is not None}
        self.forward_deferred(keep=lambda trace_id: buffer.records_of(trace_id) is not None)
        if forgotten:
            self._count_forgotten(forgotten)

    def forget_oldest_open(self) -> None:
        """Over ``max_open_spans`` (spans that never end): stop tracking the oldest. Should it
        be a run, a member run ending inside it is then judged on its own, and superseded when
        the run ends."""
        try:
            oldest = next(iter(self.open_spans))
        except (StopIteration, RuntimeError):  # emptied, or changed by another thread meanwhile
            return
        if self.open_spans.pop(oldest, None) is not None:
            self.watchers.pop(oldest, None)
            self._count_forgotten(1)

    def start_over_after_torn_fork(self) -> None:
        """A fork caught the worker mid-batch: what it held may be half written. The child
        starts from an empty buffer, and gives no verdict to the runs open at the fork."""
        self.pipeline = self.new_pipeline()
        self.torn.update(span.context.trace_id for span in list(self.open_spans.values()))

    def _count_forgotten(self, count: int) -> None:
        self.stats.open_spans_forgotten += count
        self.metrics.open_spans_forgotten(count)

    def count_drop(self, reason: str, count: int = 1) -> None:
        self.stats.dropped[reason] = self.stats.dropped.get(reason, 0) + count
        self.metrics.spans_dropped(count, reason)

    def count_log_drop(self, reason: str, count: int = 1) -> None:
        key = f"log_records_{reason}"
        self.stats.dropped[key] = self.stats.dropped.get(key, 0) + count
        self.metrics.log_records_dropped(count, reason)


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


class _Lookup:
    """Ended spans of the trace, then spans still open, as records (for ownership walks)."""

    __slots__ = ("_trace", "_open")

    def __init__(self, trace: dict[int, SpanRecord], open_spans: dict[int, ReadableSpan]) -> None:
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


def _open_ancestor_may_be_run(record: SpanRecord, open_spans: dict[int, ReadableSpan]) -> bool:
    """Whether a span still open above ``record`` (its parent, or theirs) may yet be read as
    an agent run when it ends: then ``record``'s run may be its member, not top-level."""
    parent_id = record.parent_id
    seen = 0
    while parent_id and seen < 1_000:  # a cycle of ids is a producer's bug, not a hang
        live = open_spans.get(parent_id)
        if live is None:
            return False  # ended (judged as what it is) or never seen: nothing more to wait for
        if may_be_run_span(live):
            return True
        parent = live.parent
        parent_id = parent.span_id if parent is not None and not parent.is_remote else 0
        seen += 1
    return False


def _has_unseen_local_parent(
    span: ReadableSpan, record: SpanRecord, trace: dict[int, SpanRecord], open_spans: dict[int, ReadableSpan]
) -> bool:
    parent = span.parent
    return (
        parent is not None and not parent.is_remote and record.parent_id not in trace and record.parent_id not in open_spans
    )


def may_be_run_span(span: ReadableSpan) -> bool:
    """Spans to hold back until judged: anything an adapter may call a run. Never raises
    (it runs on the app's thread): a span it cannot read is not held."""
    try:
        parent = span.parent
        attributes = attributes_view(span)
        return may_be_run(span.name, attributes, parent is None or parent.is_remote)
    except Exception:
        return False


def _enriched(span: ReadableSpan, result: RunResult) -> ReadableSpan:
    name, event_attributes = evaluation_event(result)
    return with_additions(span, verdict_attributes(result), [Event(name, event_attributes, timestamp=span.end_time)])


def flush_within(processor: SpanProcessor, deadline: float) -> bool:
    """``processor.force_flush`` bounded by ``deadline``: the SDK's ``BatchSpanProcessor``
    waits for its exporter however long that takes, so the flush runs on a thread of its own."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    outcome: list[Any] = []

    def flush() -> None:
        try:
            outcome.append(processor.force_flush(int(remaining * 1000)))
        except BaseException as exc:
            outcome.append(exc)

    flusher = threading.Thread(target=flush, name="otel-reliability-flush", daemon=True)
    flusher.start()
    flusher.join(remaining)
    if not outcome:
        return False
    if isinstance(outcome[0], BaseException):
        raise outcome[0]  # the app's thread sees what the wrapped processor raised, as without this one
    return bool(outcome[0])


class UnavailableStore:
    """Stands in for a store a forked child could not open again: every write fails, counted."""

    def add(self, result: Any) -> None:
        raise RuntimeError("the results store could not be opened again after a fork")

    def add_many(self, results: Any, superseded: Any = ()) -> None:
        raise RuntimeError("the results store could not be opened again after a fork")

    def query(self, **filters: Any) -> list[Any]:
        raise RuntimeError("the results store could not be opened again after a fork")

    def close(self) -> None:
        pass
