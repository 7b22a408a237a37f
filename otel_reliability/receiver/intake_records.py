"""How the intake log frames its records, and how it reads them back past damage.

A segment starts with ``SEGMENT_MAGIC`` and its format version. Each record is

    marker (4 bytes) | length (4) | crc32 of length and payload (4) | payload

and the payload is ``signal | media type | number of births | sequence number (8) | births
(16 bytes each) | body``. The sequence number is the serving process's count of the requests
it logged (``Logged.seq``; 0 in a log of one process): with workers, shards say by it where
each trace entered their buffers (``births`` records, ``intake_births``) and what they still
hold. Segments of the first framed version (``OTRLSEG\x01``) have no sequence number.
The CRC covers the length too, so a length that a stray write damaged is caught and never
sends the reader off to a wrong place. Write-ahead logs of databases frame their records
the same way (PostgreSQL's WAL records carry their length and a CRC of the whole record).

Reading is **resynchronising**: at a record that is short or whose CRC does not match,
the reader looks for the next marker after it whose record is whole and checks out, and
goes on from there. What lay between is skipped and reported (``Damage``): the records
after a damaged one are replayed, never discarded with it. Damage is **torn** when it is
what a crash in the middle of writing the last record leaves: at the end of the segment, a
record cut short (its header, or part of it, and fewer bytes than its length says) or
zeros. That record was never acknowledged: its flush had not completed. Anything else —
a whole record whose CRC does not match, in the middle or at the end — was written whole,
so acknowledged, and damaged afterwards. A marker also appears by chance inside
request bodies; one whose CRC does not match is passed over (a false match costs a 2⁻³²
chance).

Segments written before the framing (no ``SEGMENT_MAGIC``) are read in that older format,
``length | crc32 | payload``, which can only stop at the first damage.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Iterator

SEGMENT_MAGIC = b"OTRLSEG\x02"  # the segment's first bytes: framed records, with sequence numbers, follow
_V1_MAGIC = b"OTRLSEG\x01"  # framed records without sequence numbers (still read)
RECORD_MARKER = b"\xe8\x4f\x52\x1c"  # before every record; unlikely in text, checked by CRC anyway
_HEADER = struct.Struct("<4sII")  # marker, payload length, crc32 of the length's bytes and the payload
_LENGTH = struct.Struct("<I")
_OLD_HEADER = struct.Struct("<II")  # before the framing: payload length, crc32 of the payload
_META = struct.Struct("<BBIQ")  # signal, media type, number of births, sequence number
_V1_META = struct.Struct("<BBI")
# births: a shard's note of where traces entered its buffer; released and left: segments
# released but not deleted yet, traces that left the buffer (``intake_segments``)
SIGNALS = ("traces", "logs", "births", "released", "left")
MEDIA = ("application/x-protobuf", "application/json")
HEADER_BYTES = _HEADER.size + _META.size  # what a record adds to the body it holds, births aside
MAX_PAYLOAD = 1 << 31  # a length beyond this is damage, not a record


@dataclass(frozen=True, slots=True)
class Logged:
    """One accepted request as logged: its signal, media type and body, the traces that
    entered the buffer with it, and its sequence number (with workers)."""

    signal: str
    media_type: str
    data: bytes
    births: tuple[int, ...] = ()
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes of a segment that held no readable record, from ``start`` to ``end``; ``torn``
    when they are a last record cut short by a crash (never acknowledged), else damage done
    to records written whole."""

    start: int
    end: int
    torn: bool

    @property
    def size(self) -> int:
        return self.end - self.start


def encode(logged: Logged) -> bytes:
    """The framed record of one request.

    >>> record = encode(Logged("traces", "application/json", b"{}", (7,)))
    >>> list(read_records(SEGMENT_MAGIC + record)) == [Logged("traces", "application/json", b"{}", (7,))]
    True
    """
    payload = b"".join((
        _META.pack(SIGNALS.index(logged.signal), MEDIA.index(logged.media_type), len(logged.births), logged.seq),
        b"".join(t.to_bytes(16, "big") for t in logged.births),
        logged.data,
    ))
    length = _LENGTH.pack(len(payload))
    return _HEADER.pack(RECORD_MARKER, len(payload), zlib.crc32(payload, zlib.crc32(length))) + payload


