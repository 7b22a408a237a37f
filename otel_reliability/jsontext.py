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

A text nested deeper than ``MAX_JSON_DEPTH`` arrays and objects is not decoded at all
(``JsonTooDeep``, a ``ValueError``: its callers keep such arguments raw, as they keep any
text that is not JSON). Python would decode up to about a thousand levels and then raise
``RecursionError``; and every step after decoding (matching, encoding the verdict,
orjson's own limit of 255) recurses over the value again. No tool's arguments need more.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

# scan_once is set on every JSONDecoder by its __init__; typeshed does not declare it
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

MAX_JSON_DEPTH = 64  # arrays and objects nested in one another, at most
# A string (brackets inside it are text) or one bracket: what nesting is counted from.
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class JsonTooDeep(ValueError):
    """A JSON text nested deeper than ``MAX_JSON_DEPTH``."""


def nested_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` opens more than ``limit`` arrays or objects inside one another
    (brackets inside strings do not count).

    >>> nested_too_deep("[" * 65), nested_too_deep('["[[[["]', limit=2)
    (True, False)
    """
    if text.count("[") + text.count("{") <= limit:  # the common case, two scans in C
        return False
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()[0]
        if token == "[" or token == "{":
            depth += 1
            if depth > limit:
                return True
        elif token != '"':
            depth -= 1
    return False


def decode_json(text: str) -> Any:
    """``json.loads(text)`` for a ``str``, faster on a bare object or array; ``JsonTooDeep``
    (a ``ValueError``) beyond ``MAX_JSON_DEPTH`` levels.

    >>> decode_json('{"city": "Paris"}'), decode_json(' [1] ')
    ({'city': 'Paris'}, [1])
    >>> decode_json("[" * 100_000)
    Traceback (most recent call last):
    ...
    otel_reliability.jsontext.JsonTooDeep: JSON nested deeper than 64 levels: kept as text
    """
    if nested_too_deep(text):
        raise JsonTooDeep(f"JSON nested deeper than {MAX_JSON_DEPTH} levels: kept as text")
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
