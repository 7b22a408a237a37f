"""The intake log: what the receiver acknowledged, on disk before the acknowledgement.

Every accepted request body is appended to a segment file before its answer goes out;
``durability`` says when it is flushed to the disk (``fsync``):

- ``batch`` — group commit: an answer waits for the next flush, and one flush covers every
  request appended meanwhile (the first waiter flushes, the others wait for it);
- ``always`` — one flush per request, before its answer;
- ``none`` — no log at all (the service does not open one).

Records are framed (``intake_records``: a marker, the length, a CRC of both and the payload),
so ``recover`` reads past damage: a torn tail (a crash mid-write) or a damaged stretch in the
middle of a segment is skipped and counted, every intact record after it replays, and the
damaged segment is first copied aside (``intake_found``).

**Whole records or none.** A record is written whole: a short write is continued, and a
write that fails leaves the segment cut back to the end of its last whole record (or, when
even that fails, no longer written to). After any failure — a write, a flush, a rotation
to the next segment — the log is *faulted*: ``ready`` is False and says why, and the next
``append`` (or ``probe``) first starts a fresh segment; when that works the log is ready
again, whatever went wrong before. A file descriptor is closed only once its successor is
open, so no write can land in a file the log does not own.

**Checkpoint.** The log knows which traces each segment holds that are still in the
engine's buffer (``trace_entered``/``trace_left``, told by the buffer). Segments are
released oldest first, once neither they nor any older segment holds a trace still
buffered: the log is always a suffix of what was acknowledged, and a trace whose spans
start before that suffix has left the buffer (judged and stored, or expired or evicted —
counted by the engine). Each record lists the traces that entered the buffer with it
(``births``), so a replay takes a trace's spans only from its first record in the suffix
on — never the tail of a trace already judged, which would be judged again on a part of it.

With workers (``routed``), the serving process writes the log and the shards hold the
traces: it knows no trace's buffer, so it numbers its records (``Logged.seq``) and releases
by number instead (``release_before``): the shards say the oldest record they still hold a
trace from, and where their traces entered their buffers (``intake_births``).

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

import errno
import fcntl
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Protocol

from .intake_found import FoundSegments
from .intake_records import HEADER_BYTES, SEGMENT_MAGIC, Logged, encode, read_records

__all__ = ["IntakeLog", "IntakeLogError", "Logged", "TraceLedger"]

logger = logging.getLogger(__name__)

DURABILITIES = ("none", "batch", "always")
SEGMENT_BYTES = 8 * 1024 * 1024  # a segment is closed past this size; release works segment by segment
_SUFFIX = ".seg"
CHECKPOINT = "checkpoint"


class TraceLedger(Protocol):
    """Who is told which traces enter and leave the engine's buffer: the log of one process,
    or a shard's note of them for the serving process's log (``shard_process``)."""

    def trace_entered(self, trace_id: int) -> None: ...

    def trace_left(self, trace_id: int) -> None: ...


class IntakeLogError(OSError):
    """The log's directory cannot be used (another receiver holds it, or it is not writable)."""


@dataclass(slots=True)
class _Segment:
    number: int
    path: Path
    size: int = 0
    open_traces: set[int] = field(default_factory=set)
    last_seq: int = -1  # of the requests it holds (a routed log's release goes by it)


