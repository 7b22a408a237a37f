"""When the receiver judges a trace: run span present, quiet for decision_wait; late spans re-judge."""

from __future__ import annotations

import pytest

from otel_reliability.model import Role, SpanRecord
from otel_reliability.engine.buffer import TraceBuffer
from otel_reliability.engine.settings import EngineSettings


def record(trace_id: int, span_id: int, run: bool = False) -> SpanRecord:
    """A run span, or a plain span (no tool: a tool execution may belong to a run inferred from structure)."""
    return SpanRecord(trace_id, span_id, 0 if run else 1, "s", 0, 1, role=Role.AGENT_RUN if run else Role.OTHER)


def test_a_trace_with_a_root_span_and_tool_calls_is_due_for_a_run_found_from_structure():
    buffer = TraceBuffer(decision_wait=100.0)
    root, tool = SpanRecord(1, 1, 0, "agent", 0, 9), SpanRecord(1, 2, 1, "search", 1, 2, role=Role.TOOL)
    waiting = SpanRecord(2, 2, 1, "search", 1, 2, role=Role.TOOL)  # its root (a run span) is yet to come
    buffer.add([tool, waiting, record(3, 3)], now=0.0)
    buffer.add([root], now=0.0)
    assert [d.trace_id for d in buffer.drain()] == [1]


def due_ids(buffer: TraceBuffer, now: float) -> list[tuple[int, int, bool]]:
    return [(d.trace_id, len(d.records), d.late) for d in buffer.due(now)]


@pytest.mark.parametrize(
    "arrivals",
    [
        pytest.param([[1], [2], [3]], id="run-span-first"),
        pytest.param([[2], [3], [1]], id="run-span-last"),
        pytest.param([[2], [1], [3]], id="run-span-in-the-middle"),
        pytest.param([[3, 1, 2]], id="one-request"),
    ],
)
def test_a_trace_split_across_requests_is_judged_once_when_quiet(arrivals):
    buffer = TraceBuffer(decision_wait=2.0)
    for t, span_ids in enumerate(arrivals):
        buffer.add([record(7, s, run=(s == 1)) for s in span_ids], now=float(t))
        assert buffer.due(now=float(t)) == []  # never while spans keep coming
    last = float(len(arrivals) - 1)
    assert due_ids(buffer, last + 1.9) == []
    assert due_ids(buffer, last + 2.0) == [(7, 3, False)]
    assert due_ids(buffer, last + 10) == []


def test_a_trace_without_a_run_span_is_never_due_and_expires_after_its_ttl():
    buffer = TraceBuffer(EngineSettings(trace_ttl=5.0), decision_wait=1.0)
    buffer.add([record(7, 2)], now=0.0)
    assert buffer.due(now=4.0) == []
    assert [d.trace_id for d in buffer.expire(now=5.0)] == [7]
    assert (len(buffer), buffer.stats.traces_dropped, buffer.buffered_spans) == (0, {"ttl_expired_unjudged": 1}, 0)


def test_a_late_span_within_the_window_makes_the_trace_due_again_as_late():
    buffer = TraceBuffer(EngineSettings(late_window=10.0), decision_wait=1.0)
    buffer.add([record(7, 1, run=True)], now=0.0)
    assert due_ids(buffer, 1.0) == [(7, 1, False)]
    buffer.add([record(7, 2)], now=3.0)
    assert due_ids(buffer, 4.0) == [(7, 2, True)]
    assert buffer.stats.late_spans == 1


def test_reopening_a_judged_trace_makes_it_due_again_as_late_and_nothing_else_is_reopened():
    buffer = TraceBuffer(EngineSettings(late_window=10.0), decision_wait=1.0)
    buffer.add([record(7, 1, run=True)], now=0.0)
    buffer.add([record(8, 1, run=True)], now=0.5)
    assert due_ids(buffer, 1.0) == [(7, 1, False)]  # 8 is not quiet yet: not judged
    assert buffer.reopen(7, now=3.0) and not buffer.reopen(8, now=3.0) and not buffer.reopen(9, now=3.0)
    assert due_ids(buffer, 3.5) == [(8, 1, False)]
    assert due_ids(buffer, 4.0) == [(7, 1, True)]
    assert buffer.stats.late_spans == 0  # no span arrived


def test_a_judged_trace_is_forgotten_after_the_late_window():
    buffer = TraceBuffer(EngineSettings(late_window=10.0), decision_wait=1.0)
    buffer.add([record(7, 1, run=True)], now=0.0)
    buffer.due(now=1.0)
    assert buffer.expire(now=10.0) == []  # judged traces leave silently
    assert len(buffer) == 0


def test_interleaved_traces_are_judged_independently():
    buffer = TraceBuffer(decision_wait=1.0)
    buffer.add([record(1, 1, run=True), record(2, 5)], now=0.0)
    buffer.add([record(2, 4, run=True)], now=0.5)
    assert due_ids(buffer, 1.0) == [(1, 1, False)]
    assert due_ids(buffer, 1.5) == [(2, 2, False)]


