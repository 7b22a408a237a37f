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
to the next segment — the log is *faulted*: ``ready`` is False and says why, for the whole
episode. ``probe`` ends it only once the disk has room for the record that failed (the
space is reserved in a probe file, ``intake_segments.room_for``), and the next ``append``
starts a fresh segment, created with that record in the same write as its header: a disk
with room for a header only leaves no segment behind and does not flicker ready. A file
descriptor is closed only once its successor is open, so no write can land in a file the
log does not own.

**Checkpoint.** The log knows which traces each segment holds that are still in the
engine's buffer (``trace_entered``/``trace_left``, told by the buffer). Segments are
released oldest first, once neither they nor any older segment holds a trace still
buffered: the log is always a suffix of what was acknowledged, and a trace whose spans
start before that suffix has left the buffer (judged and stored, or expired or evicted —
counted by the engine). Each record lists the traces that entered the buffer with it
(``births``), so a replay takes a trace's spans only from its first record in the suffix
on — never the tail of a trace already judged, which would be judged again on a part of it.
A segment leaves the log's list, and its size, only once it is gone from disk
(``intake_release``: a read-only directory); a ``left`` note names the traces that left the
buffer, so that a start after a crash judges none of them again (``intake_segments``).

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

import fcntl
import logging
import os
import threading
from pathlib import Path
from typing import Iterable, Iterator, Protocol

from .intake_found import FoundSegments
from .intake_records import HEADER_BYTES, SEGMENT_MAGIC, Logged, encode, read_records
from .intake_release import Releases
from .intake_segments import (
    RELEASED,
    SUFFIX,
    Segment,
    left_note,
    read_checkpoint,
    room_for,
    size_or,
    start_segment,
    sync_directory,
    write_checkpoint,
    write_whole,
)

__all__ = ["IntakeLog", "IntakeLogError", "Logged", "TraceLedger"]

logger = logging.getLogger(__name__)

DURABILITIES = ("none", "batch", "always")
SEGMENT_BYTES = 8 * 1024 * 1024  # a segment is closed past this size; release works segment by segment
_SUFFIX = SUFFIX
CHECKPOINT = "checkpoint"


class TraceLedger(Protocol):
    """Who is told which traces enter and leave the engine's buffer: the log of one process,
    or a shard's note of them for the serving process's log (``shard_process``)."""

    def trace_entered(self, trace_id: int) -> None: ...

    def trace_left(self, trace_id: int) -> None: ...


