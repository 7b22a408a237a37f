"""The receiver forwards every span downstream, run spans carrying their verdict, and can push its metrics."""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_reliability.receiver.config import ReceiverConfig
from otel_reliability.receiver.intake import decode_body
from otel_reliability.receiver.service import ReceiverService

from .corpus import CORPUS

TEAM = CORPUS / "agno" / "team_nested.json"


class Downstream:
    """A real OTLP/HTTP endpoint that keeps what it is sent; answers 503 for the first ``busy`` posts."""

    def __init__(self, busy: int = 0) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.busy = busy
        downstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if downstream.busy:
                    downstream.busy -= 1
                    self.send_response(503)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                if self.path.endswith("/v1/metrics"):
                    downstream.metrics.append(ExportMetricsServiceRequest.FromString(body))
                else:
                    downstream.requests.append(ExportTraceServiceRequest.FromString(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1/traces"

    def spans(self):
        """Every span received, by span id (a retried or repeated span counts once)."""
        return {
            span.span_id: span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        }

    def named(self, name):
        [span] = [s for s in self.spans().values() if s.name == name]
        return span


@pytest.fixture
def downstream():
    server = Downstream()
    yield server
    server.server.shutdown()


def receiver(tmp_path, url) -> ReceiverService:
    config = ReceiverConfig(
        grpc_endpoint=None, http_endpoint=None, store=str(tmp_path / "r.db"), decision_wait=0.05, forward_endpoint=url
    )
    return ReceiverService(config)


def send(service: ReceiverService, path, content_type="application/json") -> None:
    body = path.read_bytes()
    if content_type == "application/x-protobuf":
        from otel_reliability.receiver.forwarding import request_from_json

        body = request_from_json(json.loads(body)).SerializeToString()
    service.accept(decode_body(gzip.compress(body), content_type, "gzip", 10**8))


def settle(service: ReceiverService, until) -> None:
    deadline = time.monotonic() + 10
    while not until() and time.monotonic() < deadline:
        service.judge_due()
        time.sleep(0.02)


@pytest.mark.parametrize("content_type", ["application/json", "application/x-protobuf"])
def test_every_span_is_forwarded_and_only_the_top_level_run_span_carries_the_verdict(tmp_path, downstream, content_type):
    service = receiver(tmp_path, downstream.url)
    service.start()
    send(service, TEAM, content_type)
    settle(service, lambda: len(downstream.spans()) == 12)
    service.stop()
    assert len(downstream.spans()) == 12
    run = downstream.named("Outer_Team.run")
    attributes = {kv.key: kv.value for kv in run.attributes}
    assert attributes["reliability.status"].string_value == "PASSED"
    assert [v.string_value for v in attributes["reliability.passed_tool_calls"].array_value.values] == [
        "delegate_task_to_member", "delegate_task_to_member", "multiply",
    ]
    assert [e.name for e in run.events] == ["gen_ai.evaluation.result"]
    assert run.trace_id.hex() == "0000a6e0000000000000000000000001"
    member = {kv.key for kv in downstream.named("Inner_Math_Team.run").attributes}
    assert "reliability.status" not in member and "agno.run.id" in member


def test_a_busy_downstream_is_retried_until_it_takes_the_spans(tmp_path):
    busy = Downstream(busy=2)
    service = receiver(tmp_path, busy.url)
    service.start()
    send(service, TEAM)
    settle(service, lambda: len(busy.spans()) == 12)
    service.stop()
    busy.server.shutdown()
    assert len(busy.spans()) == 12
    assert service.forwarder.dropped_requests == 0


def test_shutdown_judges_a_trace_that_never_went_quiet_before_forwarding_it(tmp_path, downstream):
    service = receiver(tmp_path, downstream.url)
    service.config.decision_wait = 3600  # never quiet long enough before the stop
    service.start()
    send(service, TEAM)
    service.stop()  # judges what it holds, then forwards
    run = downstream.named("Outer_Team.run")
    assert "reliability.status" in {kv.key for kv in run.attributes}
    assert len(downstream.spans()) == 12


def test_metrics_are_pushed_over_otlp_when_an_endpoint_is_configured(tmp_path, downstream):
    config = ReceiverConfig(
        grpc_endpoint=None,
        http_endpoint=None,
        store=str(tmp_path / "r.db"),
        decision_wait=0.05,
        metrics_endpoint=downstream.url.replace("/v1/traces", "/v1/metrics"),
        metrics_interval=0.2,
    )
    service = ReceiverService(config)
    service.start()
    send(service, TEAM)
    settle(service, lambda: "agent.reliability.evaluations" in _names(downstream))
    service.stop()
    assert {"agent.reliability.evaluations", "agent.reliability.spans.received"} <= _names(downstream)


def _names(downstream) -> set[str]:
    return {
        metric.name
        for request in downstream.metrics
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }


def _send_spans(service: ReceiverService, keep) -> None:
    from otel_reliability.receiver.forwarding import request_from_json

    request = request_from_json(json.loads(TEAM.read_bytes()))
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            spans = [s for s in scope.spans if keep(s)]
            del scope.spans[:]
            scope.spans.extend(spans)
    service.accept(decode_body(request.SerializeToString(), "application/x-protobuf", "", 10**8))


def _late_evaluations(service: ReceiverService) -> float:
    lines = service.metrics_text().decode().splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("agent_reliability_evaluations_late_total{"))


def _strings(span, key):
    [value] = [kv.value for kv in span.attributes if kv.key == key]
    return [v.string_value for v in value.array_value.values] if value.HasField("array_value") else value.string_value


@pytest.mark.parametrize(
    ("late_span", "carrier_expected"),
    [pytest.param("multiply", True, id="late-tool-span-changes-the-verdict"),
     pytest.param("OpenAIChat.invoke", False, id="late-span-leaves-the-verdict-as-it-was")],
)
def test_a_superseding_verdict_reaches_downstream_on_a_carrier_span_linked_to_the_run(
    tmp_path, downstream, late_span, carrier_expected
):
    service = receiver(tmp_path, downstream.url)
    service.config.late_window = 60
    late_id = next(
        s["spanId"] for rs in json.loads(TEAM.read_bytes())["resourceSpans"] for ss in rs["scopeSpans"]
        for s in ss["spans"] if s["name"] == late_span
    )
    service.start()
    _send_spans(service, lambda s: s.span_id.hex() != late_id)
    settle(service, lambda: len(downstream.spans()) == 11)
    first = _strings(downstream.named("Outer_Team.run"), "reliability.passed_tool_calls")
    _send_spans(service, lambda s: s.span_id.hex() == late_id)
    settle(service, lambda: _late_evaluations(service) == 1 and len(downstream.spans()) >= 12)
    service.stop()
    carriers = [s for s in downstream.spans().values() if s.name == "tool_call_reliability"]
    run = downstream.named("Outer_Team.run")
    assert _strings(run, "reliability.passed_tool_calls") == first  # the run span itself went out once
    if not carrier_expected:
        assert carriers == []
        return
    [carrier] = carriers
    assert (carrier.trace_id, carrier.parent_span_id) == (run.trace_id, run.span_id)
    assert [(link.trace_id, link.span_id) for link in carrier.links] == [(run.trace_id, run.span_id)]
    assert _strings(carrier, "openinference.span.kind") == "EVALUATOR"
    assert "multiply" in _strings(carrier, "reliability.passed_tool_calls")
    assert "multiply" not in first
    assert [e.name for e in carrier.events] == ["gen_ai.evaluation.result"]


def test_with_two_workers_each_span_is_forwarded_once_by_the_process_that_owns_its_trace(tmp_path, downstream):
    from otel_reliability.receiver.shards import ShardedReceiver

    document = json.loads(TEAM.read_text())
    # A second copy of the trace with an even trace id (the original's is odd) and its own span ids.
    twin = json.loads(json.dumps(document).replace("0000a6e0000000000000000000000001", "0000a6e0000000000000000000000002"))
    for resource in twin["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["spanId"] = "f" + span["spanId"][1:]
                if span.get("parentSpanId"):
                    span["parentSpanId"] = "f" + span["parentSpanId"][1:]
    document["resourceSpans"] += twin["resourceSpans"]
    config = ReceiverConfig(
        grpc_endpoint=None, http_endpoint=None, store=str(tmp_path / "r.db"), decision_wait=0.05,
        forward_endpoint=downstream.url, workers=2,
    )
    service = ShardedReceiver(config)
    service.start()
    try:
        service.accept(decode_body(json.dumps(document).encode(), "application/json", "", 10**8))
        wait = time.monotonic() + 15
        while len(downstream.spans()) < 24 and time.monotonic() < wait:
            time.sleep(0.05)
    finally:
        service.stop()

    sent = [
        (span.trace_id.hex(), span.span_id.hex())
        for request in downstream.requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert len(sent) == len(set(sent)) == 24
    runs = [s for s in downstream.spans().values() if s.name == "Outer_Team.run"]
    assert sorted(r.trace_id.hex()[-1] for r in runs) == ["1", "2"]
    for run in runs:
        assert {kv.key: kv.value for kv in run.attributes}["reliability.status"].string_value == "PASSED"