def read_records(data: bytes) -> Iterator[Logged | Damage]:
    """The records of one segment's bytes in order, with a ``Damage`` for each stretch that
    held none (see the module's docstring).

    >>> good = encode(Logged("logs", "application/x-protobuf", b"x"))
    >>> flipped = good[:-1] + b"y"
    >>> [getattr(r, "torn", "ok") for r in read_records(SEGMENT_MAGIC + good + b"garbage!" + good + good[:9])]
    ['ok', False, 'ok', True]
    >>> [getattr(r, "torn", "ok") for r in read_records(SEGMENT_MAGIC + good + flipped)]
    ['ok', False]
    """
    if data.startswith(SEGMENT_MAGIC):
        meta = _META
    elif data.startswith(_V1_MAGIC):
        meta = _V1_META
    else:
        yield from _read_unframed(data)
        return
    offset = len(SEGMENT_MAGIC)
    while offset < len(data):
        record = _framed_at(data, offset, meta)
        if record is not None:
            logged, offset = record
            yield logged
            continue
        resumed = _next_record(data, offset + 1, meta)
        yield Damage(offset, resumed, torn=resumed == len(data) and _cut_short(data, offset))
        offset = resumed


def _cut_short(data: bytes, offset: int) -> bool:
    """Whether the bytes from ``offset`` to the end are a record cut short by a crash: zeros
    (a file extended past its last write), part of a header, or a header whose length runs
    past the end."""
    rest = data[offset:]
    if not rest.strip(b"\0"):
        return True
    if len(rest) < _HEADER.size:
        return RECORD_MARKER.startswith(rest[:len(RECORD_MARKER)])
    marker, length, _crc = _HEADER.unpack_from(rest)
    return marker == RECORD_MARKER and _HEADER.size + length > len(rest)


def _next_record(data: bytes, start: int, meta: struct.Struct) -> int:
    """The offset of the first whole record at or after ``start``, else the end of ``data``."""
    while True:
        found = data.find(RECORD_MARKER, start)
        if found < 0:
            return len(data)
        if _framed_at(data, found, meta) is not None:
            return found
        start = found + 1


def _framed_at(data: bytes, offset: int, meta: struct.Struct) -> tuple[Logged, int] | None:
    end = offset + _HEADER.size
    if end > len(data):
        return None
    marker, length, crc = _HEADER.unpack_from(data, offset)
    if marker != RECORD_MARKER or length > MAX_PAYLOAD or end + length > len(data):
        return None
    payload = data[end:end + length]
    if zlib.crc32(payload, zlib.crc32(_LENGTH.pack(length))) != crc:
        return None
    logged = _payload(payload, meta)
    return None if logged is None else (logged, end + length)


def _read_unframed(data: bytes) -> Iterator[Logged | Damage]:
    offset = 0
    while offset < len(data):
        end = offset + _OLD_HEADER.size
        logged = None
        if end <= len(data):
            length, crc = _OLD_HEADER.unpack_from(data, offset)
            payload = data[end:end + length]
            if len(payload) == length and zlib.crc32(payload) == crc:
                logged = _payload(payload, _V1_META)
        if logged is None:  # no marker to resynchronise on: the rest is lost to replay
            yield Damage(offset, len(data), torn=end > len(data) or len(payload) < length)
            return
        yield logged
        offset = end + length


def _payload(payload: bytes, meta: struct.Struct) -> Logged | None:
    if len(payload) < meta.size:
        return None
    signal, media, count, *seq = meta.unpack_from(payload)
    start = meta.size + 16 * count
    if signal >= len(SIGNALS) or media >= len(MEDIA) or start > len(payload):
        return None
    births = tuple(int.from_bytes(payload[i:i + 16], "big") for i in range(meta.size, start, 16))
    return Logged(SIGNALS[signal], MEDIA[media], payload[start:], births, seq[0] if seq else 0)
