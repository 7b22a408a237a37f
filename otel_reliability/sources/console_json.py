"""The OpenTelemetry Python SDK's ``ConsoleSpanExporter`` output → ``SpanData``.

``ConsoleSpanExporter`` writes ``ReadableSpan.to_json()`` for every span: one pretty-printed
JSON object per span, concatenated, in this shape::

    {"name": "execute_tool multiply",
     "context": {"trace_id": "0x5b8a…", "span_id": "0x0510…", "trace_state": "[]"},
     "kind": "SpanKind.INTERNAL", "parent_id": "0x8b2d…" | null,
     "start_time": "2026-12-02T01:02:03.123456Z", "end_time": "…",
     "status": {"status_code": "ERROR", "description": "boom"},
     "attributes": {…}, "events": [{"name", "timestamp", "attributes"}], "links": […],
     "resource": {"attributes": {…}, "schema_url": ""}}

It is what a script that prints its spans leaves behind, so ``eval`` reads it beside OTLP.
Its times are whole microseconds (the SDK drops the rest), and arrays are JSON lists (read
back as tuples, as the other readers give them).
"""

from __future__ import annotations

import calendar
from datetime import datetime
from typing import Any

from ..model import SERVICE_VERSION, STATUS_ERROR, STATUS_OK, STATUS_UNSET, EventData, SpanData
from .decoded import Decoded

_STATUS = {"UNSET": STATUS_UNSET, "OK": STATUS_OK, "ERROR": STATUS_ERROR}
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class _Bad(Exception):
    """A field of one console span that cannot be read: ``"field: reason"``."""


def is_console_span(obj: Any) -> bool:
    """Whether a parsed JSON object is one span as ``ReadableSpan.to_json()`` writes it.

    >>> is_console_span({"name": "x", "context": {"trace_id": "0x1", "span_id": "0x2"}})
    True
    >>> is_console_span({"resourceSpans": []})
    False
    """
    context = obj.get("context") if type(obj) is dict else None
    return type(context) is dict and "trace_id" in context and "span_id" in context and "name" in obj


def decode_console_span(obj: dict, decoded: Decoded, place: str = "") -> None:
    """Add the span ``obj`` to ``decoded``, or one rejection naming the place and the field."""
    try:
        decoded.spans.append(_span(obj))
    except _Bad as bad:
        decoded.rejected.append(f"{place}console span {obj.get('name')!r}: {bad}")


def _span(obj: dict) -> SpanData:
    context = obj["context"]
    status = obj.get("status") or {}
    if type(status) is not dict:
        raise _Bad(f"status: expected an object, got {type(status).__name__}")
    code = _STATUS.get(status.get("status_code", "UNSET"))
    if code is None:
        raise _Bad(f"status.status_code: unknown {status.get('status_code')!r} (UNSET, OK or ERROR)")
    name = obj["name"]
    if type(name) is not str:
        raise _Bad(f"name: expected a string, got {type(name).__name__}")
    return SpanData(
        trace_id=_hex_id(context.get("trace_id"), 16, "context.trace_id"),
        span_id=_hex_id(context.get("span_id"), 8, "context.span_id"),
        parent_id=0 if obj.get("parent_id") is None else _hex_id(obj["parent_id"], 8, "parent_id"),
        name=name,
        start_ns=_time(obj.get("start_time"), "start_time"),
        end_ns=_time(obj.get("end_time"), "end_time"),
        attributes=_attributes(obj.get("attributes"), "attributes"),
        events=tuple(_event(event, i) for i, event in enumerate(obj.get("events") or ())),
        status_code=code,
        status_message=str(status.get("description") or ""),
        service_version=_service_version(obj.get("resource")),
    )


def _service_version(resource: Any) -> str | None:
    """The resource's ``service.version`` as the console exporter writes it (a plain mapping);
    a resource of another shape only loses the version."""
    attributes = resource.get("attributes") if type(resource) is dict else None
    value = attributes.get(SERVICE_VERSION) if type(attributes) is dict else None
    return value if type(value) is str and value else None


def _hex_id(value: Any, nbytes: int, field: str) -> int:
    """``0x``-prefixed hex, as the SDK's ``format_trace_id`` / ``format_span_id`` write ids."""
    if type(value) is not str or not value.startswith("0x"):
        raise _Bad(f"{field}: expected 0x and {nbytes * 2} hex digits, got {value!r}")
    try:
        number = int(value[2:], 16)
    except ValueError:
        raise _Bad(f"{field}: not hex: {value!r}") from None
    if not 0 < number < 1 << (8 * nbytes):
        raise _Bad(f"{field}: not a valid {nbytes}-byte id: {value!r}")
    return number


def _time(value: Any, field: str) -> int:
    """Nanoseconds since the epoch of the SDK's ``ns_to_iso_str`` text (whole microseconds).

    >>> _time("1970-01-01T00:00:01.000002Z", "start_time")
    1000002000
    """
    if value is None:
        return 0
    if type(value) is not str:
        raise _Bad(f"{field}: expected an ISO 8601 time, got {type(value).__name__}")
    try:
        moment = datetime.strptime(value, _TIME_FORMAT)
    except ValueError:
        raise _Bad(f"{field}: expected a time like 2026-12-02T01:02:03.123456Z, got {value!r}") from None
    return calendar.timegm(moment.timetuple()) * 1_000_000_000 + moment.microsecond * 1_000


def _attributes(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if type(value) is not dict:
        raise _Bad(f"{field}: expected an object, got {type(value).__name__}")
    # the SDK's attribute values are scalars or homogeneous arrays; arrays read as tuples everywhere
    return {key: tuple(item) if type(item) is list else item for key, item in value.items()}


def _event(value: Any, index: int) -> EventData:
    if type(value) is not dict or type(value.get("name")) is not str:
        raise _Bad(f"events[{index}]: expected an object with a name")
    return EventData(
        value["name"],
        _attributes(value.get("attributes"), f"events[{index}].attributes"),
        _time(value.get("timestamp"), f"events[{index}].timestamp"),
    )
