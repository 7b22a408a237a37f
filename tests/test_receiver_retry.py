"""Retryable refusals over gRPC carry the delay where the official exporters read it.

``opentelemetry-exporter-otlp-proto-grpc`` reads the delay of a RESOURCE_EXHAUSTED or
UNAVAILABLE answer from the trailing metadata key ``google.rpc.retryinfo-bin`` (a
serialized ``google.rpc.RetryInfo``) and otherwise backs off 1 s, 2 s, 4 s… (±20 %);
gRPC's rich error model puts the same ``RetryInfo`` in the ``google.rpc.Status`` of
``grpc-status-details-bin``. The receiver sends both, for a full buffer and for too many
export calls at once (``grpc_server.CONCURRENT_EXPORTS``), which grpcio itself would
refuse without any delay.
"""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from prometheus_client.parser import text_string_to_metric_families

from otel_reliability.receiver.grpc_server import CONCURRENT_EXPORTS

from .receiver_harness import (
    EXPORT_METHOD,
    Receiver,
    agent_spans,
    by_run,
    expected_results,
    export_request,
    free_port,
    new_trace_id,
    receivers,  # noqa: F401 - fixture
    wait_until,
)

RETRY_AFTER = 3
DROPPED = "agent_reliability_spans_dropped_total"


def _retry_delays(error: grpc.RpcError) -> tuple[float, float]:
    """The delay under ``google.rpc.retryinfo-bin`` and the one in the rich status."""
    metadata = dict(error.trailing_metadata())
    alone = error_details_pb2.RetryInfo.FromString(metadata["google.rpc.retryinfo-bin"])
    status = status_pb2.Status.FromString(metadata["grpc-status-details-bin"])
    assert status.code == error.code().value[0]
    rich = error_details_pb2.RetryInfo()
    assert any(detail.Unpack(rich) for detail in status.details)
    return alone.retry_delay.ToTimedelta().total_seconds(), rich.retry_delay.ToTimedelta().total_seconds()


def _sdk_spans(count: int) -> list:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    recorded = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(recorded))
    tracer = provider.get_tracer("tests.retry")
    for i in range(count):
        tracer.start_span(f"work {i}").end()
    return list(recorded.get_finished_spans())


def test_the_python_grpc_exporter_waits_the_receivers_retry_delay(receivers):  # noqa: F811
    # Full for good: 8 spans of a trace with no run span stay until trace_ttl.
    receiver = receivers.start("retry-delay", config={"max_buffered_spans": 8, "retry_after": RETRY_AFTER, "trace_ttl": 600})
    calls = [(f"tool_{i}", {"i": i}) for i in range(6)]
    receiver.send(agent_spans(new_trace_id(), "filler", calls)[1:])  # 8 spans
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    # timeout 5 s: the first try is refused at 0 s, the retry at 3 s, and a third try at
    # 6 s would be past the deadline, so the exporter gives up after exactly two.
    exporter = OTLPSpanExporter(endpoint=receiver.grpc_endpoint, insecure=True, timeout=5)
    arrivals = _refusals_seen_while(receiver, lambda: exporter.export(_sdk_spans(2)), spans_per_request=2)
    exporter.shutdown()

    result, windows = arrivals
    assert result is SpanExportResult.FAILURE
    assert len(windows) == 2, windows
    # Seen from the receiver: each refusal is counted in /metrics, polled without pause;
    # a refusal happened after the start of the last poll that did not show it and
    # before the end of the first poll that did. The gap between the two refusals is at
    # least the second's earliest time minus the first's latest. That bound is loose by
    # the length of a poll or two (longer on a loaded machine), hence the 1 s slack; the
    # exporter's own first backoff, had it not read the delay, is at most 1.2 s.
    (_, first_latest), (second_earliest, _) = windows
    assert second_earliest - first_latest >= RETRY_AFTER - 1.0, windows


