"""OTLP protobuf (``ExportTraceServiceRequest`` / ``TracesData`` / ``Span``) → ``SpanData``.

Every field is copied out into Python values, so no protobuf object (and through it the
whole parsed request) stays alive after decoding. Places in messages use the OTLP/JSON
field names (``resourceSpans[0].scopeSpans[1].spans[3].spanId``) so that errors read
the same whichever encoding the spans arrived in.
"""

from __future__ import annotations

from sys import intern
from typing import Any, Iterable

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ..model import SERVICE_VERSION, EventData, SpanData
from .decoded import WHOLE, Decoded, Shard, TraceInputError


class _Bad(Exception):
    """A span that cannot be accepted: ``field`` within the span, and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field = field
        self.reason = reason


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value (``None`` when no value is set)."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which is None:
        return None
    if which == "array_value":
        return tuple([any_value(v) for v in value.array_value.values])
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which)


def attributes_from_proto(key_values: Iterable[Any]) -> dict[str, Any]:
    """Repeated ``KeyValue`` → ``dict`` (a repeated key keeps its last value)."""
    out: dict[str, Any] = {}
    for kv in key_values:
        v = kv.value
        text = v.string_value  # most values are non-empty strings: one read, no WhichOneof
        if text:
            out[kv.key] = text
            continue
        which = v.WhichOneof("value")
        if which == "array_value":  # finish reasons, tags: arrays of strings, read as the strings are
            out[kv.key] = tuple([item.string_value or any_value(item) for item in v.array_value.values])
        elif which is None:
            out[kv.key] = None
        elif which == "kvlist_value":
            out[kv.key] = any_value(v)
        else:
            out[kv.key] = getattr(v, which)
    return out


def _span(s: Any, trace_ids: dict[bytes, int], service_version: str | None = None) -> SpanData:
    raw = s.trace_id
    trace_id = trace_ids.get(raw)
    if trace_id is None:
        if len(raw) != 16:
            raise _Bad("traceId", _length_reason(raw, 16))
        trace_id = int.from_bytes(raw, "big")
        if not trace_id:
            raise _Bad("traceId", "all-zero trace id is invalid")
        trace_ids[raw] = trace_id  # one int per trace, however many of its spans stay buffered
    raw = s.span_id
    if len(raw) != 8:
        raise _Bad("spanId", _length_reason(raw, 8))
    span_id = int.from_bytes(raw, "big")
    if not span_id:
        raise _Bad("spanId", "all-zero span id is invalid")
    raw = s.parent_span_id
    if not raw:
        parent_id = 0
    elif len(raw) == 8:
        parent_id = int.from_bytes(raw, "big")
    else:
        raise _Bad("parentSpanId", _length_reason(raw, 8, empty_ok=True))
    status = s.status
    code = status.code
    if code not in (0, 1, 2):
        raise _Bad("status.code", f"unknown status code {code}")
    events = s.events
    return SpanData(
        trace_id,
        span_id,
        parent_id,
        intern(s.name),  # names repeat across spans ("execute_tool get_weather"): buffer one copy
        s.start_time_unix_nano,
        s.end_time_unix_nano,
        attributes_from_proto(s.attributes),
        tuple([EventData(e.name, attributes_from_proto(e.attributes), e.time_unix_nano) for e in events])
        if events
        else (),
        code,
        status.message,
        service_version,
    )


def service_version_of(resource: Any) -> str | None:
    """A protobuf ``Resource``'s ``service.version`` (read once per resource, not per span)."""
    for kv in resource.attributes:
        if kv.key == SERVICE_VERSION:
            return kv.value.string_value or None
    return None


def _length_reason(raw: bytes, n: int, *, empty_ok: bool = False) -> str:
    if not raw:
        return "missing"
    expected = f"{n} bytes" + (" or empty" if empty_ok else "")
    return f"expected {expected}, got {len(raw)} bytes"


def span_from_proto(span: Any) -> SpanData:
    """One protobuf ``Span`` → ``SpanData``; ``TraceInputError`` names the bad field."""
    try:
        return _span(span, {})
    except _Bad as bad:
        raise TraceInputError(f"span.{bad.field}: {bad.reason}") from None


def decode_request(request: Any, shard: Shard = WHOLE) -> Decoded:
    """All spans of an ``ExportTraceServiceRequest`` (or ``TracesData``) that ``shard`` owns.

    Spans that cannot be accepted are skipped and listed in ``rejected`` as
    ``"resourceSpans[i].scopeSpans[j].spans[k].field: reason"``.
    """
    spans: list[SpanData] = []
    rejected: list[str] = []
    trace_ids: dict[bytes, int] = {}
    owners: dict[bytes, int] = {}
    sharded = shard.count > 1
    append = spans.append
    for i, resource_spans in enumerate(request.resource_spans):
        version = service_version_of(resource_spans.resource)
        for j, scope_spans in enumerate(resource_spans.scope_spans):
            for k, s in enumerate(scope_spans.spans):
                if sharded:
                    raw = s.trace_id
                    owner = owners.get(raw)
                    if owner is None:
                        owner = owners[raw] = shard.owner(raw)
                    if owner != shard.index:
                        continue
                try:
                    append(_span(s, trace_ids, version))
                except _Bad as bad:
                    rejected.append(f"resourceSpans[{i}].scopeSpans[{j}].spans[{k}].{bad.field}: {bad.reason}")
    return Decoded(spans, rejected)


def spans_from_request(request: Any) -> list[SpanData]:
    """All spans of a request; ``TraceInputError`` if any span cannot be accepted."""
    decoded = decode_request(request)
    decoded.raise_if_rejected()
    return decoded.spans


def parse_request(data: bytes) -> ExportTraceServiceRequest:
    """Parse serialized ``ExportTraceServiceRequest`` bytes (``TraceInputError`` when they are not one)."""
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except (DecodeError, RuntimeError, ValueError, TypeError) as exc:
        detail = str(exc).strip()
        raise TraceInputError(
            "truncated or not an OTLP protobuf message" + (f" ({detail})" if detail else "")
        ) from None
    return request


def decode_protobuf(data: bytes) -> Decoded:
    """Parse a serialized ``ExportTraceServiceRequest`` and decode its spans."""
    return decode_request(parse_request(data))
