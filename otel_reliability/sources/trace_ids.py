"""The trace ids of a request's spans (or log records), read without decoding anything else.

A receiver with workers routes each request by trace id (``receiver.shards``): it needs, per
trace, how many spans the request carries, and nothing more. Reading one field per span of
a parsed protobuf costs a fraction of decoding the span; OTLP/JSON is parsed whole (one C
call) and only its ids are read. A span whose trace id is malformed is listed with the same
``place: reason`` text the decoders give (``otlp_proto``, ``otlp_json``); a log record may
have no trace id at all, and counts under ``unowned`` (shard 0 takes those).

>>> from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
>>> request = ExportTraceServiceRequest()
>>> spans = request.resource_spans.add().scope_spans.add().spans
>>> _ = spans.add(trace_id=(7).to_bytes(16, "big")), spans.add(trace_id=b"x")
>>> ids = request_trace_ids(request.SerializeToString(), json=False, logs=False)
>>> ids.counts, ids.rejected
({7: 1}, ['resourceSpans[0].scopeSpans[0].spans[1].traceId: expected 16 bytes, got 1 bytes'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .decoded import TraceInputError
from .otlp_fields import BadField, field_of, id_of, list_field
from .otlp_json import loads_repaired
from .otlp_logs import parse_logs_request
from .otlp_proto import parse_request


@dataclass(slots=True)
class TraceIds:
    """Spans (or log records) per trace id in one request."""

    counts: dict[int, int] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)  # spans whose trace id is malformed
    unowned: int = 0  # items that belong to no trace: log records without a trace id, malformed spans

    @property
    def items(self) -> int:
        return sum(self.counts.values()) + self.unowned


def request_trace_ids(data: bytes, *, json: bool, logs: bool) -> TraceIds:
    """``TraceIds`` of a serialized OTLP request; ``TraceInputError`` when it is not one."""
    if json:
        return _json_ids(loads_repaired(data)[0], logs)
    return _proto_logs(parse_logs_request(data)) if logs else _proto_spans(parse_request(data))


def _proto_spans(request: Any) -> TraceIds:
    ids = TraceIds()
    counts = ids.counts
    known: dict[bytes, int] = {}
    for i, resource_spans in enumerate(request.resource_spans):
        for j, scope_spans in enumerate(resource_spans.scope_spans):
            for k, span in enumerate(scope_spans.spans):
                raw = span.trace_id
                trace_id = known.get(raw)
                if trace_id is None:
                    trace_id = int.from_bytes(raw, "big") if len(raw) == 16 else 0
                    if trace_id:
                        known[raw] = trace_id
                if trace_id:
                    counts[trace_id] = counts.get(trace_id, 0) + 1
                    continue
                ids.unowned += 1
                reason = f"expected 16 bytes, got {len(raw)} bytes" if len(raw) != 16 else "all-zero trace id is invalid"
                ids.rejected.append(f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}].traceId: {reason}")
    return ids


def _proto_logs(request: Any) -> TraceIds:
    ids = TraceIds()
    counts = ids.counts
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                raw = record.trace_id
                trace_id = int.from_bytes(raw, "big") if len(raw) == 16 else 0
                if trace_id:
                    counts[trace_id] = counts.get(trace_id, 0) + 1
                else:
                    ids.unowned += 1
    return ids


def _json_ids(document: Any, logs: bool) -> TraceIds:
    if type(document) is not dict:
        raise TraceInputError("not an OTLP/JSON document: expected an object at the top")
    outer, inner, items = (
        ("resourceLogs", "scopeLogs", "logRecords") if logs else ("resourceSpans", "scopeSpans", "spans")
    )
    snake = {"resourceLogs": "resource_logs", "scopeLogs": "scope_logs", "logRecords": "log_records",
             "resourceSpans": "resource_spans", "scopeSpans": "scope_spans", "spans": "spans"}
    ids = TraceIds()
    counts = ids.counts
    for i, resource in enumerate(list_field(document, outer, snake[outer], "")):
        if type(resource) is not dict:
            continue  # the shard that decodes it reports the damage
        for j, scope in enumerate(list_field(resource, inner, snake[inner], f"{outer}[{i}].")):
            if type(scope) is not dict:
                continue
            for k, item in enumerate(list_field(scope, items, snake[items], f"{outer}[{i}].{inner}[{j}].")):
                try:
                    trace_id = id_of(field_of(item, "traceId", "trace_id"), 16, "traceId", required=not logs) \
                        if type(item) is dict else 0
                except BadField as bad:
                    trace_id = 0
                    if not logs:
                        ids.rejected.append(f"{outer}[{i}].{inner}[{j}].{items}[{k}].{bad.path}: {bad.reason}")
                if trace_id:
                    counts[trace_id] = counts.get(trace_id, 0) + 1
                else:
                    ids.unowned += 1
    return ids
