"""Decoding the small JSON texts spans carry (tool arguments, message histories), and
encoding the verdicts and evidence the stores keep.

``json.loads`` spends most of its time on a small text in Python: two whitespace
regex matches and two wrapper calls around the C scanner. A text that starts and
ends with a bracket needs none of that, so it goes straight to the scanner; any
other text, and any text the scanner does not consume whole, takes ``json.loads``,
so results and errors are exactly ``json.loads``'s. (orjson reads faster still, but
silently turns integers beyond 64 bits into floats, and telling such texts apart
costs more than it saves.)

Everything this project writes as JSON is strict JSON (RFC 8259): a NaN or infinite
number -- a tool's arguments may hold one, since ``json.loads`` accepts ``NaN`` --
is written as ``null``, where ``json.dumps`` would write ``NaN``, which jq, browsers
and most JSON readers reject. Stores encode with orjson (a verdict is encoded once
per run, and orjson does it about four times faster); what orjson refuses (integers
beyond 64 bits, keys that are not strings, lone surrogates) is encoded by ``json``
instead, with the same value.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

_scan = json.JSONDecoder().scan_once


def decode_json(text: str) -> Any:
    """``json.loads(text)`` for a ``str``, faster on a bare object or array.

    >>> decode_json('{"city": "Paris"}'), decode_json(' [1] ')
    ({'city': 'Paris'}, [1])
    """
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            value, end = _scan(text, 0)
        except StopIteration:
            return json.loads(text)  # raises the JSONDecodeError json.loads would
        if end == len(text):
            return value
    return json.loads(text)


# The json fallbacks are built once: ``json.dumps`` with any option builds a new encoder
# on every call. No circular check: what they encode comes from spans (JSON texts and
# OpenTelemetry attribute values), which cannot refer to themselves.
_stored_encoder = json.JSONEncoder(default=str, check_circular=False)
_unicode_encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False)
# orjson writes dataclasses and datetimes its own way; json's ``default=str`` renders them.
_AS_DEFAULT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by ``None`` (tuples become lists).

    >>> finite({"x": [1.5, float("nan")]})
    {'x': [1.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def encode_stored(value: Any) -> str:
    """A verdict as the results stores keep it: strict JSON, other types as ``str()``.

    >>> encode_stored({"city": "Paris", "at": 1.5, "x": float("inf")})
    '{"city":"Paris","at":1.5,"x":null}'
    """
    try:
        return orjson.dumps(value, default=str, option=_AS_DEFAULT).decode()
    except orjson.JSONEncodeError:
        return _stored_encoder.encode(finite(value))


def encode_unicode(value: Any) -> str:
    """Evidence as the reputation stores keep it: strict JSON, non-ASCII text unescaped.

    >>> encode_unicode(["25°C"])
    '["25°C"]'
    """
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return _unicode_encoder.encode(finite(value))


def encode_document(value: Any) -> str:
    """A document for people and tools to read (``eval --format json``): indented, strict JSON.

    >>> print(encode_document({"score": float("nan")}))
    {
      "score": null
    }
    """
    return json.dumps(finite(value), indent=2, ensure_ascii=False)
