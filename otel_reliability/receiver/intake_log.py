"""The intake log: what the receiver acknowledged, on disk before the acknowledgement.

Every accepted request body is appended to a segment file before its answer goes out;
``durability`` says when it is flushed to the disk (``fsync``):

- ``batch`` — group commit: an answer waits for the next flush, and one flush covers every
  request appended meanwhile (the first waiter flushes, the others wait for it);
- ``always`` — one flush per request, before its answer;
- ``none`` — no log at all (the service does not open one).

A record is ``length | crc32 | payload``; a crash mid-write leaves a torn tail, which
``recover`` detects (short header, short payload or a CRC that does not match), counts and
cuts off, keeping everything before it.

**Checkpoint.** The log knows which traces each segment holds that are still in the
engine's buffer (``trace_entered``/``trace_left``, told by the buffer). Segments are
released oldest first, once neither they nor any older segment holds a trace still
buffered: the log is always a suffix of what was acknowledged, and a trace whose spans
start before that suffix has left the buffer (judged and stored, or expired or evicted —
counted by the engine). Each record lists the traces that entered the buffer with it
(``births``), so a replay takes a trace's spans only from its first record in the suffix
on — never the tail of a trace already judged, which would be judged again on a part of it.

A graceful stop judges what it can and writes ``checkpoint``: the traces still unjudged
(no run span yet); the next start replays those alone.

>>> import tempfile
>>> log = IntakeLog(Path(tempfile.mkdtemp()), "batch", max_bytes=1 << 20)
>>> log.trace_entered(7)
>>> log.wait_durable(log.append(Logged("traces", "application/x-protobuf", b"\\x0a\\x00"), [7]))
>>> log.close(unjudged=[7])
>>> [r.births for r in IntakeLog(log.directory, "batch", max_bytes=1 << 20).recover()]
[(7,)]
"""

from __future__ import annotations

import fcntl
import logging
import os
import struct
import threading
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..sources import Shard
from ..stores.spec import parse_store_spec
from .config import ReceiverConfig
from .intake import Body, IntakeError

logger = logging.getLogger(__name__)

DURABILITIES = ("none", "batch", "always")
SEGMENT_BYTES = 8 * 1024 * 1024  # a segment is closed past this size; release works segment by segment
_HEADER = struct.Struct("<II")  # payload length, crc32 of the payload
_META = struct.Struct("<BBI")  # signal, media type, number of births
_SIGNALS = ("traces", "logs")
_MEDIA = ("application/x-protobuf", "application/json")
_SUFFIX = ".seg"
CHECKPOINT = "checkpoint"


class IntakeLogError(OSError):
    """The log's directory cannot be used (another receiver holds it, or it is not writable)."""


@dataclass(frozen=True, slots=True)
class Logged:
    """One accepted request as logged: its signal, media type and body, and the traces that
    entered the buffer with it."""

    signal: str
    media_type: str
    data: bytes
    births: tuple[int, ...] = ()


@dataclass(slots=True)
class _Segment:
    number: int
    path: Path
    size: int = 0
    open_traces: set[int] = field(default_factory=set)