class IntakeLogError(OSError):
    """The log's directory cannot be used (another receiver holds it, or it is not writable)."""


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
        self._checkpoint = read_checkpoint(directory / CHECKPOINT)
        self._by_trace: dict[int, list[Segment]] = {}  # traces in the buffer → their segments
        self._births: list[int] = []
        self._left: list[tuple[int, int]] = []  # traces that left the buffer, not noted yet; their last segment
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._written = 0  # bytes appended since start, and flushed to disk
        self._synced = 0
        self._syncing = False
        self._fd = -1
        self.fault: str | None = None  # why the last write, flush or rotation failed; None while ready
        self._fresh = True  # the next append starts a segment (none yet, or the last one faulted)
        self._needed = 0  # bytes the write that faulted the log needed: the probe asks room for them
        self._next_number = int(self.found.paths[-1].stem) + 1 if self.found.paths else 0
        self._releases = Releases(directory, self.found, self._next_number, self._write_note)
        self._segments = self._releases.segments  # oldest first; the last one is written to
        try:
            room_for(directory, 0)  # the directory takes files: the first segment is started by the first append
        except OSError as exc:
            self._lock_file.close()
            raise IntakeLogError(f"intake log {directory}: {exc.strerror or exc}") from exc

    # -- size

    @property
    def size(self) -> int:
        """Bytes on disk: segments not yet deleted (those being replayed, and those released
        but refused deletion, included)."""
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
        the disk has room for what failed (``probe``)."""
        return self.fault is None

    def probe(self) -> bool:
        """End a fault once the directory takes a file of the bytes the failed write needed,
        and retry a refused deletion when it is due; returns ``ready``."""
        with self._lock:
            self._releases.delete()
            self._note_left()
            if self.fault is not None:
                try:
                    room_for(self.directory, self._needed)
                except OSError:
                    return False
                logger.info("intake log %s: writable again (%s before)", self.directory, self.fault)
                self.fault = None
            return True

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
                self._left.append((trace_id, segments[-1].number))
                self._release()

    # -- writing

    def append(self, logged: Logged, trace_ids: Iterable[int]) -> int:
        """Write one accepted request, holding ``trace_ids`` (those buffered); returns the
        ticket ``wait_durable`` waits for. Births come from ``trace_entered`` since the last append."""
        with self._lock:
            births, self._births = self._births, []
            record = encode(Logged(logged.signal, logged.media_type, logged.data, tuple(births) + logged.births, logged.seq))
            try:
                if self._fresh or self._segments[-1].size + len(record) > self.segment_bytes:
                    segment = self._start(record)
                else:
                    segment = self._segments[-1]
                    self._write_whole(segment, record)
            except OSError:
                self._births = births + self._births  # still unlogged: the next record names them
                raise
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
                    self._faulted("flush", exc, 0)
                    raise
                self._synced = self._written
            return self._written

    def _write_whole(self, segment: Segment, record: bytes) -> None:
        """Write all of ``record`` at the end of ``segment``, or none of it (the segment is
        cut back to where the record began); a failure faults the log."""
        try:
            write_whole(self._fd, record)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, segment.size)  # a part of it may be on disk: cut it off
            except OSError:  # a torn tail, skipped by replay: counted as on disk
                logger.warning("intake log %s: could not cut a partly written record off", segment.path)
                segment.size = size_or(self._fd, segment.size)
            self._faulted("write", exc, len(SEGMENT_MAGIC) + len(record))
            raise
        segment.size += len(record)
        self._written += len(record)

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
                        self._faulted("flush", exc, 0)  # what it held is not on disk: write on in a new segment
                    raise
                finally:
                    os.close(fd)
                    self._lock.acquire()
                    self._syncing = False
                    self._flushed.notify_all()
                self._synced = max(self._synced, target)  # not reached when fsync failed: the caller sees why

    def releasable(self, seq: int) -> bool:
        """Whether ``release_before(seq)`` would release a segment, or retry a refused deletion."""
        segments = self._segments
        first = self._releases.first_unreleased()
        return (first < len(segments) - 1 and segments[first].last_seq < seq) or self._releases.retry_due()

    def release_before(self, seq: int) -> None:
        """A routed log: no shard holds a trace from a record numbered below ``seq`` any more;
        release the closed segments, oldest first, that hold only such records."""
        with self._lock:
            segments = self._segments
            first = self._releases.first_unreleased()
            while first < len(segments) - 1 and segments[first].last_seq < seq:
                first += 1
            self._releases.release_up_to(first)

    def live_records(self) -> Iterator[Logged]:
        """The records of this run's own segments, oldest first (a restarted shard's replay).
        The caller keeps appends out meanwhile; what was written is flushed first."""
        self.sync()
        for segment in list(self._segments):
            if self._releases.released(segment):  # no shard needs it
                continue
            try:
                data = segment.path.read_bytes()
            except FileNotFoundError:  # released meanwhile: no shard needs it
                continue
            for item in read_records(data):
                if isinstance(item, Logged) and item.signal != RELEASED:
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
        with self._lock:
            if not self._releases.drop_found():
                return
            try:
                (self.directory / CHECKPOINT).unlink(missing_ok=True)
                sync_directory(self.directory)
            except OSError as exc:  # it names traces of the replayed segments only: harmless if left
                logger.warning("intake log %s: cannot delete the checkpoint (%s)", self.directory, exc.strerror or exc)
            self._checkpoint = None

    # -- segments

    def _start(self, record: bytes) -> Segment:
        """Start the next segment with ``record`` in it: after a fault, or the last one being
        full (flushed first: the next flush covers only the new one). Nothing changes when it
        fails, but the fault."""
        try:
            if not self._fresh:
                os.fsync(self._fd)
                self._synced = self._written
            segment, fd = start_segment(self.directory, self._next_number, record)
        except OSError as exc:
            self._faulted("rotation" if not self._fresh else "starting a segment", exc, len(SEGMENT_MAGIC) + len(record))
            raise
        self._next_number += 1
        old, self._fd = self._fd, fd
        if old >= 0:
            os.close(old)
        self._segments.append(segment)
        self._written += segment.size
        self._fresh = False
        self._release()
        return segment

    def _faulted(self, what: str, exc: OSError, needed: int) -> None:
        """A write, flush or rotation failed: not ready until ``probe`` finds room for ``needed``
        bytes, and the next append starts a fresh segment."""
        if self.fault is None:
            logger.error("intake log %s: %s failed (%s); not ready until the disk has room again",
                         self.directory, what, exc.strerror or exc)
        self.fault = f"{what} failed: {exc.strerror or exc}"
        self._needed = max(needed, len(SEGMENT_MAGIC))
        self._fresh = True

    def _release(self) -> None:
        """Release closed segments from the oldest on, while they hold no buffered trace (a routed
        log knows no trace: its shards release by record number, ``release_before``)."""
        if self.routed:
            self._releases.delete()
            return
        segments = self._segments
        first = self._releases.first_unreleased()
        while first < len(segments) - 1 and not segments[first].open_traces:
            first += 1
        self._releases.release_up_to(first)

    def _write_note(self, record: bytes) -> bool:
        """Write a note into the segment being written; False when there is none, or it fails
        (faulted: a start after a crash then replays what the note would have spared)."""
        if self._fresh or not self._segments:
            return False
        try:
            self._write_whole(self._segments[-1], record)
        except OSError as exc:
            logger.warning("intake log %s: cannot write a note (%s)", self.directory, exc.strerror or exc)
            return False
        return True

    def _note_left(self) -> None:
        """Name the traces that left the buffer whose records are still on disk (``intake_segments``)."""
        if not self._left or self._fresh:
            return
        oldest = self._segments[0].number
        left = [trace_id for trace_id, last in self._left if last >= oldest]
        self._left = []
        if left:
            self._write_note(left_note(left))

    def close(self, unjudged: Iterable[int] | None = None) -> None:
        """A graceful stop: every buffered trace was judged except ``unjudged``; keep the
        segments only if some are, with a checkpoint naming them. ``None``: keep everything.
        A directory that refuses leaves the segments as after a crash (a failed checkpoint), or
        noted as released (they could not be deleted)."""
        with self._lock:
            try:
                if self._fd >= 0 and not self._fresh:
                    os.fsync(self._fd)
                if unjudged is not None:
                    self._stop_with(set(unjudged) if self.routed else set(unjudged) & self._by_trace.keys())
            except OSError as exc:
                logger.error("intake log %s: could not close cleanly (%s); the next start replays it as after "
                             "a crash", self.directory, exc.strerror or exc)
            finally:
                if self._fd >= 0:
                    os.close(self._fd)
                    self._fd = -1
                self._lock_file.close()

    def _stop_with(self, unjudged: set[int]) -> None:
        if unjudged:
            write_checkpoint(self.directory / CHECKPOINT, unjudged)
        else:
            self._releases.release_all(self._next_number)
            if self._segments:  # refused: the last segment says all of them are released
                os.fsync(self._fd)
        sync_directory(self.directory)
