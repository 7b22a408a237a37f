"""When a received trace is judged: its run span has arrived and it has been quiet.

Spans of one trace arrive in any order, over many requests. A trace becomes due once
it holds an agent-run span and no span of it has arrived for ``decision_wait``. After
judging, the trace is kept for ``late_window``: a span arriving then makes it due
again, and its new verdicts supersede the first ones. Traces that never become due
are evicted after ``ttl``; the buffer holds at most ``max_traces`` traces and
``max_spans_per_trace`` spans per trace. Every eviction and rejection is counted.

Pure bookkeeping: the clock is passed in, and nothing here does I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from ..model import Role, SpanRecord


@dataclass(slots=True)
class _Trace:
    records: dict[int, SpanRecord] = field(default_factory=dict)
    last_arrival: float = 0.0
    has_run: bool = False
    judged: bool = False
    changed: bool = False  # spans arrived since the trace was last judged


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
        self._traces: OrderedDict[int, _Trace] = OrderedDict()
        self.buffered_spans = 0

    def __len__(self) -> int:
        return len(self._traces)

    def add(self, records: list[SpanRecord], now: float) -> list[str]:
        """Buffer records; returns one reason per record that could not be kept."""
        rejected = []
        for record in records:
            trace = self._traces.get(record.trace_id)
            if trace is None:
                trace = self._traces[record.trace_id] = _Trace()
            else:
                self._traces.move_to_end(record.trace_id)
            if record.span_id in trace.records:
                continue  # a retried export: the span is already here
            if len(trace.records) >= self.max_spans_per_trace:
                rejected.append(
                    f"trace {record.trace_id:032x} already holds {self.max_spans_per_trace} spans (max_spans_per_trace)"
                )
                continue
            trace.records[record.span_id] = record
            self.buffered_spans += 1
            trace.last_arrival = now
            trace.has_run = trace.has_run or record.role is Role.AGENT_RUN
            if trace.judged:
                self.stats.late_spans += 1
            trace.changed = True
        self.stats.spans_rejected += len(rejected)
        self._evict_overflow()
        return rejected

    def due(self, now: float) -> list[DueTrace]:
        """Traces to judge now; each is reported once per quiet period with new spans."""
        ready = []
        for trace_id, trace in self._traces.items():
            if trace.has_run and trace.changed and now - trace.last_arrival >= self.decision_wait:
                ready.append(DueTrace(trace_id, list(trace.records.values()), trace.judged))
                trace.changed = False
                trace.judged = True
        return ready

    def expire(self, now: float) -> list[DueTrace]:
        """Drop traces past their window; returns those never judged (their spans are lost to judging)."""
        unjudged = []
        for trace_id in list(self._traces):
            trace = self._traces[trace_id]
            horizon = self.late_window if trace.judged else self.ttl
            if now - trace.last_arrival < horizon:
                continue
            del self._traces[trace_id]
            self.buffered_spans -= len(trace.records)
            if not trace.judged:
                self.stats.traces_expired_unjudged += 1
                unjudged.append(DueTrace(trace_id, list(trace.records.values()), False))
        return unjudged

    def drain(self) -> list[DueTrace]:
        """Everything still unjudged, for shutdown: judged as it stands."""
        pending = [
            DueTrace(trace_id, list(trace.records.values()), trace.judged)
            for trace_id, trace in self._traces.items()
            if trace.has_run and trace.changed
        ]
        for due in pending:
            self._traces[due.trace_id].changed = False
        return pending

    def _evict_overflow(self) -> None:
        while len(self._traces) > self.max_traces:
            _, trace = self._traces.popitem(last=False)
            self.buffered_spans -= len(trace.records)
            self.stats.traces_evicted += 1