class IntakeLog:
    """One receiver's (or worker's) log in ``directory``; the directory is locked while open."""

    def __init__(self, directory: Path, durability: str, max_bytes: int, segment_bytes: int = SEGMENT_BYTES) -> None:
        if durability not in ("batch", "always"):
            raise ValueError(f"durability {durability!r}: the log is for batch or always")
        self.directory = directory
        self.always = durability == "always"
        self.max_bytes = max_bytes
        # several segments fit in the bound, or a full log could not release any
        self.segment_bytes = max(64 * 1024, min(segment_bytes, max_bytes // 8))
        self.torn_records = 0  # records cut off as torn by the last ``recover``
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._lock_file = open(directory / "LOCK", "a+b")
        except OSError as exc:
            raise IntakeLogError(f"intake log {directory}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            raise IntakeLogError(f"intake log {directory} is in use by another receiver") from None
        self._recovered = sorted(directory.glob("*" + _SUFFIX))
        self._checkpoint = _read_checkpoint(directory / CHECKPOINT)
        self._recovered_bytes = sum(p.stat().st_size for p in self._recovered)
        self._segments: list[_Segment] = []  # oldest first; the last one is written to
        self._by_trace: dict[int, list[_Segment]] = {}  # traces in the buffer → their segments
        self._births: list[int] = []
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._written = 0  # bytes appended since start, and flushed to disk
        self._synced = 0
        self._syncing = False
        self._fd = -1
        self._next_number = int(self._recovered[-1].stem) + 1 if self._recovered else 0
        self._open_segment()

    # -- size

    @property
    def size(self) -> int:
        """Bytes on disk: segments not yet released (those being replayed included)."""
        return self._recovered_bytes + sum(s.size for s in self._segments)

    def has_room(self, data_bytes: int) -> bool:
        return self.size + data_bytes + _HEADER.size + _META.size <= self.max_bytes

    # -- what the buffer holds

    def trace_entered(self, trace_id: int) -> None:
        """A trace entered the buffer: the next ``append`` records it as born there."""
        with self._lock:
            self._by_trace[trace_id] = []
            self._births.append(trace_id)

    def trace_left(self, trace_id: int) -> None:
        """A trace left the buffer (judged and stored, expired or evicted): its segments may go."""
        with self._lock:
            segments = self._by_trace.pop(trace_id, None)
            if segments:
                for segment in segments:
                    segment.open_traces.discard(trace_id)
                self._release()

    # -- writing

    def append(self, logged: Logged, trace_ids: Iterable[int]) -> int:
        """Write one accepted request, holding ``trace_ids`` (those buffered); returns the
        ticket ``wait_durable`` waits for. Births come from ``trace_entered`` since the last append."""
        with self._lock:
            births, self._births = self._births, []
            record = _encode(Logged(logged.signal, logged.media_type, logged.data, tuple(births)))
            segment = self._segments[-1]
            if segment.size and segment.size + len(record) > self.segment_bytes:
                segment = self._rotate()
            os.write(self._fd, record)  # one write per record: a crash tears at most the last one
            segment.size += len(record)
            self._written += len(record)
            for trace_id in trace_ids:
                segments = self._by_trace.get(trace_id)
                if segments is not None and (not segments or segments[-1] is not segment):
                    segments.append(segment)
                    segment.open_traces.add(trace_id)
            if self.always:
                os.fsync(self._fd)
                self._synced = self._written
            return self._written

    def wait_durable(self, ticket: int) -> None:
        """Return once everything up to ``ticket`` is on disk, flushing it when no one else is."""
        with self._flushed:
            while self._synced < ticket:
                if self._syncing:
                    self._flushed.wait()
                    continue
                self._syncing = True
                target, fd = self._written, os.dup(self._fd)
                self._lock.release()
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                    self._lock.acquire()
                    self._syncing = False
                    self._flushed.notify_all()
                self._synced = max(self._synced, target)  # not reached when fsync failed: the caller sees why

    def durable(self, ticket: int) -> bool:
        return self._synced >= ticket

    def sync(self) -> None:
        """Flush everything written so far (a worker's group commit, between two messages)."""
        self.wait_durable(self._written)

    # -- replay

    def recover(self) -> Iterator[Logged]:
        """The records of the segments found at start, oldest first, torn tails cut off and
        counted (``torn_records``). After a graceful stop only the traces its checkpoint names
        are replayed: the records are filtered to them through their births."""
        for path in self._recovered:
            yield from self._read_segment(path)

    @property
    def checkpoint(self) -> frozenset[int] | None:
        """The traces a graceful stop left unjudged, or None after a crash (everything replays)."""
        return self._checkpoint

    def drop_recovered(self) -> None:
        """The replayed records are in this log's own segments now (and flushed): delete the old ones."""
        self.sync()
        for path in self._recovered:
            path.unlink(missing_ok=True)
        (self.directory / CHECKPOINT).unlink(missing_ok=True)
        self._recovered, self._recovered_bytes, self._checkpoint = [], 0, None
        _sync_directory(self.directory)

    def _read_segment(self, path: Path) -> Iterator[Logged]:
        data = path.read_bytes()
        offset = 0
        while offset < len(data):
            record = _decode(data, offset)
            if record is None:
                self.torn_records += 1
                logger.warning("intake log %s: torn record at byte %d of %d; cut off there", path, offset, len(data))
                with open(path, "r+b") as out:
                    out.truncate(offset)
                    os.fsync(out.fileno())
                self._recovered_bytes -= len(data) - offset
                return
            logged, offset = record
            yield logged

    # -- segments

    def _open_segment(self) -> _Segment:
        path = self.directory / f"{self._next_number:016d}{_SUFFIX}"
        self._next_number += 1
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        _sync_directory(self.directory)
        segment = _Segment(self._next_number - 1, path)
        self._segments.append(segment)
        self._fd = fd
        return segment

    def _rotate(self) -> _Segment:
        """Close the segment written to (flushed first: the next flush covers only the new one)."""
        old = self._fd
        os.fsync(old)
        self._synced = self._written
        os.close(old)
        segment = self._open_segment()
        self._release()
        return segment

    def _release(self) -> None:
        """Delete closed segments from the oldest on, while they hold no buffered trace."""
        segments = self._segments
        while len(segments) > 1 and not segments[0].open_traces:
            segments.pop(0).path.unlink(missing_ok=True)

    def close(self, unjudged: Iterable[int] | None = None) -> None:
        """A graceful stop: every buffered trace was judged except ``unjudged``; keep the
        segments only if some are, with a checkpoint naming them. ``None``: keep everything."""
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1
            if unjudged is not None:
                still = set(unjudged) & self._by_trace.keys()
                if still:
                    tmp = self.directory / (CHECKPOINT + ".tmp")
                    tmp.write_bytes(b"".join(t.to_bytes(16, "big") for t in sorted(still)))
                    with open(tmp, "rb") as written:
                        os.fsync(written.fileno())
                    os.replace(tmp, self.directory / CHECKPOINT)
                else:
                    for segment in self._segments:
                        segment.path.unlink(missing_ok=True)
                    self._segments.clear()
                _sync_directory(self.directory)
            self._lock_file.close()


def open_intake_log(config: ReceiverConfig, shard: Shard) -> IntakeLog | None:
    """The intake log ``config`` asks for, the shard's own (``worker-<i>/`` under the
    directory with workers); None when there is none (``ReceiverConfig.intake_directory``)."""
    directory = config.intake_directory()
    if directory is None:
        if config.durability != "none" and parse_store_spec(config.store).shared:
            logger.warning("otel-reliability receiver: no intake_dir for a postgresql:// store, so no intake log: "
                           "requests are acknowledged from memory (durability none)")
        return None
    own = directory / f"worker-{shard.index}" if shard.count > 1 else directory
    if shard.index == 0:  # said once: segments that no one of this configuration replays
        others = [d for d in [directory, *directory.glob("worker-*")] if d != own and any(d.glob("*" + _SUFFIX))]
        others = [
            d for d in others
            if shard.count == 1 or d == directory or not d.name[7:].isdigit() or int(d.name[7:]) >= shard.count
        ]
        for other in others:
            logger.warning("otel-reliability receiver: %s holds intake log segments of a receiver with another "
                           "workers setting; they are not replayed (start it with that setting to replay them)", other)
    directory = own
    return IntakeLog(directory, config.durability, max(1, config.max_intake_log_bytes // shard.count))


def _encode(logged: Logged) -> bytes:
    payload = b"".join((
        _META.pack(_SIGNALS.index(logged.signal), _MEDIA.index(logged.media_type), len(logged.births)),
        b"".join(t.to_bytes(16, "big") for t in logged.births),
        logged.data,
    ))
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _decode(data: bytes, offset: int) -> tuple[Logged, int] | None:
    """The record at ``offset`` and the offset after it; None when it is torn."""
    end = offset + _HEADER.size
    if end > len(data):
        return None
    length, crc = _HEADER.unpack_from(data, offset)
    payload = data[end:end + length]
    if len(payload) < length or zlib.crc32(payload) != crc or length < _META.size:
        return None
    signal, media, count = _META.unpack_from(payload)
    if signal >= len(_SIGNALS) or media >= len(_MEDIA) or _META.size + 16 * count > length:
        return None
    start = _META.size + 16 * count
    births = tuple(int.from_bytes(payload[i:i + 16], "big") for i in range(_META.size, start, 16))
    return Logged(_SIGNALS[signal], _MEDIA[media], payload[start:], births), end + length


def _read_checkpoint(path: Path) -> frozenset[int] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return frozenset(int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data) - 15, 16))


def _sync_directory(directory: Path) -> None:
    """Make a created or deleted file's name durable (its directory entry)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replay(log: IntakeLog, take: Callable[[Body, set[int]], int]) -> int:
    """Take again what ``log`` holds from before this start (``take(body, traces)`` buffers
    the spans of those traces and returns the request's ticket in the new log, 0 when it
    kept none), then let the old segments go: the replayed requests are in the new ones,
    flushed. Returns how many requests held spans of traces not judged yet."""
    checkpoint = log.checkpoint
    alive: set[int] = set(checkpoint or ())
    replayed = 0
    for logged in log.recover():
        if checkpoint is None:
            alive.update(logged.births)  # a trace's spans from the record it entered the buffer with on
        try:
            ticket = take(Body(logged.data, logged.media_type, logged.signal), alive)
        except IntakeError as exc:  # it was accepted once: only a change of version could do this
            logger.warning("otel-reliability could not replay a logged request: %s", exc)
            continue
        replayed += bool(ticket)  # it held spans of a trace not judged yet (logged again, so: a ticket)
    log.drop_recovered()
    return replayed
