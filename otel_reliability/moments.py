"""A moment as a user writes one, the same wherever a command or the results API takes it:
an RFC 3339 time, a date, or an age before now (``90m``, ``24h``, ``7d``)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_AGO = re.compile(r"^(\d+)([smhdw])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMS = "an RFC 3339 time (2026-12-01T10:00:00Z), a date, or an age such as 90m, 24h, 7d"


def moment_ns(text: str, now_ns: int) -> int:
    """``text`` as Unix nanoseconds: a time with no zone is UTC, a date alone its midnight UTC,
    an age counts back from ``now_ns``; ``ValueError`` (naming the accepted forms) otherwise.

    >>> moment_ns("2h", 10 * 3600 * 10**9) // 10**9
    28800
    >>> moment_ns("2026-12-01T10:00:00Z", 0) == moment_ns("2026-12-01T11:00:00+01:00", 0)
    True
    """
    age = _AGO.match(text.strip())
    if age:
        return now_ns - int(age.group(1)) * _UNIT_S[age.group(2)] * 1_000_000_000
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r}: expected {FORMS}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    whole = moment.replace(microsecond=0)
    return int(whole.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