def test_a_repeated_span_from_a_retried_export_is_kept_once():
    buffer = TraceBuffer(decision_wait=1.0)
    buffer.add([record(7, 1, run=True), record(7, 2)], now=0.0)
    buffer.add([record(7, 2)], now=0.1)
    assert due_ids(buffer, 1.1) == [(7, 2, False)]
    assert buffer.buffered_spans == 2


def test_bounds_evict_the_oldest_trace_and_reject_spans_beyond_a_trace_limit():
    buffer = TraceBuffer(EngineSettings(max_traces=2, max_spans_per_trace=2))
    buffer.add([record(1, 1), record(2, 1), record(3, 1)], now=0.0)
    assert (len(buffer), buffer.stats.traces_dropped) == (2, {"max_traces": 1})
    rejected = buffer.add([record(3, 2), record(3, 3)], now=0.0)
    assert len(rejected) == 1 and "max_spans_per_trace" in rejected[0]


def test_drain_hands_over_every_trace_with_a_run_span_for_shutdown():
    buffer = TraceBuffer(decision_wait=100.0)
    buffer.add([record(1, 1, run=True), record(2, 3)], now=0.0)
    assert [d.trace_id for d in buffer.drain()] == [1]


@pytest.mark.parametrize(
    ("first_has_run", "left_unjudged"),
    [pytest.param(True, [2, 3], id="judged-trace-is-oldest"), pytest.param(False, [3], id="unjudged-trace-is-oldest")],
)
def test_overflow_evicts_the_least_recently_arrived_trace_judged_or_not(first_has_run, left_unjudged):
    buffer = TraceBuffer(EngineSettings(max_traces=2), decision_wait=0.5)
    buffer.add([record(1, 1, run=first_has_run)], now=0.0)
    buffer.due(now=1.0)
    buffer.add([record(2, 1, run=not first_has_run)], now=2.0)
    buffer.due(now=3.0)
    buffer.add([record(3, 1)], now=4.0)  # trace 1 arrived first: it goes
    assert (len(buffer), sum(buffer.stats.traces_dropped.values())) == (2, 1)
    assert [d.trace_id for d in buffer.expire(now=1000.0)] == left_unjudged


def test_expiry_reaches_every_trace_past_its_window_whatever_arrived_after_it():
    buffer = TraceBuffer(EngineSettings(late_window=10.0, trace_ttl=100.0), decision_wait=1.0)
    buffer.add([record(1, 1, run=True)], now=0.0)  # judged at 1, forgotten at 10
    buffer.add([record(2, 1)], now=1.0)  # never runs: expires unjudged at 101
    buffer.add([record(3, 1, run=True)], now=2.0)  # judged at 3, forgotten at 12
    assert [d.trace_id for d in buffer.due(now=3.0)] == [1, 3]
    buffer.add([record(1, 2)], now=5.0)  # late: trace 1 now stays until 15
    assert buffer.expire(now=12.0) == [] and len(buffer) == 2
    assert [d.trace_id for d in buffer.due(now=12.0)] == [1]
    assert buffer.expire(now=15.0) == [] and len(buffer) == 1
    assert [d.trace_id for d in buffer.expire(now=101.0)] == [2] and len(buffer) == 0


def test_a_trace_is_pending_from_its_spans_until_the_due_call_after_its_verdicts():
    """``pending`` reaches 0 only once nothing handed out can still be publishing: the verdicts
    of what ``due`` returned are published before the next ``due``."""
    buffer = TraceBuffer(EngineSettings(late_window=30.0), decision_wait=1.0)
    steps = []
    buffer.add([record(7, 2)], now=0.0)
    steps.append(("a span, no run span yet", buffer.pending))
    buffer.add([record(7, 1, run=True)], now=0.0)
    steps.append(("the run span: waiting to go quiet", buffer.pending))
    buffer.due(now=1.0)
    steps.append(("handed out: being judged", buffer.pending))
    buffer.due(now=1.5)
    steps.append(("the next due: its verdict is out", buffer.pending))
    buffer.add([record(7, 3)], now=2.0)
    steps.append(("a late span", buffer.pending))
    buffer.due(now=3.0), buffer.due(now=3.5)
    steps.append(("re-judged", buffer.pending))
    buffer.reopen(7, now=4.0)
    steps.append(("reopened", buffer.pending))
    buffer.drain()
    steps.append(("drained for shutdown: being judged", buffer.pending))

    assert steps == [
        ("a span, no run span yet", 0),
        ("the run span: waiting to go quiet", 1),
        ("handed out: being judged", 1),
        ("the next due: its verdict is out", 0),
        ("a late span", 1),
        ("re-judged", 0),
        ("reopened", 1),
        ("drained for shutdown: being judged", 1),
    ]
