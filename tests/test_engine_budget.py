"""The byte budget's accounting: every buffered byte is given back when its trace leaves,
however it leaves, and every departure is counted once under its reason."""

from __future__ import annotations

import pytest

from otel_reliability.engine import Engine, EngineSettings, Pipeline
from otel_reliability.engine.buffer import TraceBuffer
from otel_reliability.engine.settings import MIB, SettingsError
from otel_reliability.engine.sizes import TRACE_BYTES, event_size, record_size
from otel_reliability.model import EventRecord, Role, SpanRecord, ToolRequest, ToolResponse

BUDGET = 2 * MIB
BIG = 700 * 1024  # three of these outgrow BUDGET


def span(trace_id: int, span_id: int, run: bool = False, weight: int = 0) -> SpanRecord:
    return SpanRecord(
        trace_id, span_id, 0 if run else 1, "s", 0, 1, role=Role.AGENT_RUN if run else Role.TOOL,
        output="x" * weight if weight else None,
    )


def event(trace_id: int, span_id: int, weight: int) -> EventRecord:
    return EventRecord(trace_id, span_id, 5, responses=(ToolResponse("c1", "y" * weight),))


def budget_buffer(**settings) -> TraceBuffer:
    return TraceBuffer(EngineSettings(max_buffered_bytes=BUDGET, **settings), decision_wait=1.0)


def expired(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1)], now=0.0)
    buffer.expire(now=1_000.0)


def judged_then_quiet(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1, run=True)], now=0.0)
    buffer.due(now=1.0)
    buffer.expire(now=1_000.0)


def too_many_open(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1), span(2, 1), span(3, 1), span(4, 1)], now=0.0)


def too_many_with_the_oldest_judged(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1, run=True)], now=0.0)
    buffer.due(now=1.0)
    buffer.add([span(2, 1), span(3, 1), span(4, 1)], now=2.0)


def too_big_open(buffer: TraceBuffer) -> None:
    for trace_id in (1, 2, 3):
        buffer.add([span(trace_id, 1, weight=BIG)], now=float(trace_id))


def too_big_with_a_judged_trace_newer_than_an_open_one(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1, weight=BIG)], now=0.0)  # open, and the oldest
    buffer.add([span(2, 1, run=True, weight=BIG)], now=1.0)
    buffer.due(now=2.0)  # trace 2 is judged: it goes first all the same
    buffer.add([span(3, 1, weight=BIG)], now=3.0)


def too_big_in_event_records(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1)], now=0.0)
    buffer.add_events([event(1, 1, BIG), event(2, 1, BIG)], now=1.0)
    buffer.add_events([event(3, 1, BIG)], now=2.0)


def forgotten(buffer: TraceBuffer) -> None:
    buffer.add([span(1, 1, run=True, weight=BIG)], now=0.0)
    buffer.add_events([event(1, 1, 1_000)], now=0.0)
    buffer.forget(1)


@pytest.mark.parametrize(
    ("scenario", "dropped"),
    [
        pytest.param(expired, {"ttl_expired_unjudged": 1}, id="ttl-expiry-unjudged"),
        pytest.param(judged_then_quiet, {"late_window_expired": 1}, id="late-window-expiry"),
        pytest.param(too_many_open, {"max_traces": 1}, id="max-traces-open"),
        pytest.param(too_many_with_the_oldest_judged, {"max_traces_judged": 1}, id="max-traces-judged"),
        pytest.param(too_big_open, {"max_bytes": 1}, id="max-bytes-open-oldest-first"),
        pytest.param(too_big_with_a_judged_trace_newer_than_an_open_one, {"max_bytes_judged": 1}, id="max-bytes-judged-first"),
        pytest.param(too_big_in_event_records, {"max_bytes": 1}, id="max-bytes-of-event-records"),
        pytest.param(forgotten, {}, id="forget-is-no-drop"),
    ],
)
def test_each_departure_is_counted_once_by_reason_and_its_bytes_are_given_back(scenario, dropped):
    buffer = budget_buffer(max_traces=3)
    scenario(buffer)
    assert buffer.stats.traces_dropped == dropped
    assert buffer.buffered_bytes <= BUDGET
    buffer.expire(now=10_000.0)  # whatever is left leaves
    for trace_id in (1, 2, 3, 4):
        buffer.forget(trace_id)
    assert (len(buffer), buffer.buffered_bytes, buffer.buffered_spans, buffer.buffered_events) == (0, 0, 0, 0)