def _refusals_seen_while(receiver: Receiver, action, spans_per_request: int):
    """Run ``action`` while polling the receiver's refusal counter; returns the action's
    result and, per refusal, the window (earliest, latest) in which it happened."""
    windows: list[tuple[float, float]] = []
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(action()))
    last_start = time.monotonic()
    seen = receiver.metric(DROPPED, reason="overloaded")
    worker.start()
    finished = False
    while not finished:
        finished = not worker.is_alive()  # one more poll after the action ended: its last refusal
        start = time.monotonic()
        now_seen = receiver.metric(DROPPED, reason="overloaded")
        end = time.monotonic()
        for _ in range(int(now_seen - seen) // spans_per_request):
            windows.append((last_start, end))
        seen, last_start = now_seen, start
    worker.join()
    return outcome[0], windows


def test_calls_past_the_concurrency_limit_are_refused_with_the_retry_delay_and_the_others_kept(tmp_path):
    """The real gRPC server and receiver, in this process: calls stay in flight while the
    serving process's intake is held (as it is while a restarted shard gets its traces back
    from the log), so the test can hold it and count what the server does with the others."""
    from otel_reliability.receiver.config import ReceiverConfig
    from otel_reliability.receiver.grpc_server import start_grpc
    from otel_reliability.receiver.shards import ShardedReceiver

    endpoint = f"127.0.0.1:{free_port()}"
    config = ReceiverConfig(store=str(tmp_path / "verdicts.db"), workers=2, retry_after=RETRY_AFTER,
                            decision_wait=0.2, grpc_endpoint=endpoint)
    receiver = ShardedReceiver(config)
    receiver.start()
    server = start_grpc(receiver, config)
    extra = 16
    traces = [agent_spans(new_trace_id(), "concurrent") for _ in range(CONCURRENT_EXPORTS + extra)]
    try:
        with grpc.insecure_channel(endpoint) as channel:
            call = channel.unary_unary(EXPORT_METHOD)
            with receiver._intake:  # every call let in waits here
                pending = [call.future(export_request(spans).SerializeToString(), timeout=60) for spans in traces]
                wait_until(lambda: sum(f.done() for f in pending) >= extra, 30, f"{extra} calls to be refused")
                refused = [(spans, f.exception()) for spans, f in zip(traces, pending) if f.done()]
            for f in pending:
                f.exception(timeout=60)  # every call has its final answer

        assert len(refused) == extra
        for _, error in refused:
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert _retry_delays(error) == (RETRY_AFTER, RETRY_AFTER)
        refusals = sum(s.value for family in text_string_to_metric_families(receiver.metrics_text().decode())
                       for s in family.samples
                       if s.name == "agent_reliability_refusals_total" and s.labels.get("reason") == "concurrent_exports")
        assert refusals == extra
        kept = [spans for spans, f in zip(traces, pending) if f.exception() is None]
        assert len(kept) == CONCURRENT_EXPORTS
        expected = by_run([r for spans in kept for r in expected_results(spans)])
        trace_ids = {r["trace_id"] for r in expected} | {spans[0].trace_id.hex() for spans, _ in refused}

        def stored() -> list:
            return by_run(r.to_json() for r in receiver.store.query(limit=None) if r.to_json()["trace_id"] in trace_ids)

        wait_until(lambda: stored() == expected, 30, "the verdicts of the calls let in")
    finally:
        server.stop(grace=None)
        receiver.stop()


def test_a_full_buffer_refusal_carries_the_delay_in_both_places(receivers):  # noqa: F811
    receiver = receivers.start("full-both-places", config={"max_buffered_spans": 4, "retry_after": RETRY_AFTER})
    with pytest.raises(grpc.RpcError) as refused:
        receiver.grpc_export(export_request(agent_spans(new_trace_id(), "too-big")))  # 5 spans

    assert refused.value.code().value[0] == code_pb2.RESOURCE_EXHAUSTED
    assert _retry_delays(refused.value) == (RETRY_AFTER, RETRY_AFTER)
    assert receiver.metric("agent_reliability_refusals_total", reason="overloaded") == 1
