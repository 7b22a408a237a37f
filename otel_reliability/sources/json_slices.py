"""OTLP/JSON parsed in slices, so that a big document never holds the GIL for long.

``json.loads`` parses a 60 MB export request in one C call of about a second, and no other
thread of the process runs meanwhile: not the receiver's event loop, not ``/healthz``. Here
the levels of an export request (the request, ``resourceSpans``, ``scopeSpans`` and their
arrays) are walked in Python, and every other value — each span among them — goes to the
``json`` C decoder on its own, so other threads get their turn between two spans. The result
equals ``json.loads``'s, and so do the errors (``json.JSONDecodeError``, same places).

>>> loads_in_slices('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "a"}, {"name": "b"}]}]}]}')
{'resourceSpans': [{'scopeSpans': [{'spans': [{'name': 'a'}, {'name': 'b'}]}]}]}
"""

from __future__ import annotations

import json
import re
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
# Keys whose array is walked element by element; "spans" items are the slices themselves.
_LEVELS = frozenset({
    "resourceSpans", "resource_spans", "scopeSpans", "scope_spans",
    "instrumentationLibrarySpans", "instrumentation_library_spans", "spans",
})
_MAX_DEPTH = 4  # request → resource spans → scope spans → spans; deeper values go whole


def loads_in_slices(text: str) -> Any:
    """``json.loads(text)``, parsed a value at a time below the export request's levels."""
    if text.startswith("\ufeff"):
        return json.loads(text)  # its error for a byte-order mark
    end = _skip(text, 0)
    if text.startswith("{", end):
        value, end = _object(text, end, 0)
    else:
        value, end = _value(text, end)
    end = _skip(text, end)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string too
    return match.end()


_value = _DECODER.raw_decode  # one whole value at a position: (value, where it ends)


def _object(text: str, pos: int, depth: int) -> tuple[dict[str, Any], int]:
    result: dict[str, Any] = {}
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        return result, pos + 1
    while True:
        if not text.startswith('"', pos):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
        key, pos = _value(text, pos)
        pos = _skip(text, pos)
        if not text.startswith(":", pos):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
        pos = _skip(text, pos + 1)
        if key in _LEVELS and depth < _MAX_DEPTH and text.startswith("[", pos):
            result[key], pos = _array(text, pos, depth + 1, whole_items=key == "spans")
        else:
            result[key], pos = _value(text, pos)
        pos = _skip(text, pos)
        if text.startswith("}", pos):
            return result, pos + 1
        if not text.startswith(",", pos):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        pos = _skip(text, pos + 1)


def _array(text: str, pos: int, depth: int, whole_items: bool) -> tuple[list[Any], int]:
    items: list[Any] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return items, pos + 1
    while True:
        if not whole_items and text.startswith("{", pos):
            item, pos = _object(text, pos, depth)
        else:
            item, pos = _value(text, pos)
        items.append(item)
        pos = _skip(text, pos)
        if text.startswith("]", pos):
            return items, pos + 1
        if not text.startswith(",", pos):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        pos = _skip(text, pos + 1)
