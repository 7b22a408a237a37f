"""OTLP/JSON → ``SpanData``, walking the ``json`` module's dicts directly.

Accepted, per the OTLP/JSON specification and protobuf's JSON mapping:

- keys in lowerCamelCase (``traceId``) or the proto field names (``trace_id``);
- ids as hex (32 / 16 characters, either case — the OTLP/JSON form) or base64 of
  16 / 8 bytes, standard or URL-safe alphabet, padding optional (protobuf's form);
  the form is decided per id by its length;
- enums as integers, numeric strings, or names (``SPAN_KIND_CLIENT``, ``STATUS_CODE_ERROR``);
- 64-bit integers as decimal strings or JSON numbers; doubles as numbers or strings
  (``"NaN"``, ``"Infinity"``, ``"-Infinity"``); ``bytesValue`` as base64;
- ``null`` for any field means "not set"; unknown fields are ignored.

``json_format.Parse`` is not used: it reads the spec's hex ids as base64 without a word.
"""

from __future__ import annotations

import json
from typing import Any

from ..model import SERVICE_VERSION, EventData, SpanData
from .decoded import Decoded, TraceInputError
from .otlp_fields import (
    BadField,
    attributes_of,
    enum_of,
    field_of,
    id_of,
    kind_of,
    lead_of,
    list_field,
    shown,
    str_of,
    uint64_of,
)
from .json_slices import loads_in_slices
from .unicode_repair import repair_lone_surrogates

_SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
# ---------------------------------------------------------------- spans


def _events(items: Any) -> tuple[EventData, ...]:
    if type(items) is not list:
        if items is None:
            return ()
        raise BadField("events", f"expected an array, got {kind_of(items)}")
    out = []
    for i, e in enumerate(items):
        if type(e) is not dict:
            raise BadField(f"events[{i}]", f"expected an object, got {kind_of(e)}")
        try:
            name = str_of(e.get("name"), "name")
            time_ns = uint64_of(field_of(e, "timeUnixNano", "time_unix_nano"), "timeUnixNano")
            try:
                attributes = attributes_of(e.get("attributes"))
            except BadField as bad:
                raise bad.under("attributes") from None
        except BadField as bad:
            raise bad.under(f"events[{i}]") from None
        out.append(EventData(name, attributes, time_ns))
    return tuple(out)


