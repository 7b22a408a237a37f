"""What the serving process may still send a shard: admission on credits, with no round trip.

Each shard reports, every time it has read what was waiting for it and on every judge
tick, the room its buffer has left — in spans (``max_buffered_spans``, its share) and in
bytes (up to the soft limit of ``max_buffered_bytes``, its share) — and whether it refuses
everything for now (its held verdicts at their bound), with the number of the last record
it read. The serving process counts what it sent since that record, so the room it sees is
never more than the shard had: a request is admitted when every shard it has spans for has
credit for them, and refused whole otherwise, with the reason of the first shard short of
credit (``overloaded``, ``soft_byte_limit``, ``verdicts_held``).

Bytes are charged as the request's share of its body: the shard measures what it holds by
the retained size of its records, so a request may take it somewhat past the soft limit,
as before; the hard limit evicts.

>>> credits = Credits(spans=10, nbytes=1000, retry_after=5)
>>> credits.refusal(8, 100), credits.charge(0, 8, 100), credits.refusal(5, 100)
(None, None, 'overloaded')
>>> credits.report(0, spans=2, nbytes=900, refusal=None, retry_after=5); credits.refusal(2, 100)
"""

from __future__ import annotations

from collections import deque

from .outcomes import OVERLOADED, SOFT_BYTE_LIMIT


class Credits:
    """One shard's credit as the serving process sees it."""

    def __init__(self, spans: int, nbytes: int, retry_after: int) -> None:
        self.retry_after = retry_after  # what the shard says a client refused at its byte limit should wait
        self._room_spans = spans
        self._room_bytes = nbytes
        self._refusal: str | None = None
        self._sent: deque[tuple[int, int, int]] = deque()  # (record number, spans, bytes) since the report
        self._sent_spans = 0
        self._sent_bytes = 0

    def refusal(self, spans: int, nbytes: int) -> str | None:
        """Why a share of ``spans`` (and ``nbytes``) cannot be sent now, or None."""
        if self._refusal is not None:
            return self._refusal
        if spans > self._room_spans - self._sent_spans:
            return OVERLOADED
        if self._room_bytes - self._sent_bytes <= 0:  # at the soft limit: bytes are known only once decoded
            return SOFT_BYTE_LIMIT
        return None

    def charge(self, seq: int, spans: int, nbytes: int) -> None:
        self._sent.append((seq, spans, nbytes))
        self._sent_spans += spans
        self._sent_bytes += nbytes

    def report(self, seq: int, spans: int, nbytes: int, refusal: str | None, retry_after: int) -> None:
        """The shard read every record up to ``seq``, and has this room left."""
        self.retry_after = retry_after
        sent = self._sent
        while sent and sent[0][0] <= seq:
            _, spans_sent, bytes_sent = sent.popleft()
            self._sent_spans -= spans_sent
            self._sent_bytes -= bytes_sent
        self._room_spans, self._room_bytes, self._refusal = spans, nbytes, refusal