class IntakeLog:
    """One receiver's (or worker's) log in ``directory``; the directory is locked while open."""

    def __init__(
        self, directory: Path, durability: str, max_bytes: int, segment_bytes: int = SEGMENT_BYTES, routed: bool = False,
    ) -> None:
        if durability not in ("batch", "always"):
            raise ValueError(f"durability {durability!r}: the log is for batch or always")
        self.directory = directory
        self.routed = routed
        self.always = durability == "always"
        self.max_bytes = max_bytes
        # several segments fit in the bound, or a full log could not release any
        self.segment_bytes = max(64 * 1024, min(segment_bytes, max_bytes // 8))
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
        self.found = FoundSegments(directory, sorted(directory.glob("*" + _SUFFIX)))  # left by an earlier run
        self._checkpoint = _read_checkpoint(directory / CHECKPOINT)
        self._segments: list[_Segment] = []  # oldest first; the last one is written to
        self._by_trace: dict[int, list[_Segment]] = {}  # traces in the buffer → their segments
        self._births: list[int] = []
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._written = 0  # bytes appended since start, and flushed to disk
        self._synced = 0
        self._syncing = False
        self._fd = -1
        self.fault: str | None = None  # why the last write, flush or rotation failed; None while ready
        self._next_number = int(self.found.paths[-1].stem) + 1 if self.found.paths else 0
        try:
            self._use(*self._new_segment())
        except OSError as exc:
            self._lock_file.close()
            raise IntakeLogError(f"intake log {directory}: {exc.strerror or exc}") from exc

    # -- size

    @property
    def size(self) -> int:
        """Bytes on disk: segments not yet released (those being replayed included)."""
        return self.found.bytes + sum(s.size for s in self._segments)

    @property
    def written(self) -> int:
        """Bytes appended since start (segment headers included)."""
        return self._written

    def has_room(self, data_bytes: int) -> bool:
        return self.size + data_bytes + HEADER_BYTES <= self.max_bytes

    @property
    def ready(self) -> bool:
        """Whether the log can be written: False from a failed write, flush or rotation until
        a fresh segment could be started (``probe``, or the next ``append``)."""
        return self.fault is None

    def probe(self) -> bool:
        """Try to leave a fault behind (start a fresh segment); returns ``ready``."""
        with self._lock:
            if self.fault is not None:
                try:
                    self._recover_from_fault()
                except OSError:
                    pass
            return self.fault is None

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
            if self.fault is not None:
                self._recover_from_fault()
            births, self._births = self._births, []
            record = encode(Logged(logged.signal, logged.media_type, logged.data, tuple(births) + logged.births, logged.seq))
            try:
                segment = self._segments[-1]
                if segment.size > len(SEGMENT_MAGIC) and segment.size + len(record) > self.segment_bytes:
                    segment = self._rotate()
                self._write_whole(segment, record)
            except OSError:
                self._births = births + self._births  # still unlogged: the next record names them
                raise
            segment.size += len(record)
            self._written += len(record)
            if logged.signal != "births":
                segment.last_seq = max(segment.last_seq, logged.seq)
            for trace_id in trace_ids:
                segments = self._by_trace.get(trace_id)
                if segments is not None and (not segments or segments[-1] is not segment):
                    segments.append(segment)
                    segment.open_traces.add(trace_id)
            if self.always:
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    self._faulted("flush", exc)
                    raise
                self._synced = self._written
            return self._written

    def _write_whole(self, segment: _Segment, record: bytes) -> None:
        """Write all of ``record`` at the end of ``segment``, or none of it (the segment is
        cut back to where the record began); a failure faults the log."""
        view = memoryview(record)
        try:
            while view:
                written = os.write(self._fd, view)
                if written == 0:
                    raise OSError(errno.EIO, "the disk took no byte of the record")
                view = view[written:]
        except OSError as exc:
            if len(view) < len(record):  # a part of it is on disk: cut it off
                try:
                    os.ftruncate(self._fd, segment.size)
                except OSError:  # the recovery's fresh segment leaves it a torn tail, skipped by replay
                    logger.warning("intake log %s: could not cut a partly written record off", segment.path)
            self._faulted("write", exc)
            raise

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
                except OSError as exc:
                    with self._lock:
                        self._faulted("flush", exc)  # what it held is not on disk: write on in a new segment
                    raise
                finally:
                    os.close(fd)
                    self._lock.acquire()
                    self._syncing = False
                    self._flushed.notify_all()
                self._synced = max(self._synced, target)  # not reached when fsync failed: the caller sees why

    def releasable(self, seq: int) -> bool:
        """Whether ``release_before(seq)`` would delete a segment."""
        segments = self._segments
        return len(segments) > 1 and segments[0].last_seq < seq

    def release_before(self, seq: int) -> None:
        """A routed log: no shard holds a trace from a record numbered below ``seq`` any more;
        delete the closed segments, oldest first, that hold only such records."""
        with self._lock:
            segments = self._segments
            while len(segments) > 1 and segments[0].last_seq < seq:
                segments.pop(0).path.unlink(missing_ok=True)

    def live_records(self) -> Iterator[Logged]:
        """The records of this run's own segments, oldest first (a restarted shard's replay).
        The caller keeps appends out meanwhile; what was written is flushed first."""
        self.sync()
        for segment in list(self._segments):
            try:
                data = segment.path.read_bytes()
            except FileNotFoundError:  # released meanwhile: no shard needs it
                continue
            for item in read_records(data):
                if isinstance(item, Logged):
                    yield item

    def durable(self, ticket: int) -> bool:
        return self._synced >= ticket

    def sync(self) -> None:
        """Flush everything written so far (a worker's group commit, between two messages)."""
        self.wait_durable(self._written)

    # -- replay

    def recover(self) -> Iterator[Logged]:
        """The records of the segments found at start, oldest first, read past damage
        (``found`` counts what it skipped). After a graceful stop only the traces its checkpoint
        names are replayed: the records are filtered to them through their births."""
        return self.found.records()

    @property
    def checkpoint(self) -> frozenset[int] | None:
        """The traces a graceful stop left unjudged, or None after a crash (everything replays)."""
        return self._checkpoint

    def drop_recovered(self) -> None:
        """The replayed records are in this log's own segments now (and flushed): delete the old
        ones — unless ``found.keep`` says they must stay until the next start."""
        self.sync()
        if self.found.drop():
            (self.directory / CHECKPOINT).unlink(missing_ok=True)
            self._checkpoint = None
            _sync_directory(self.directory)

    # -- segments

    def _new_segment(self) -> tuple[_Segment, int]:
        """Create the next segment file, its header on disk; nothing is changed when it fails."""
        path = self.directory / f"{self._next_number:016d}{_SUFFIX}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
        try:
            if os.write(fd, SEGMENT_MAGIC) != len(SEGMENT_MAGIC):
                raise OSError(errno.ENOSPC, "no room for a segment's header")
            _sync_directory(self.directory)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        self._next_number += 1
        return _Segment(self._next_number - 1, path, size=len(SEGMENT_MAGIC)), fd

    def _use(self, segment: _Segment, fd: int) -> None:
        """Write to ``segment`` from now on; the previous descriptor is closed only now."""
        old, self._fd = self._fd, fd
        self._segments.append(segment)
        self._written += segment.size
        if old >= 0:
            os.close(old)

    def _rotate(self) -> _Segment:
        """Close the segment written to (flushed first: the next flush covers only the new one)."""
        try:
            os.fsync(self._fd)
            self._synced = self._written
            self._use(*self._new_segment())
        except OSError as exc:
            self._faulted("rotation", exc)
            raise
        self._release()
        return self._segments[-1]

    def _faulted(self, what: str, exc: OSError) -> None:
        if self.fault is None:
            logger.error("intake log %s: %s failed (%s); not ready until a fresh segment can be started",
                         self.directory, what, exc.strerror or exc)
        self.fault = f"{what} failed: {exc.strerror or exc}"

    def _recover_from_fault(self) -> None:
        """Start a fresh segment after a failure (its records, never acknowledged, need no flush);
        raises while that fails too."""
        try:
            self._use(*self._new_segment())
        except OSError as exc:
            self.fault = f"cannot start a segment: {exc.strerror or exc}"
            raise
        logger.info("intake log %s: writable again (%s before)", self.directory, self.fault)
        self.fault = None
        self._release()

    def _release(self) -> None:
        """Delete closed segments from the oldest on, while they hold no buffered trace (a routed
        log knows no trace: its shards release by record number, ``release_before``)."""
        if self.routed:
            return
        segments = self._segments
        while len(segments) > 1 and not segments[0].open_traces:
            segments.pop(0).path.unlink(missing_ok=True)

    def close(self, unjudged: Iterable[int] | None = None) -> None:
        """A graceful stop: every buffered trace was judged except ``unjudged``; keep the
        segments only if some are, with a checkpoint naming them. ``None``: keep everything."""
        with self._lock:
            if self._fd >= 0:
                try:
                    os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = -1
            if unjudged is not None:
                still = set(unjudged) if self.routed else set(unjudged) & self._by_trace.keys()
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
