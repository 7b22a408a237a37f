"""The engine's one trace buffer, and its quiet rule: a trace is due once its run span has
arrived and it has been quiet.

Spans of one trace arrive in any order, over many requests. A trace becomes due once
it holds an agent-run span and no span of it has arrived for ``decision_wait``. (A front
door that knows better when a trace is complete — the span processor sees run spans
end — judges from ``records_of`` and lets ``forget`` take the trace out.) After
judging, the trace is kept for ``late_window``: a span arriving then makes it due
again, and its new verdicts supersede the first ones. Traces that never become due
are evicted after ``ttl``; the buffer holds at most ``max_traces`` traces and
``max_spans_per_trace`` spans per trace.

It is also bounded in bytes: each record's retained size is estimated as it enters
(``sizes``), kept per trace and in all (``buffered_bytes``), and given back when its trace
leaves, however it leaves. Beyond ``max_buffered_bytes`` (shared with what the caller holds
elsewhere: paused runs) whole traces are evicted, judged ones first — their verdicts are
published, only a late re-judgement is lost — then open ones, oldest first in each queue.
Every trace that leaves other than by ``forget`` is counted by its reason
(``CompletionStats.traces_dropped``), every span or event record turned away too.

An evicted trace is never judged from what arrives of it afterwards (a wrong verdict is
worse than none): its id is remembered (the last ``max_traces`` of them), and a trace made
anew of its later spans is kept, so that they are held and leave as any others, but never
due and never handed out (``joined_records`` is empty); it leaves counted as
``ARRIVED_AFTER_EVICTION``.

A trace also holds the GenAI event log records correlated with its spans (``EventRecord``,
what the adapters read them as). They count as arrivals like spans — a trace waits for its
logs as for its spans, and a record arriving after the verdict re-judges the trace within
``late_window`` — and are joined to the span record with their span id whenever the trace
is handed out for judging, as if that span had carried their requests and responses.

``pending`` says how many traces hold spans that no published verdict has judged yet:
waiting to go quiet, or handed out by the last ``due`` (whose verdicts the caller publishes
before it asks again). At zero, every verdict stands until another span arrives.

Pure bookkeeping: the clock is passed in, and nothing here does I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter
from typing import Callable

from ..model import EventRecord, Role, SpanRecord
from .event_join import with_events
from .settings import EngineSettings
from .sizes import TRACE_BYTES, event_size, record_size


_trace_id = attrgetter("trace_id")

# Why a trace left the buffer (``CompletionStats.traces_dropped``). The first three lose a
# verdict: the trace's spans were never judged.
TTL_EXPIRED_UNJUDGED = "ttl_expired_unjudged"
MAX_TRACES = "max_traces"
MAX_BYTES = "max_bytes"
# A judged trace leaving: at the end of its late window, or cut out of it by a bound.
LATE_WINDOW_EXPIRED = "late_window_expired"
MAX_TRACES_JUDGED = "max_traces_judged"
MAX_BYTES_JUDGED = "max_bytes_judged"
VERDICT_LOST = frozenset({TTL_EXPIRED_UNJUDGED, MAX_TRACES, MAX_BYTES})
# What arrived of a trace after it was evicted, leaving in turn (its verdict was counted lost already).
ARRIVED_AFTER_EVICTION = "arrived_after_eviction"


@dataclass(slots=True)
class _Trace:
    records: dict[int, SpanRecord] = field(default_factory=dict)
    last_arrival: float = 0.0
    has_run: bool = False
    # what a run no span marks needs (assembly.inferred): a root span (1), tool calls (2)
    loop_parts: int = 0
    judged: bool = False
    events: dict[int, list[EventRecord]] | None = None  # by span id; most traces have none
    event_count: int = 0
    bytes: int = TRACE_BYTES  # estimated: itself and every record and event record it holds
    cut: bool = False  # made of what arrived after the trace was evicted: never judged

    def joined(self) -> list[SpanRecord]:
        """The span records, each with the requests and responses of its event records added."""
        events = self.events
        if not events:
            return list(self.records.values())
        out = []
        for span_id, record in self.records.items():
            extra = events.get(span_id)
            out.append(record if extra is None else with_events(record, extra))
        return out


@dataclass(slots=True)
class DueTrace:
    trace_id: int
    records: list[SpanRecord]
    late: bool  # judged before: the verdicts supersede earlier ones


@dataclass(slots=True)
class CompletionStats:
    traces_dropped: dict[str, int] = field(default_factory=dict)  # by reason: the constants above
    late_spans: int = 0
    spans_rejected: int = 0
    late_events: int = 0
    events_rejected: int = 0


class TraceBuffer:
    """Buffered traces, queued by last arrival.

    Every question a tick asks costs what it answers, not what is buffered: traces sit
    in queues ordered by last arrival (arrival times only grow, so a trace that gets a
    span moves to the back), and ``due`` and ``expire`` stop at the first trace that is
    too recent.

    >>> buffer = TraceBuffer(decision_wait=2.0)
    >>> buffer.due(now=0.0)
    []
    """

    def __init__(
        self,
        settings: EngineSettings | None = None,
        decision_wait: float = 2.0,
        on_leave: Callable[[int], None] | None = None,
        held_elsewhere: Callable[[], int] = lambda: 0,
        on_enter: Callable[[int], None] | None = None,
    ) -> None:
        settings = settings or EngineSettings()
        self._on_leave = on_leave  # told the id of every trace that leaves, however it leaves
        self._on_enter = on_enter  # told the id of every trace that enters (a durable intake log's bookkeeping)
        self._held_elsewhere = held_elsewhere  # bytes the caller holds within the same budget
        self.max_bytes = settings.max_buffered_bytes
        self.decision_wait = decision_wait
        self.late_window = settings.late_window
        self.ttl = settings.trace_ttl
        self.max_traces = settings.max_traces
        self.max_spans_per_trace = settings.max_spans_per_trace
        self.stats = CompletionStats()
        self._open: OrderedDict[int, _Trace] = OrderedDict()  # never judged; leave after ttl
        self._judged: OrderedDict[int, _Trace] = OrderedDict()  # leave after late_window
        self._waiting: OrderedDict[int, _Trace] = OrderedDict()  # have a run span and unjudged spans
        self._handed_out: set[int] = set()  # returned by the last ``due``: being judged, or just judged
        self._evicted: OrderedDict[int, None] = OrderedDict()  # ids of the last max_traces traces evicted
        self.buffered_spans = 0
        self.buffered_events = 0
        self.buffered_bytes = 0

    def __len__(self) -> int:
        return len(self._open) + len(self._judged)

    @property
    def pending(self) -> int:
        """Traces whose latest spans no published verdict has judged yet (see the module's
        docstring). Safe to read without the caller's lock: a trace is always in one of the
        two sets while it is pending, and one reopened while handed out counts twice."""
        return len(self._waiting) + len(self._handed_out)

    def _trace_for(self, trace_id: int) -> tuple[_Trace, OrderedDict[int, _Trace]]:
        """The buffered trace and the queue holding it; a new open trace when none is buffered."""
        trace = self._open.get(trace_id)
        if trace is not None:
            return trace, self._open
        trace = self._judged.get(trace_id)
        if trace is not None:
            return trace, self._judged
        trace = self._open[trace_id] = _Trace(cut=trace_id in self._evicted)
        self.buffered_bytes += trace.bytes
        if self._on_enter is not None:
            self._on_enter(trace_id)
        return trace, self._open

    def add(self, records: list[SpanRecord], now: float) -> list[str]:
        """Buffer records; returns one reason per record that could not be kept."""
        rejected = []
        late = 0
        # Exporters send a trace's spans side by side: the queues move once per run of them.
        for trace_id, group in groupby(records, key=_trace_id):
            trace, queue = self._trace_for(trace_id)
            held = trace.records
            kept = added = 0
            for record in group:
                if record.span_id in held:
                    continue  # a retried export: the span is already here
                if len(held) >= self.max_spans_per_trace:
                    rejected.append(
                        f"trace {trace_id:032x} already holds {self.max_spans_per_trace} spans (max_spans_per_trace)"
                    )
                    continue
                held[record.span_id] = record
                kept += 1
                added += record_size(record)
                if record.role is Role.AGENT_RUN:
                    trace.has_run = True
                elif not trace.has_run:
                    # A run no span marks is found from a root span enclosing tool calls (executed
                    # or asked for): a trace with both is due; one that waits for its run span
                    # (its root) is not, and stays whole in the intake log.
                    trace.loop_parts |= (record.parent_id == 0) | ((record.role is Role.TOOL or bool(record.requests)) << 1)
                    trace.has_run = trace.loop_parts == 3
            if not kept:
                continue
            self.buffered_spans += kept
            trace.bytes += added
            self.buffered_bytes += added
            if trace.judged:
                late += kept
            self._arrived(trace_id, trace, queue, now)
        self.stats.late_spans += late
        self.stats.spans_rejected += len(rejected)
        self._evict_overflow()
        return rejected

    def add_events(self, events: list[EventRecord], now: float) -> list[str]:
        """Buffer GenAI event records beside their traces' spans; returns one reason per record
        that could not be kept (``max_spans_per_trace`` bounds a trace's event records too)."""
        rejected = []
        late = 0
        for trace_id, group in groupby(events, key=_trace_id):
            trace, queue = self._trace_for(trace_id)
            if trace.events is None:
                trace.events = {}
            kept = added = 0
            for event in group:
                held = trace.events.setdefault(event.span_id, [])
                if event in held:
                    continue  # a retried export: the record is already here
                if trace.event_count >= self.max_spans_per_trace:
                    rejected.append(
                        f"trace {trace_id:032x} already holds {self.max_spans_per_trace} log records (max_spans_per_trace)"
                    )
                    continue
                held.append(event)
                trace.event_count += 1
                kept += 1
                added += event_size(event)
            if not kept:
                continue
            self.buffered_events += kept
            trace.bytes += added
            self.buffered_bytes += added
            if trace.judged:
                late += kept
            self._arrived(trace_id, trace, queue, now)
        self.stats.late_events += late
        self.stats.events_rejected += len(rejected)
        self._evict_overflow()
        return rejected

    def _arrived(self, trace_id: int, trace: _Trace, queue: OrderedDict[int, _Trace], now: float) -> None:
        trace.last_arrival = now
        queue.move_to_end(trace_id)
        if trace.has_run and not trace.cut:
            self._waiting[trace_id] = trace
            self._waiting.move_to_end(trace_id)

    def due(self, now: float) -> list[DueTrace]:
        """Traces to judge now; each is reported once per quiet period with new spans."""
        ready = []
        waiting = self._waiting
        self._handed_out.clear()  # the caller published their verdicts before asking again
        while waiting:
            trace_id, trace = next(iter(waiting.items()))
            if now - trace.last_arrival < self.decision_wait:
                break
            self._handed_out.add(trace_id)  # before it leaves _waiting: never pending in neither
            del waiting[trace_id]
            ready.append(DueTrace(trace_id, trace.joined(), trace.judged))
            if not trace.judged:
                trace.judged = True
                del self._open[trace_id]
                self._judged[trace_id] = trace  # its last arrival is later than any judged before it
        return ready

    def reopen(self, trace_id: int, now: float) -> bool:
        """Make a judged trace due again, as a late span would (something it depends on arrived
        after its verdict: the paused run it resumes); False when it is not judged and buffered."""
        trace = self._judged.get(trace_id)
        if trace is None:
            return False
        trace.last_arrival = now
        self._judged.move_to_end(trace_id)
        self._waiting[trace_id] = trace
        self._waiting.move_to_end(trace_id)
        return True

    def expire(self, now: float) -> list[DueTrace]:
        """Drop traces past their window; returns those never judged (their spans are lost to judging)."""
        unjudged = []
        for queue, horizon, reason in (
            (self._open, self.ttl, TTL_EXPIRED_UNJUDGED), (self._judged, self.late_window, LATE_WINDOW_EXPIRED)
        ):
            while queue:
                trace_id, trace = next(iter(queue.items()))
                if now - trace.last_arrival < horizon:
                    break
                self._forget(trace_id, queue)
                self._dropped(ARRIVED_AFTER_EVICTION if trace.cut else reason)
                if not trace.judged:
                    unjudged.append(DueTrace(trace_id, trace.joined(), False))
        return unjudged

    def seconds_until_below(self, limit: int, now: float) -> float | None:
        """When, at the soft limit, the buffer will hold fewer than ``limit`` bytes by judged
        traces leaving at the end of their late windows, oldest first (how long a refused
        client should wait); None when those are not enough."""
        freed = 0
        for trace in self._judged.values():
            freed += trace.bytes
            if self.buffered_bytes - freed < limit:
                return max(0.0, trace.last_arrival + self.late_window - now)
        return None

    def drain(self) -> list[DueTrace]:
        """Every trace with a run span and spans not yet judged, quiet or not (the end of the
        input, or shutdown): due now, as it stands."""
        pending = []
        self._handed_out.update(self._waiting)
        for trace_id, trace in self._waiting.items():
            pending.append(DueTrace(trace_id, trace.joined(), trace.judged))
            if not trace.judged:
                trace.judged = True
                del self._open[trace_id]
                self._judged[trace_id] = trace
        self._waiting.clear()
        return pending

    def unjudged(self) -> list[int]:
        """Ids of the buffered traces never judged (no run span yet, or not quiet yet)."""
        return list(self._open)

    def records_of(self, trace_id: int) -> dict[int, SpanRecord] | None:
        """The buffered records of a trace by span id (read only, as they arrived: without their
        event records), or None when it is not buffered."""
        trace = self._open.get(trace_id) or self._judged.get(trace_id)
        return None if trace is None else trace.records

    def bytes_of(self, trace_id: int) -> int:
        """The estimated bytes a buffered trace holds (a trace's own overhead when it is not buffered)."""
        trace = self._open.get(trace_id) or self._judged.get(trace_id)
        return TRACE_BYTES if trace is None else trace.bytes

    def joined_records(self, trace_id: int) -> list[SpanRecord]:
        """The records of a trace as judged: each with its event records joined ([] when not buffered)."""
        trace = self._open.get(trace_id) or self._judged.get(trace_id)
        return [] if trace is None or trace.cut else trace.joined()

    def forget(self, trace_id: int) -> None:
        """Take a trace out: nothing more of it will arrive (its local root ended)."""
        for queue in (self._open, self._judged):
            if trace_id in queue:
                self._forget(trace_id, queue)
                return

    def _forget(self, trace_id: int, queue: OrderedDict[int, _Trace]) -> None:
        trace = queue.pop(trace_id)
        self._waiting.pop(trace_id, None)
        self.buffered_spans -= len(trace.records)
        self.buffered_events -= trace.event_count
        self.buffered_bytes -= trace.bytes
        if self._on_leave is not None:
            self._on_leave(trace_id)

    def _evict_overflow(self) -> None:
        while len(self) > self.max_traces:
            # The least recently arrived trace of either queue goes first.
            open_first = next(iter(self._open.values()), None)
            judged_first = next(iter(self._judged.values()), None)
            older = (
                self._open
                if judged_first is None or (open_first is not None and open_first.last_arrival <= judged_first.last_arrival)
                else self._judged
            )
            trace_id, trace = next(iter(older.items()))
            self._evict(trace_id, trace, older, MAX_TRACES_JUDGED if trace.judged else MAX_TRACES)
        self.evict_over_budget()

    def evict_over_budget(self) -> None:
        """Evict whole traces until the buffered bytes and those held elsewhere fit
        ``max_buffered_bytes``: judged traces first, then open ones, the least recently
        arrived first in each (see the module's docstring)."""
        excess = self.buffered_bytes + self._held_elsewhere() - self.max_bytes
        while excess > 0 and len(self):
            queue = self._judged or self._open
            trace_id, trace = next(iter(queue.items()))
            self._evict(trace_id, trace, queue, MAX_BYTES_JUDGED if trace.judged else MAX_BYTES)
            excess -= trace.bytes

    def _evict(self, trace_id: int, trace: _Trace, queue: OrderedDict[int, _Trace], reason: str) -> None:
        self._forget(trace_id, queue)
        self._dropped(ARRIVED_AFTER_EVICTION if trace.cut else reason)
        evicted = self._evicted
        evicted[trace_id] = None
        evicted.move_to_end(trace_id)
        if len(evicted) > self.max_traces:
            evicted.popitem(last=False)

    def _dropped(self, reason: str) -> None:
        dropped = self.stats.traces_dropped
        dropped[reason] = dropped.get(reason, 0) + 1
