"""The intake log's segment files: how one is started, whether the disk has room, the
notes that say which segments were released while they could not be deleted and which
traces left the buffer, and a graceful stop's checkpoint.

A segment is created with its first record in the same write as its header, never empty:
a disk with room for a header but not for the record that needs it leaves no file behind
(the one tried is deleted), and the log stays faulted instead of flickering ready.

**Released, not yet deleted** (``intake_release``: a read-only directory). A ``released``
record in the segment being written names the segments released but still on disk, so that
a start that finds them does not replay traces already judged.

**Left.** The segment being written is never released, and holds traces that were judged
and left the buffer. A ``left`` record names them (written on the judge thread's tick), so
that a start after a crash takes a trace's spans from its birth up to the note of its leaving
only — never judging it again. A record holding it after the note is a new birth.
"""

from __future__ import annotations

import errno
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .intake_records import MEDIA, SEGMENT_MAGIC, Logged, encode

SUFFIX = ".seg"
PROBE = "room.probe"  # a file the probe for room creates and deletes; never read as a segment
RELEASED = "released"  # the signal of a release note
LEFT = "left"  # the signal of a note of traces that left the buffer
_RANGE = struct.Struct("<QQ")  # the first segment number of the run that wrote it, the first one still needed


@dataclass(slots=True)
class Segment:
    number: int
    path: Path
    size: int = 0
    open_traces: set[int] = field(default_factory=set)
    last_seq: int = -1  # of the requests it holds (a routed log's release goes by it)


def write_whole(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` (a short write is continued); raises when the disk takes no more."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.ENOSPC, "the disk took no byte of the record")
        view = view[written:]


def start_segment(directory: Path, number: int, first: bytes) -> tuple[Segment, int]:
    """Create segment ``number`` holding its header and the record ``first``, the name made
    durable; on failure no file is left and the error is raised."""
    path = directory / f"{number:016d}{SUFFIX}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
    try:
        write_whole(fd, SEGMENT_MAGIC + first)
        sync_directory(directory)
    except OSError:
        os.close(fd)
        path.unlink(missing_ok=True)  # it was just created, so the directory is writable
        raise
    return Segment(number, path, size=len(SEGMENT_MAGIC) + len(first)), fd


def room_for(directory: Path, nbytes: int) -> None:
    """Raise unless a file of ``nbytes`` can be created in ``directory`` now: the space is
    reserved (``posix_fallocate``) in a probe file, which is deleted again."""
    path = directory / PROBE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if nbytes:
            os.posix_fallocate(fd, 0, nbytes)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)


def release_note(first_of_run: int, needed: int) -> bytes:
    """The record saying this run's segments numbered ``first_of_run`` up to ``needed`` are released."""
    return encode(Logged(RELEASED, MEDIA[0], _RANGE.pack(first_of_run, needed)))


def released_range(logged: Logged) -> range:
    """The segment numbers a release note names as released (empty when it is not one)."""
    if logged.signal != RELEASED or len(logged.data) < _RANGE.size:
        return range(0)
    return range(*_RANGE.unpack_from(logged.data))


def left_note(trace_ids: list[int]) -> bytes:
    """The record naming traces that left the buffer."""
    return encode(Logged(LEFT, MEDIA[0], b"".join(t.to_bytes(16, "big") for t in trace_ids)))


def left_traces(logged: Logged) -> list[int]:
    """The traces a ``left`` record names."""
    data = logged.data
    return [int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data) - 15, 16)]


def segment_number(path: Path) -> int:
    return int(path.stem)


def sync_directory(directory: Path) -> None:
    """Make a created or deleted file's name durable (its directory entry)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def size_or(fd: int, known: int) -> int:
    """The size of the file open as ``fd`` (``known`` when even that cannot be read)."""
    try:
        return os.fstat(fd).st_size
    except OSError:
        return known


def write_checkpoint(path: Path, unjudged: set[int]) -> None:
    """Name the traces a graceful stop left unjudged, durably (the directory is synced by the caller)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(b"".join(t.to_bytes(16, "big") for t in sorted(unjudged)))
    with open(tmp, "rb") as written:
        os.fsync(written.fileno())
    os.replace(tmp, path)


def read_checkpoint(path: Path) -> frozenset[int] | None:
    """The traces a checkpoint names, or None when there is none (after a crash)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return frozenset(int.from_bytes(data[i:i + 16], "big") for i in range(0, len(data) - 15, 16))
