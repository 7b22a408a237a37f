"""OTLP/JSON's field readers: ids, 64-bit integers, enums, strings, ``AnyValue`` and attribute
lists, each in every form the OTLP/JSON specification and protobuf's JSON mapping allow
(``otlp_json`` lists them), and ``BadField``, which names the place of what is wrong. Shared
by the span, log record and trace-id readers.
"""

from __future__ import annotations

import binascii
import math
from typing import Any

from .decoded import TraceInputError

_INT64_MIN = -(1 << 63)
_INT64_END = 1 << 63
_UINT64_END = 1 << 64

_URLSAFE = str.maketrans("-_", "+/")


class BadField(Exception):
    """Something at ``path`` (relative to the object being decoded) is wrong."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def under(self, prefix: str) -> BadField:
        self.path = prefix + ("." + self.path if self.path and self.path[0] != "[" else self.path)
        return self


def shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string {shown(value)}"
    if isinstance(value, (int, float)):
        return f"the number {shown(value)}"
    return shown(value)


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


def id_of(value: Any, nbytes: int, name: str, *, required: bool) -> int:
    if value is None or value == "":
        if required:
            raise BadField(name, "missing")
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
            raise BadField(name, f"all-zero {'trace' if nbytes == 16 else 'span'} id is invalid")
    raise BadField(name, f"expected {2 * nbytes} hex characters or base64 of {nbytes} bytes, got {shown(value)}")


def uint64_of(value: Any, name: str) -> int:
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
    raise BadField(name, f"expected an unsigned 64-bit integer (number or decimal string), got {kind_of(value)}")


def enum_of(value: Any, names: dict[str, int], name: str) -> int:
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
        raise BadField(name, f"unknown enum value {shown(value)} (expected an integer or one of {', '.join(names)})")
    raise BadField(name, f"expected an enum (integer or name), got {kind_of(value)}")


def str_of(value: Any, name: str) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise BadField(name, f"expected a string, got {kind_of(value)}")


# ---------------------------------------------------------------- AnyValue


def _v_string(x: Any) -> Any:
    if type(x) is str:
        return x
    raise BadField("stringValue", f"expected a string, got {kind_of(x)}")


def _v_bool(x: Any) -> Any:
    if type(x) is bool:
        return x
    raise BadField("boolValue", f"expected true or false, got {kind_of(x)}")


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
    raise BadField("intValue", f"expected a 64-bit integer (number or decimal string), got {kind_of(x)}")


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
    raise BadField("doubleValue", f"expected a number, got {kind_of(x)}")


def _v_bytes(x: Any) -> Any:
    if type(x) is str:
        try:
            return _b64(x)
        except ValueError:
            pass
    raise BadField("bytesValue", f"expected base64, got {kind_of(x)}")


def _v_array(x: Any) -> Any:
    if type(x) is not dict:
        raise BadField("arrayValue", f"expected an object with values, got {kind_of(x)}")
    values = x.get("values")
    if values is None:
        return ()
    if type(values) is not list:
        raise BadField("arrayValue.values", f"expected an array, got {kind_of(values)}")
    out = []
    for i, v in enumerate(values):
        try:
            out.append(any_value_of(v))
        except BadField as bad:
            raise bad.under(f"arrayValue.values[{i}]") from None
    return tuple(out)


def _v_kvlist(x: Any) -> Any:
    if type(x) is not dict:
        raise BadField("kvlistValue", f"expected an object with values, got {kind_of(x)}")
    try:
        return attributes_of(x.get("values"))
    except BadField as bad:
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


def any_value_of(value: Any) -> Any:
    if type(value) is not dict:
        if value is None:
            return None
        raise BadField("", f"expected an AnyValue object, got {kind_of(value)}")
    for key, x in value.items():
        convert = _ANY.get(key)
        if convert is not None and x is not None:
            return convert(x)
    return None


def attributes_of(items: Any) -> dict[str, Any]:
    if type(items) is not list:
        if items is None:
            return {}
        raise BadField("", f"expected an array of {{key, value}}, got {kind_of(items)}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        if type(kv) is not dict:
            raise BadField(f"[{i}]", f"expected a {{key, value}} object, got {kind_of(kv)}")
        key = kv.get("key")
        if type(key) is not str:
            if key is not None:
                raise BadField(f"[{i}].key", f"expected a string, got {kind_of(key)}")
            key = ""
        value = kv.get("value")
        if type(value) is dict and len(value) == 1:
            text = value.get("stringValue")
            if type(text) is str:
                out[key] = text
                continue
        try:
            out[key] = any_value_of(value)
        except BadField as bad:
            raise bad.under(f"[{i}].value") from None
    return out


def field_of(obj: dict, camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def list_field(obj: dict, camel: str, snake: str, place: str) -> list:
    value = obj.get(camel)
    if value is None:
        value = obj.get(snake)
        if value is None:
            return []
    if type(value) is not list:
        raise TraceInputError(f"{place}{camel}: expected an array, got {kind_of(value)}")
    return value


def lead_of(place: str) -> str:
    """A path prefix (``"line 3: "``, ``"[0]."``) as the lead of a message about the object itself."""
    place = place.rstrip(". ").removesuffix(":")
    return f"{place}: " if place else ""