def _span(s: Any, service_version: str | None = None) -> SpanData:
    if type(s) is not dict:
        raise BadField("", f"expected a span object, got {kind_of(s)}")
    trace_id = id_of(field_of(s, "traceId", "trace_id"), 16, "traceId", required=True)
    span_id = id_of(field_of(s, "spanId", "span_id"), 8, "spanId", required=True)
    parent_id = id_of(field_of(s, "parentSpanId", "parent_span_id"), 8, "parentSpanId", required=False)
    name = s.get("name")
    if type(name) is not str:
        name = str_of(name, "name")
    kind = s.get("kind")
    if kind is not None and type(kind) is not int:
        enum_of(kind, _SPAN_KINDS, "kind")
    start_ns = field_of(s, "startTimeUnixNano", "start_time_unix_nano")
    start_ns = uint64_of(start_ns, "startTimeUnixNano")
    end_ns = uint64_of(field_of(s, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano")
    try:
        attributes = attributes_of(s.get("attributes"))
    except BadField as bad:
        raise bad.under("attributes") from None
    events = s.get("events")
    events = _events(events) if events else ()
    status = s.get("status")
    code = 0
    message = ""
    if status is not None:
        if type(status) is not dict:
            raise BadField("status", f"expected an object, got {kind_of(status)}")
        code = enum_of(status.get("code"), _STATUS_CODES, "status.code")
        if code not in (0, 1, 2):
            raise BadField("status.code", f"unknown status code {shown(code)}")
        message = str_of(status.get("message"), "status.message")
    return SpanData(trace_id, span_id, parent_id, name, start_ns, end_ns, attributes, events, code, message, service_version)


def service_version_of(resource: Any) -> str | None:
    """An OTLP/JSON resource's ``service.version`` string, None when it has none. Read once per
    resource; a resource of another shape only loses the version (its spans are still read)."""
    items = resource.get("attributes") if type(resource) is dict else None
    if type(items) is not list:
        return None
    for item in items:
        if type(item) is dict and item.get("key") == SERVICE_VERSION:
            value = item.get("value")
            text = field_of(value, "stringValue", "string_value") if type(value) is dict else None
            return text if type(text) is str and text else None
    return None


def decode_object(obj: Any, decoded: Decoded, place: str = "") -> None:
    """Decode one parsed OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData`` into ``decoded``.

    ``place`` prefixes every place named in errors and rejections (e.g. ``"line 3: "``).
    Damage inside a span rejects that span; damage above spans raises ``TraceInputError``.
    """
    if type(obj) is not dict:
        raise TraceInputError(f"{lead_of(place)}expected an OTLP/JSON object with resourceSpans, got {kind_of(obj)}")
    spans = decoded.spans
    append = spans.append
    for i, rs in enumerate(list_field(obj, "resourceSpans", "resource_spans", place)):
        where = f"{place}resourceSpans[{i}]"
        if type(rs) is not dict:
            raise TraceInputError(f"{where}: expected an object, got {kind_of(rs)}")
        version = service_version_of(rs.get("resource"))
        scope_list = list_field(rs, "scopeSpans", "scope_spans", where + ".")
        if not scope_list:  # OTLP before 0.19 named it instrumentationLibrarySpans
            scope_list = list_field(rs, "instrumentationLibrarySpans", "instrumentation_library_spans", where + ".")
        for j, ss in enumerate(scope_list):
            here = f"{where}.scopeSpans[{j}]"
            if type(ss) is not dict:
                raise TraceInputError(f"{here}: expected an object, got {kind_of(ss)}")
            for k, s in enumerate(list_field(ss, "spans", "spans", here + ".")):
                try:
                    append(_span(s, version))
                except BadField as bad:
                    decoded.rejected.append(f"{bad.under(f'{here}.spans[{k}]').path}: {bad.reason}")
                except RecursionError:
                    decoded.rejected.append(f"{here}.spans[{k}]: attribute values nested too deeply")


def decode_json(data: bytes | str | Any) -> Decoded:
    """Decode one OTLP/JSON document (bytes, text, or already-parsed ``json`` objects).

    Malformed JSON or damage above the span level raises ``TraceInputError``; spans
    that cannot be accepted are skipped and listed in ``Decoded.rejected``.
    """
    repaired = 0
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        data, repaired = loads_repaired(data)
    decoded = Decoded(repaired=repaired)
    decode_object(data, decoded)
    return decoded


def spans_from_json(data: bytes | str | Any) -> list[SpanData]:
    """All spans of one OTLP/JSON document; ``TraceInputError`` if any cannot be read."""
    decoded = decode_json(data)
    decoded.raise_if_rejected()
    return decoded.spans


# Above this, a document is parsed in slices (``json_slices``): a receiver thread parsing
# it must not stop the others for the second ``json.loads`` takes over 60 MB. Below it the
# one C call is faster and short anyway.
SLICED_JSON_CHARS = 1 << 20


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """``json.loads`` with every failure turned into ``TraceInputError``, and strings that
    are not valid Unicode repaired (``unicode_repair``)."""
    return loads_repaired(data)[0]


def loads_repaired(data: bytes | bytearray | memoryview | str) -> tuple[Any, int]:
    """``loads``, and how many lone surrogates were replaced."""
    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceInputError(f"not UTF-8 text at byte {exc.start}") from None
    data, repaired = repair_lone_surrogates(data)
    try:
        return loads_in_slices(data) if len(data) > SLICED_JSON_CHARS else json.loads(data), repaired
    except json.JSONDecodeError as exc:
        raise TraceInputError(f"line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise TraceInputError("invalid JSON: nested too deeply") from None
