"""Decoding the small JSON texts spans carry (tool arguments, message histories), and
encoding the verdicts and evidence the stores keep.

``json.loads`` spends most of its time on a small text in Python: two whitespace
regex matches and two wrapper calls around the C scanner. A text that starts and
ends with a bracket needs none of that, so it goes straight to the scanner; any
other text, and any text the scanner does not consume whole, takes ``json.loads``,
so results and errors are exactly ``json.loads``'s.
"""

from __future__ import annotations

import json
from typing import Any

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


# ``json.dumps`` with any option builds a new encoder on every call, which costs about as
# much as encoding a small value; the stores encode one verdict or evidence list a run.
# No circular check: what they encode comes from spans (JSON texts and OpenTelemetry
# attribute values), which cannot refer to themselves.
_stored_encoder = json.JSONEncoder(default=str, check_circular=False)
_unicode_encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def encode_stored(value: Any) -> str:
    """``json.dumps(value, default=str)``, as the results stores keep verdicts.

    >>> encode_stored({"city": "Paris", "at": 1.5})
    '{"city": "Paris", "at": 1.5}'
    """
    return _stored_encoder.encode(value)


def encode_unicode(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, as the reputation stores keep evidence.

    >>> encode_unicode(["25°C"])
    '["25°C"]'
    """
    return _unicode_encoder.encode(value)
