"""The byte budget's estimate tracks what buffered records really hold: OTLP requests decoded
as the receiver decodes them, buffered, and measured with tracemalloc (``engine.sizes``
documents the factor checked here)."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.engine import EngineSettings
from otel_reliability.engine.buffer import TraceBuffer
from otel_reliability.receiver.intake import PROTOBUF, Body, read_payload

from .receiver_harness import agent_spans, export_request, new_trace_id

TRACES = 40


def request_bytes(extra: dict[str, str], arguments: dict, spans_per_run: int) -> bytes:
    """``TRACES`` agent runs, the run span carrying ``extra`` attributes and every tool call ``arguments``."""
    spans = []
    for _ in range(TRACES):
        calls = [(f"tool_{i}", arguments) for i in range(spans_per_run)]
        run_spans = agent_spans(new_trace_id(), "sized", calls=calls)
        for key, value in extra.items():
            run_spans[0].attributes.add(key=key).value.string_value = value
        spans += run_spans
    return export_request(spans).SerializeToString()


def retained(data: bytes) -> tuple[int, int]:
    """(bytes Python holds for the buffered records, the buffer's estimate of them)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        buffer = TraceBuffer(EngineSettings(max_buffered_bytes=1 << 40, max_traces=10 * TRACES))
        payload = read_payload(Body(data, PROTOBUF))
        buffer.add([to_record(span) for span in payload.decoded.spans], now=0.0)
        del payload
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return held, buffer.buffered_bytes


@pytest.mark.parametrize(
    ("extra", "arguments", "spans_per_run", "low", "high"),
    [
        # what the budget is for: big attribute values, big tool arguments
        pytest.param({"app.document": "d" * 200_000}, {"q": "x"}, 1, 0.9, 1.1, id="200KB-attribute-on-the-run-span"),
        pytest.param({}, {"text": "t" * 20_000}, 3, 0.9, 1.1, id="20KB-tool-arguments"),
        pytest.param({"app.note": "é" * 50_000}, {"q": "x"}, 1, 0.9, 1.1, id="non-ascii-attribute"),
        # corpus-sized spans: a few short strings each; the constants err on the high side
        pytest.param({}, {"city": "Paris"}, 2, 0.9, 2.0, id="small-spans"),
    ],
)
def test_the_estimate_tracks_what_python_holds_for_buffered_records(extra, arguments, spans_per_run, low, high):
    held, estimated = retained(request_bytes(extra, arguments, spans_per_run))
    assert low * held <= estimated <= high * held, (held, estimated, estimated / held)

