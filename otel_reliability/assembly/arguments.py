"""Tool arguments arrive as JSON strings, objects, or bare strings; evaluation wants a dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..jsontext import decode_json

RAW_KEY = "_raw"


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Parse recorded arguments; what is not a JSON object is kept under ``_raw``.

    >>> parse_arguments('{"a": 10}'), parse_arguments("/srv/x.txt")
    ({'a': 10}, {'_raw': '/srv/x.txt'})
    """
    if not isinstance(raw, str):
        if raw is None:
            return {}
        if not isinstance(raw, (bytes, bytearray)):
            return dict(raw) if isinstance(raw, Mapping) else {RAW_KEY: raw}
        raw = raw.decode("utf-8", "replace")
    if not raw.strip():
        return {}
    try:
        value = decode_json(raw)
    except ValueError:
        return {RAW_KEY: raw}
    return value if isinstance(value, dict) else {RAW_KEY: raw}


def is_raw(arguments: Mapping[str, Any]) -> bool:
    return RAW_KEY in arguments and len(arguments) == 1
