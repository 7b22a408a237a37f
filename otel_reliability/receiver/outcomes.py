"""What the receiver answers a request: accepted (with one reason per span it could not
keep), or refused as a whole with a retry delay and the reason, which the refusal and
dropped-span counters are labelled with.

>>> Accepted(["trace_full"] * 5).message
'trace_full; trace_full; trace_full (and 2 more)'
>>> str(Overloaded(5, SOFT_BYTE_LIMIT))
'receiver buffer is at its byte limit; retry after 5 s'
"""

from __future__ import annotations

from dataclasses import dataclass

# Why a request was refused with a retry delay (``agent.reliability.refusals``, and the
# reason its spans count under in ``agent.reliability.spans.dropped``).
OVERLOADED = "overloaded"  # max_buffered_spans
SOFT_BYTE_LIMIT = "soft_byte_limit"  # the buffered bytes reached the soft limit of max_buffered_bytes
INTAKE_LOG_FULL = "intake_log_full"  # the durable intake log reached max_intake_log_bytes
INTAKE_LOG_UNWRITABLE = "intake_log_unwritable"  # its disk refused a write (full, read-only, …) and still does
VERDICTS_HELD = "verdicts_held"  # a sink (the store) cannot take verdicts, and those held reached max_held_verdicts/bytes
_WHAT_IS_FULL = {
    OVERLOADED: "receiver buffer is full",
    SOFT_BYTE_LIMIT: "receiver buffer is at its byte limit",
    INTAKE_LOG_FULL: "receiver intake log is full",
    INTAKE_LOG_UNWRITABLE: "receiver cannot write its intake log",
    VERDICTS_HELD: "receiver holds as many verdicts as it may for a store that cannot take them",
    "inflight_bytes": "receiver is decoding as many request bytes as max_inflight_bytes allows",
}


class Overloaded(Exception):
    """The buffer (or the intake log) is full: the client should retry after ``retry_after`` seconds."""

    def __init__(self, retry_after: int, reason: str = OVERLOADED) -> None:
        super().__init__(f"{_WHAT_IS_FULL[reason]}; retry after {retry_after} s")
        self.retry_after = retry_after
        self.reason = reason


@dataclass(slots=True)
class Accepted:
    """What became of one request's spans: one reason per span not accepted."""

    reasons: list[str]

    @property
    def rejected_spans(self) -> int:
        return len(self.reasons)

    @property
    def message(self) -> str:
        if not self.reasons:
            return ""
        more = f" (and {len(self.reasons) - 3} more)" if len(self.reasons) > 3 else ""
        return "; ".join(self.reasons[:3]) + more