def test_the_buffered_bytes_are_the_sum_of_the_estimates_of_what_is_held():
    buffer = budget_buffer()
    spans = [span(1, 1, run=True, weight=300), span(1, 2, weight=10), span(2, 1)]
    events = [event(1, 2, 50)]
    buffer.add(spans, now=0.0)
    buffer.add(spans[:1], now=0.5)  # a retried export: nothing more is held
    buffer.add_events(events, now=1.0)
    assert buffer.buffered_bytes == 2 * TRACE_BYTES + sum(map(record_size, spans)) + sum(map(event_size, events))


def test_the_trace_that_outgrows_the_budget_alone_is_evicted_itself():
    buffer = budget_buffer()
    buffer.add([span(1, 1, weight=3 * BIG)], now=0.0)
    assert (len(buffer), buffer.buffered_bytes, buffer.stats.traces_dropped) == (0, 0, {"max_bytes": 1})


def test_what_arrives_of_an_evicted_trace_is_held_and_counted_but_never_judged():
    buffer = budget_buffer()
    buffer.add([span(1, 2, weight=3 * BIG)], now=0.0)  # evicted at once: it alone outgrows the budget
    buffer.add([span(1, 1, run=True)], now=1.0)  # its run span, after: judged alone, it would be wrong
    assert (buffer.due(now=10.0), buffer.drain(), buffer.joined_records(1)) == ([], [], [])
    assert [d.trace_id for d in buffer.expire(now=1_000.0)] == [1]  # expires as never judged
    assert buffer.stats.traces_dropped == {"max_bytes": 1, "arrived_after_eviction": 1}
    assert (len(buffer), buffer.buffered_bytes) == (0, 0)


def paused_run(trace_id: int, weight: int) -> list[SpanRecord]:
    """A run that ended with a tool call still pending: the engine keeps it for its resumption."""
    run = span(trace_id, 1, run=True)
    run.agent_name = "agent"
    model = SpanRecord(trace_id, 2, 1, "chat", 0, 1, role=Role.MODEL, output="z" * weight,
                       requests=(ToolRequest("approve", "{}", f"call-{trace_id}"),))
    return [run, model]


def test_paused_runs_share_the_budget_and_the_buffer_makes_room_for_them():
    pipeline = Pipeline(Engine(), settings=EngineSettings(max_buffered_bytes=BUDGET), decision_wait=1.0)
    pipeline.add([span(9, 1, weight=BIG), span(8, 1, weight=BIG)], now=0.0)  # open traces, never judged
    pipeline.add(paused_run(1, BIG), now=0.5)
    pipeline.tick(now=2.0)  # trace 1 judged: its run is kept as paused, the buffer evicts to fit it
    assert pipeline.paused.bytes > BIG
    assert pipeline.buffered_bytes <= BUDGET
    assert pipeline.traces_dropped == {"max_bytes_judged": 1, "max_bytes": 1}  # trace 1, then trace 9
    pipeline.tick(now=1_000.0)  # trace 8 expires; the paused run stays for the run that resumes it
    assert pipeline.buffer.buffered_bytes == 0 and pipeline.buffered_bytes == pipeline.paused.bytes


def test_paused_runs_outlast_open_traces_and_beyond_the_budget_alone_the_oldest_is_let_go():
    pipeline = Pipeline(Engine(), settings=EngineSettings(max_buffered_bytes=BUDGET), decision_wait=1.0)
    for trace_id in (1, 2):  # runs other shards judged paused
        pipeline.keep_paused([f"call:call-{trace_id}"], paused_run(trace_id, BIG))
    pipeline.add([span(7, 1, weight=BIG)], now=0.0)  # no room beside them: the open trace goes
    assert (pipeline.traces_dropped, pipeline.paused.dropped) == ({"max_bytes": 1}, {})
    pipeline.keep_paused(["call:call-3"], paused_run(3, BIG))
    assert pipeline.paused.dropped == {"max_bytes": 1}
    still_paused = [
        bool(pipeline.paused.predecessors([SpanRecord(9, 9, 0, "chat", 0, 1, responses=(ToolResponse(f"call-{t}", "ok"),))], []))
        for t in (1, 2, 3)
    ]
    assert still_paused == [False, True, True]
    assert pipeline.buffered_bytes <= BUDGET


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_buffered_bytes": 1024}, "max_buffered_bytes: must be at least 1048576, got 1024"),
        ({"soft_limit_ratio": 0}, "soft_limit_ratio: must be more than 0, got 0"),
        ({"soft_limit_ratio": 1.5}, "soft_limit_ratio: must be at most 1, got 1.5"),
    ],
)
def test_bad_byte_budgets_are_refused_naming_the_setting(settings, message):
    with pytest.raises(SettingsError, match=message):
        EngineSettings.checked(settings)


def test_the_default_budget_suits_a_small_container():
    settings = EngineSettings()
    assert (settings.max_buffered_bytes, settings.soft_buffered_bytes) == (512 * MIB, int(0.8 * 512 * MIB))
