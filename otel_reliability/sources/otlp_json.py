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

import binascii
import json
import math
from typing import Any

from ..model import SERVICE_VERSION, EventData, SpanData
from .decoded import Decoded, TraceInputError
from .json_slices import loads_in_slices
from .unicode_repair import repair_lone_surrogates

_INT64_MIN = -(1 << 63)
_INT64_END = 1 << 63
_UINT64_END = 1 << 64

_SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_URLSAFE = str.maketrans("-_", "+/")


class _Bad(Exception):
    """Something at ``path`` (relative to the object being decoded) is wrong."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def under(self, prefix: str) -> _Bad:
        self.path = prefix + ("." + self.path if self.path and self.path[0] != "[" else self.path)
        return self


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string {_show(value)}"
    if isinstance(value, (int, float)):
        return f"the number {_show(value)}"
    return _show(value)


# ---------------------------------------------------------------- scalars


def _b64(text: str) -> bytes:
    """Standard or URL-safe base64, padding optional; ``ValueError`` when malformed."""
    text = text.translate(_URLSAFE)
    pad = -len(text) % 4
    if pad == 3:
        raise ValueError("bad length")
    try:
        return binascii.a2b_base64(text + "=" * pad, strict_mode=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None


def _id(value: Any, nbytes: int, name: str, *, required: bool) -> int:
    if value is None or value == "":
        if required:
            raise _Bad(name, "missing")
        return 0
    if type(value) is str:
        if len(value) == 2 * nbytes and value.isascii() and value.isalnum() and value[1] not in "xX":
            try:
                number = int(value, 16)
            except ValueError:
                number = -1
        else:
            number = -1
        if number < 0:
            try:
                raw = _b64(value)
            except ValueError:
                raw = b""
            if len(raw) == nbytes:
                number = int.from_bytes(raw, "big")
        if number >= 0:
            if number or not required:
                return number
            raise _Bad(name, f"all-zero {'trace' if nbytes == 16 else 'span'} id is invalid")
    raise _Bad(name, f"expected {2 * nbytes} hex characters or base64 of {nbytes} bytes, got {_show(value)}")


def _uint64(value: Any, name: str) -> int:
    t = type(value)
    if t is str:
        try:
            number = int(value)
        except ValueError:
            number = -1
    elif t is int:
        number = value
    elif t is float and value.is_integer():
        number = int(value)
    elif value is None:
        return 0
    else:
        number = -1
    if 0 <= number < _UINT64_END:
        return number
    raise _Bad(name, f"expected an unsigned 64-bit integer (number or decimal string), got {_kind_of(value)}")


def _enum(value: Any, names: dict[str, int], name: str) -> int:
    t = type(value)
    if t is int:
        return value
    if value is None:
        return 0
    if t is str:
        number = names.get(value)
        if number is not None:
            return number
        try:
            return int(value)
        except ValueError:
            pass
        raise _Bad(name, f"unknown enum value {_show(value)} (expected an integer or one of {', '.join(names)})")
    raise _Bad(name, f"expected an enum (integer or name), got {_kind_of(value)}")


def _str(value: Any, name: str) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise _Bad(name, f"expected a string, got {_kind_of(value)}")


# ---------------------------------------------------------------- AnyValue


def _v_string(x: Any) -> Any:
    if type(x) is str:
        return x
    raise _Bad("stringValue", f"expected a string, got {_kind_of(x)}")


def _v_bool(x: Any) -> Any:
    if type(x) is bool:
        return x
    raise _Bad("boolValue", f"expected true or false, got {_kind_of(x)}")


def _v_int(x: Any) -> Any:
    t = type(x)
    if t is int:
        number = x
    elif t is str:
        try:
            number = int(x)
        except ValueError:
            number = None
    elif t is float and x.is_integer():
        number = int(x)
    else:
        number = None
    if number is not None and _INT64_MIN <= number < _INT64_END:
        return number
    raise _Bad("intValue", f"expected a 64-bit integer (number or decimal string), got {_kind_of(x)}")


def _v_double(x: Any) -> Any:
    t = type(x)
    if t is float:
        return x
    if t is int:
        return float(x)
    if t is str:
        try:
            number = float(x)
        except ValueError:
            number = None
        if number is not None and (math.isfinite(number) or x in ("NaN", "Infinity", "-Infinity")):
            return number
    raise _Bad("doubleValue", f"expected a number, got {_kind_of(x)}")


def _v_bytes(x: Any) -> Any:
    if type(x) is str:
        try:
            return _b64(x)
        except ValueError:
            pass
    raise _Bad("bytesValue", f"expected base64, got {_kind_of(x)}")


def _v_array(x: Any) -> Any:
    if type(x) is not dict:
        raise _Bad("arrayValue", f"expected an object with values, got {_kind_of(x)}")
    values = x.get("values")
    if values is None:
        return ()
    if type(values) is not list:
        raise _Bad("arrayValue.values", f"expected an array, got {_kind_of(values)}")
    out = []
    for i, v in enumerate(values):
        try:
            out.append(_any(v))
        except _Bad as bad:
            raise bad.under(f"arrayValue.values[{i}]") from None
    return tuple(out)


def _v_kvlist(x: Any) -> Any:
    if type(x) is not dict:
        raise _Bad("kvlistValue", f"expected an object with values, got {_kind_of(x)}")
    try:
        return _attributes(x.get("values"))
    except _Bad as bad:
        raise bad.under("kvlistValue.values") from None


_ANY = {
    "stringValue": _v_string,
    "boolValue": _v_bool,
    "intValue": _v_int,
    "doubleValue": _v_double,
    "arrayValue": _v_array,
    "kvlistValue": _v_kvlist,
    "bytesValue": _v_bytes,
    "string_value": _v_string,
    "bool_value": _v_bool,
    "int_value": _v_int,
    "double_value": _v_double,
    "array_value": _v_array,
    "kvlist_value": _v_kvlist,
    "bytes_value": _v_bytes,
}


def _any(value: Any) -> Any:
    if type(value) is not dict:
        if value is None:
            return None
        raise _Bad("", f"expected an AnyValue object, got {_kind_of(value)}")
    for key, x in value.items():
        convert = _ANY.get(key)
        if convert is not None and x is not None:
            return convert(x)
    return None


def _attributes(items: Any) -> dict[str, Any]:
    if type(items) is not list:
        if items is None:
            return {}
        raise _Bad("", f"expected an array of {{key, value}}, got {_kind_of(items)}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        if type(kv) is not dict:
            raise _Bad(f"[{i}]", f"expected a {{key, value}} object, got {_kind_of(kv)}")
        key = kv.get("key")
        if type(key) is not str:
            if key is not None:
                raise _Bad(f"[{i}].key", f"expected a string, got {_kind_of(key)}")
            key = ""
        value = kv.get("value")
        if type(value) is dict and len(value) == 1:
            text = value.get("stringValue")
            if type(text) is str:
                out[key] = text
                continue
        try:
            out[key] = _any(value)
        except _Bad as bad:
            raise bad.under(f"[{i}].value") from None
    return out


# ---------------------------------------------------------------- spans


def _get(obj: dict, camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _events(items: Any) -> tuple[EventData, ...]:
    if type(items) is not list:
        if items is None:
            return ()
        raise _Bad("events", f"expected an array, got {_kind_of(items)}")
    out = []
    for i, e in enumerate(items):
        if type(e) is not dict:
            raise _Bad(f"events[{i}]", f"expected an object, got {_kind_of(e)}")
        try:
            name = _str(e.get("name"), "name")
            time_ns = _uint64(_get(e, "timeUnixNano", "time_unix_nano"), "timeUnixNano")
            try:
                attributes = _attributes(e.get("attributes"))
            except _Bad as bad:
                raise bad.under("attributes") from None
        except _Bad as bad:
            raise bad.under(f"events[{i}]") from None
        out.append(EventData(name, attributes, time_ns))
    return tuple(out)


def _span(s: Any, service_version: str | None = None) -> SpanData:
    if type(s) is not dict:
        raise _Bad("", f"expected a span object, got {_kind_of(s)}")
    trace_id = _id(_get(s, "traceId", "trace_id"), 16, "traceId", required=True)
    span_id = _id(_get(s, "spanId", "span_id"), 8, "spanId", required=True)
    parent_id = _id(_get(s, "parentSpanId", "parent_span_id"), 8, "parentSpanId", required=False)
    name = s.get("name")
    if type(name) is not str:
        name = _str(name, "name")
    kind = s.get("kind")
    if kind is not None and type(kind) is not int:
        _enum(kind, _SPAN_KINDS, "kind")
    start_ns = _get(s, "startTimeUnixNano", "start_time_unix_nano")
    start_ns = _uint64(start_ns, "startTimeUnixNano")
    end_ns = _uint64(_get(s, "endTimeUnixNano", "end_time_unix_nano"), "endTimeUnixNano")
    try:
        attributes = _attributes(s.get("attributes"))
    except _Bad as bad:
        raise bad.under("attributes") from None
    events = s.get("events")
    events = _events(events) if events else ()
    status = s.get("status")
    code = 0
    message = ""
    if status is not None:
        if type(status) is not dict:
            raise _Bad("status", f"expected an object, got {_kind_of(status)}")
        code = _enum(status.get("code"), _STATUS_CODES, "status.code")
        if code not in (0, 1, 2):
            raise _Bad("status.code", f"unknown status code {_show(code)}")
        message = _str(status.get("message"), "status.message")
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
            text = _get(value, "stringValue", "string_value") if type(value) is dict else None
            return text if type(text) is str and text else None
    return None


def _list(obj: dict, camel: str, snake: str, place: str) -> list:
    value = obj.get(camel)
    if value is None:
        value = obj.get(snake)
        if value is None:
            return []
    if type(value) is not list:
        raise TraceInputError(f"{place}{camel}: expected an array, got {_kind_of(value)}")
    return value


def _at(place: str) -> str:
    """A path prefix (``"line 3: "``, ``"[0]."``) as the lead of a message about the object itself."""
    place = place.rstrip(". ").removesuffix(":")
    return f"{place}: " if place else ""


def decode_object(obj: Any, decoded: Decoded, place: str = "") -> None:
    """Decode one parsed OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData`` into ``decoded``.

    ``place`` prefixes every place named in errors and rejections (e.g. ``"line 3: "``).
    Damage inside a span rejects that span; damage above spans raises ``TraceInputError``.
    """
    if type(obj) is not dict:
        raise TraceInputError(f"{_at(place)}expected an OTLP/JSON object with resourceSpans, got {_kind_of(obj)}")
    spans = decoded.spans
    append = spans.append
    for i, rs in enumerate(_list(obj, "resourceSpans", "resource_spans", place)):
        where = f"{place}resourceSpans[{i}]"
        if type(rs) is not dict:
            raise TraceInputError(f"{where}: expected an object, got {_kind_of(rs)}")
        version = service_version_of(rs.get("resource"))
        scope_list = _list(rs, "scopeSpans", "scope_spans", where + ".")
        if not scope_list:  # OTLP before 0.19 named it instrumentationLibrarySpans
            scope_list = _list(rs, "instrumentationLibrarySpans", "instrumentation_library_spans", where + ".")
        for j, ss in enumerate(scope_list):
            here = f"{where}.scopeSpans[{j}]"
            if type(ss) is not dict:
                raise TraceInputError(f"{here}: expected an object, got {_kind_of(ss)}")
            for k, s in enumerate(_list(ss, "spans", "spans", here + ".")):
                try:
                    append(_span(s, version))
                except _Bad as bad:
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
