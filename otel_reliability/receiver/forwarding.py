"""Forwarding to a downstream OTLP/HTTP endpoint: every span, run spans carrying their verdict.

Run spans are held back until their trace is judged, then sent with the SPEC §6
attributes and the ``gen_ai.evaluation.result`` event added; every other span is sent
as it arrives. A verdict that supersedes one already sent (a late span re-judged the
trace) cannot change the run span downstream any more: it travels on an ``EVALUATOR``
carrier span, a child of the run span linked to it (the OpenInference post-hoc pattern).
Requests wait in a bounded queue and are retried with backoff (and ``Retry-After`` when
the downstream is busy); what the queue cannot take is counted.
"""

from __future__ import annotations

import base64
import logging
import queue
import random
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterable

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span

from ..emitters.span_attributes import evaluation_event, verdict_attributes
from ..results import RunResult
from ..sources import Shard
from ..suppression import suppress_instrumentation_in_this_thread

logger = logging.getLogger(__name__)

_RETRYABLE = {429, 502, 503, 504}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


class Forwarder:
    """Posts ``ExportTraceServiceRequest``s to ``endpoint`` from a worker thread."""

    def __init__(
        self,
        endpoint: str,
        headers: dict[str, str] | None = None,
        max_queue: int = 1_000,
        max_attempts: int = 6,
        timeout: float = 10.0,
    ) -> None:
        self.endpoint = endpoint
        self.headers = {"Content-Type": "application/x-protobuf", **(headers or {})}
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.dropped_requests = 0
        self._queue: queue.Queue[ExportTraceServiceRequest | None] = queue.Queue(max_queue)
        self._thread = threading.Thread(target=self._send_loop, name="otel-reliability-forward", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, request: ExportTraceServiceRequest) -> bool:
        """Queue a request; False (and counted) when the queue is full."""
        if not request.resource_spans:
            return True
        try:
            self._queue.put_nowait(request)
            return True
        except queue.Full:
            self.dropped_requests += 1
            logger.warning("forward queue full: dropped a request of %d spans", _span_count(request))
            return False

    def stop(self, timeout: float = 30.0) -> None:
        """Send what is queued (within ``timeout``), then stop."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _send_loop(self) -> None:
        suppress_instrumentation_in_this_thread()
        while (request := self._queue.get()) is not None:
            self._send(request.SerializeToString())

    def _send(self, body: bytes) -> None:
        delay = 0.5
        for attempt in range(1, self.max_attempts + 1):
            try:
                urllib.request.urlopen(
                    urllib.request.Request(self.endpoint, data=body, headers=self.headers, method="POST"),
                    timeout=self.timeout,
                ).close()
                return
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRYABLE:
                    logger.warning("downstream refused forwarded spans: HTTP %d %s", exc.code, exc.reason)
                    self.dropped_requests += 1
                    return
                delay = _retry_after(exc, delay)
            except OSError as exc:
                logger.info("forwarding attempt %d failed: %s", attempt, exc)
            if attempt < self.max_attempts:
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
        self.dropped_requests += 1
        logger.warning("gave up forwarding a request after %d attempts", self.max_attempts)


def _retry_after(exc: urllib.error.HTTPError, default: float) -> float:
    value = exc.headers.get("Retry-After", "") if exc.headers else ""
    return float(value) if value.isdigit() else default


def _span_count(request: ExportTraceServiceRequest) -> int:
    return sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)


def owned_request(request: ExportTraceServiceRequest, shard: Shard) -> ExportTraceServiceRequest:
    """The spans of ``request`` that ``shard`` owns, under their resources and scopes."""
    out = ExportTraceServiceRequest()
    for resource_spans in request.resource_spans:
        resource_out = None
        for scope_spans in resource_spans.scope_spans:
            spans = [span for span in scope_spans.spans if shard.owner(span.trace_id) == shard.index]
            if not spans:
                continue
            if resource_out is None:
                resource_out = out.resource_spans.add(resource=resource_spans.resource, schema_url=resource_spans.schema_url)
            resource_out.scope_spans.add(scope=scope_spans.scope, schema_url=scope_spans.schema_url).spans.extend(spans)
    return out


def split_run_spans(request: ExportTraceServiceRequest, is_run: Any) -> list[ResourceSpans]:
    """Take the spans ``is_run(trace_id, span_id)`` selects out of ``request``.

    Each comes back wrapped in its own ``ResourceSpans`` (resource and scope kept), to
    be sent once judged; the request keeps every other span.
    """
    held = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            keep = []
            for span in scope_spans.spans:
                if is_run(int.from_bytes(span.trace_id, "big"), int.from_bytes(span.span_id, "big")):
                    wrapper = ResourceSpans(resource=resource_spans.resource, schema_url=resource_spans.schema_url)
                    wrapper.scope_spans.add(scope=scope_spans.scope, schema_url=scope_spans.schema_url).spans.append(span)
                    held.append(wrapper)
                else:
                    keep.append(span)
            if len(keep) != len(scope_spans.spans):
                del scope_spans.spans[:]
                scope_spans.spans.extend(keep)
    return held


def enrich(held: ResourceSpans, result: RunResult) -> dict[str, Any]:
    """Add the verdict attributes and the evaluation event to a held run span; returns the attributes."""
    span: Span = held.scope_spans[0].spans[0]
    attributes = verdict_attributes(result)
    _add_verdict(span, result, attributes, span.end_time_unix_nano)
    return attributes


def _add_verdict(span: Span, result: RunResult, attributes: dict[str, Any], event_time_ns: int) -> None:
    span.attributes.extend(_key_values(attributes.items()))
    name, event_attributes = evaluation_event(result)
    span.events.add(time_unix_nano=event_time_ns, name=name).attributes.extend(_key_values(event_attributes.items()))


CARRIER_SPAN_NAME = "tool_call_reliability"
_CARRIER_RESOURCE = Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="otel-reliability"))])
_CARRIER_SCOPE = InstrumentationScope(name="otel_reliability.receiver")


def evaluation_carrier(result: RunResult, attributes: dict[str, Any], now_ns: int) -> ResourceSpans:
    """An ``EVALUATOR`` span carrying ``result`` (its ``verdict_attributes``) for a run span
    that was already forwarded."""
    run_trace_id = result.trace_id.to_bytes(16, "big")
    run_span_id = result.run_span_id.to_bytes(8, "big")
    span = Span(
        trace_id=run_trace_id,
        span_id=(random.getrandbits(64) or 1).to_bytes(8, "big"),
        parent_span_id=run_span_id,
        name=CARRIER_SPAN_NAME,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=now_ns,
        end_time_unix_nano=now_ns,
    )
    span.links.add(trace_id=run_trace_id, span_id=run_span_id)
    span.attributes.add(key="openinference.span.kind", value=AnyValue(string_value="EVALUATOR"))
    _add_verdict(span, result, attributes, now_ns)
    wrapper = ResourceSpans(resource=_CARRIER_RESOURCE)
    wrapper.scope_spans.add(scope=_CARRIER_SCOPE).spans.append(span)
    return wrapper


def request_of(resource_spans: Iterable[ResourceSpans]) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.resource_spans.extend(resource_spans)
    return request


def request_from_json(document: Any) -> ExportTraceServiceRequest:
    """An OTLP/JSON document (hex ids, as the spec writes them) as a protobuf request."""
    return json_format.ParseDict(_ids_as_base64(document), ExportTraceServiceRequest(), ignore_unknown_fields=True)


def _ids_as_base64(node: Any) -> Any:
    if isinstance(node, list):
        return [_ids_as_base64(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        size = _ID_FIELDS.get(key)
        if size and isinstance(value, str) and len(value) == 2 * size:
            try:
                value = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                pass  # already base64, as protobuf's own JSON mapping writes it
        out[key] = _ids_as_base64(value)
    return out


def _key_values(items: Iterable[tuple[str, Any]]) -> list[KeyValue]:
    return [KeyValue(key=key, value=_any_value(value)) for key, value in items]


def _any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (tuple, list)):
        out = AnyValue()
        out.array_value.values.extend(_any_value(v) for v in value)
        return out
    return AnyValue(string_value=str(value))
