"""What every input reader returns or raises, and how readers share requests between processes."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import LogData, SpanData


class TraceInputError(ValueError):
    """Trace input that cannot be read; the message names the source and the place."""


class NotATrace(TraceInputError):
    """Input that is whole and well-formed but holds no trace (another JSON document, another
    OpenTelemetry signal): in a directory, a file that is skipped, not one that is damaged."""


@dataclass(slots=True)
class Decoded:
    """The spans (and log records) that could be read, and one ``"place: reason"`` per rejected one."""

    spans: list[SpanData] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    logs: list[LogData] = field(default_factory=list)
    repaired: int = 0  # lone surrogates replaced by U+FFFD (``unicode_repair``)

    def raise_if_rejected(self, source: str = "") -> None:
        """Raise ``TraceInputError`` naming the first rejected span (and how many more)."""
        if not self.rejected:
            return
        message = self.rejected[0]
        if source:
            message = f"{source}: {message}"
        more = len(self.rejected) - 1
        if more:
            message += f" (and {more} more rejected span{'s' if more > 1 else ''})"
        raise TraceInputError(message)


@dataclass(frozen=True, slots=True)
class Shard:
    """One of ``count`` readers of the same requests: the spans of trace ``t`` are read by
    shard ``t % count`` (a malformed trace id by shard 0, which rejects it).

    >>> Shard(1, 2).owns(0x0af7651916cd43dd8448eb211c80319d)
    True
    """

    index: int = 0
    count: int = 1

    def owns(self, trace_id: int) -> bool:
        return trace_id % self.count == self.index

    def owner(self, raw_trace_id: bytes) -> int:
        """The shard of a trace id as OTLP protobuf carries it (16 bytes, big-endian)."""
        return int.from_bytes(raw_trace_id, "big") % self.count if len(raw_trace_id) == 16 else 0


WHOLE = Shard()
