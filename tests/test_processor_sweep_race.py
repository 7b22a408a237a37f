"""The worker's sweep of open spans does not fail when the app starts spans meanwhile.

The sweep walks every open span while app threads go on adding theirs; a garbage collection
during the walk runs other Python code (finalizers, ``gc.callbacks``, and so another thread).
Here a ``gc.callback`` stands in for that thread and starts a span in the middle of the walk.
"""

from __future__ import annotations

import gc

from opentelemetry.sdk.trace import TracerProvider

from otel_reliability import ReliabilitySpanProcessor


def test_spans_started_during_the_sweep_of_open_spans_do_not_fail_it():
    processor = ReliabilitySpanProcessor(store=None)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("sweep")
    processor.shutdown()  # the sweep runs on this thread below, not racing the worker's own
    processor._shut = False  # ...but spans are still tracked as they start
    for index in range(200):
        tracer.start_span(f"open {index}")  # never ended: the sweep walks them
    started_during_collection = []

    def start_a_span(phase: str, _info: dict) -> None:
        if phase == "start" and len(started_during_collection) < 10_000:
            started_during_collection.append(tracer.start_span("started while the sweep walks"))

    thresholds = gc.get_threshold()
    gc.callbacks.append(start_a_span)
    gc.set_threshold(1)  # a collection at (nearly) every allocation the walk makes
    try:
        processor._judging._last_sweep = float("-inf")
        processor._judging.sweep()
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(start_a_span)
    assert started_during_collection, "no collection ran during the sweep: the test tests nothing"
    assert len(processor._judging.open_spans) == 200 + len(started_during_collection)  # none past trace_ttl
