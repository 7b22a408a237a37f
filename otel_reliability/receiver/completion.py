"""When a received trace is judged: its run span has arrived and it has been quiet.

Spans of one trace arrive in any order, over many requests. A trace becomes due once
it holds an agent-run span and no span of it has arrived for ``decision_wait``. After
judging, the trace is kept for ``late_window``: a span arriving then makes it due
again, and its new verdicts supersede the first ones. Traces that never become due
are evicted after ``ttl``; the buffer holds at most ``max_traces`` traces and
``max_spans_per_trace`` spans per trace. Every eviction and rejection is counted.

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

from ..model import Role, SpanRecord


_trace_id = attrgetter("trace_id")


@dataclass(slots=True)
class _Trace:
    records: dict[int, SpanRecord] = field(default_factory=dict)
    last_arrival: float = 0.0
    has_run: bool = False
    judged: bool = False


@dataclass(slots=True)
class DueTrace:
    trace_id: int
    records: list[SpanRecord]
    late: bool  # judged before: the verdicts supersede earlier ones


@dataclass(slots=True)
class CompletionStats:
    traces_evicted: int = 0
    traces_expired_unjudged: int = 0
    late_spans: int = 0
    spans_rejected: int = 0


class TraceCompletion:
    """The receiver's trace buffer.

    Every question a tick asks costs what it answers, not what is buffered: traces sit
    in queues ordered by last arrival (arrival times only grow, so a trace that gets a
    span moves to the back), and ``due`` and ``expire`` stop at the first trace that is
    too recent.

    >>> buffer = TraceCompletion(decision_wait=2.0)
    >>> buffer.due(now=0.0)
    []
    """

    def __init__(
        self,
        decision_wait: float = 2.0,
        late_window: float = 30.0,
        ttl: float = 300.0,
        max_traces: int = 50_000,
        max_spans_per_trace: int = 10_000,
    ) -> None:
        self.decision_wait = decision_wait
        self.late_window = late_window
        self.ttl = ttl
        self.max_traces = max_traces
        self.max_spans_per_trace = max_spans_per_trace
        self.stats = CompletionStats()
        self._open: OrderedDict[int, _Trace] = OrderedDict()  # never judged; leave after ttl
        self._judged: OrderedDict[int, _Trace] = OrderedDict()  # leave after late_window
        self._waiting: OrderedDict[int, _Trace] = OrderedDict()  # have a run span and unjudged spans
        self._handed_out: set[int] = set()  # returned by the last ``due``: being judged, or just judged
        self.buffered_spans = 0

    def __len__(self) -> int:
        return len(self._open) + len(self._judged)

    @property
    def pending(self) -> int:
        """Traces whose latest spans no published verdict has judged yet (see the module's
        docstring). Safe to read without the caller's lock: a trace is always in one of the
        two sets while it is pending, and one reopened while handed out counts twice."""
        return len(self._waiting) + len(self._handed_out)

    def add(self, records: list[SpanRecord], now: float) -> list[str]:
        """Buffer records; returns one reason per record that could not be kept."""
        rejected = []
        late = 0
        # Exporters send a trace's spans side by side: the queues move once per run of them.
        for trace_id, group in groupby(records, key=_trace_id):
            queue = self._open
            trace = queue.get(trace_id)
            if trace is None:
                queue = self._judged
                trace = queue.get(trace_id)
                if trace is None:
                    queue = self._open
                    trace = queue[trace_id] = _Trace()
            held = trace.records
            kept = 0
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
                if record.role is Role.AGENT_RUN:
                    trace.has_run = True
            if not kept:
                continue
            self.buffered_spans += kept
            if trace.judged:
                late += kept
            trace.last_arrival = now
            queue.move_to_end(trace_id)
            if trace.has_run:
                self._waiting[trace_id] = trace
                self._waiting.move_to_end(trace_id)
        self.stats.late_spans += late
        self.stats.spans_rejected += len(rejected)
        self._evict_overflow()
        return rejected

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
            ready.append(DueTrace(trace_id, list(trace.records.values()), trace.judged))
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
        for queue, horizon in ((self._open, self.ttl), (self._judged, self.late_window)):
            while queue:
                trace_id, trace = next(iter(queue.items()))
                if now - trace.last_arrival < horizon:
                    break
                self._forget(trace_id, queue)
                if not trace.judged:
                    self.stats.traces_expired_unjudged += 1
                    unjudged.append(DueTrace(trace_id, list(trace.records.values()), False))
        return unjudged

    def drain(self) -> list[DueTrace]:
        """Everything still unjudged, for shutdown: judged as it stands."""
        pending = [DueTrace(trace_id, list(trace.records.values()), trace.judged) for trace_id, trace in self._waiting.items()]
        self._handed_out.update(self._waiting)
        self._waiting.clear()
        return pending

    def _forget(self, trace_id: int, queue: OrderedDict[int, _Trace]) -> None:
        trace = queue.pop(trace_id)
        self._waiting.pop(trace_id, None)
        self.buffered_spans -= len(trace.records)

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
            self._forget(next(iter(older)), older)
            self.stats.traces_evicted += 1
