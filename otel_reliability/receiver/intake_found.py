"""The segments an earlier run of the receiver left in its intake log directory.

They are read past damage (``intake_records.read_records``), and what was skipped is
counted by what it was: torn records (a crash in the middle of writing a record never
acknowledged) apart from damaged ones (written whole, so acknowledged, and damaged since).
Segments a release note names (``intake_segments``: released while the directory refused
their deletion) are not replayed: every trace they held had left that run's buffer. A trace
a ``left`` note names is not replayed from the records of that stay in the buffer: its birth
there is struck out of the records read again, so a replay (``intake_births``) takes it
only from a later birth. A segment found damaged is copied into
``damaged/`` before replay lets it go, for whoever wants to look at it; the last
``MAX_DAMAGED_COPIES`` copies are kept, so they take at most that many segments' bytes. When
a copy cannot be made (or a replayed request could not be logged again), ``keep`` holds
every found segment in place until the next start instead of deleting it.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from .intake_records import Damage, Logged, read_records
from .intake_segments import LEFT, RELEASED, left_traces, released_range, segment_number

logger = logging.getLogger(__name__)

DAMAGED = "damaged"
MAX_DAMAGED_COPIES = 8


class FoundSegments:
    """The segment files ``paths`` of ``directory``, oldest first, and what reading them skipped."""

    def __init__(self, directory: Path, paths: list[Path]) -> None:
        self.directory = directory
        self.paths = paths
        self.bytes = sum(path.stat().st_size for path in paths)
        self.torn_records = 0  # records cut short by a crash before their acknowledgement, skipped
        self.damaged_records = 0  # stretches of records written whole and damaged since, read past
        self.skipped_bytes = 0  # bytes of both
        self.keep = False  # do not delete them after the replay: the next start reads them again
        self._released: list[range] = []  # segment numbers release notes name
        self._ended: set[tuple[int, int, int]] = set()  # births (trace, segment number, record) of stays that ended

    def records(self) -> Iterator[Logged]:
        """The records of every segment, damage counted; the notes are taken, not returned."""
        born: dict[int, tuple[int, int]] = {}  # trace → where its latest stay in the buffer began
        for path in self.paths:
            number = segment_number(path)
            for index, logged in enumerate(self._read(path)):
                if logged.signal == RELEASED:
                    self._released.append(released_range(logged))
                elif logged.signal == LEFT:
                    self._ended.update((t, *born.pop(t)) for t in left_traces(logged) if t in born)
                else:
                    born.update((t, (number, index)) for t in logged.births)
                    yield logged

    def reread(self) -> Iterator[Logged]:
        """The records again, for a second pass (after ``records``: the damage was counted and
        copied, the notes read): the released segments left out, births of stays that ended
        struck out."""
        for path in self.paths:
            number = segment_number(path)
            if any(number in released for released in self._released):
                continue
            records = (item for item in read_records(path.read_bytes()) if not isinstance(item, Damage))
            for index, logged in enumerate(records):
                if logged.signal in (RELEASED, LEFT):
                    continue
                if any((t, number, index) in self._ended for t in logged.births):
                    logged = replace(logged, births=tuple(t for t in logged.births if (t, number, index) not in self._ended))
                yield logged

    def drop(self) -> bool:
        """Delete the segments (their records were logged again), unless ``keep``; whether all
        went. One that cannot be deleted stays listed and counted, with those after it."""
        if self.keep:
            logger.error("intake log %s: keeping the %d segment(s) found at start until the next start "
                         "(a damaged one could not be copied aside, or a record could not be logged again)",
                         self.directory, len(self.paths))
            return False
        while self.paths:
            path = self.paths[0]
            try:
                size = path.stat().st_size
                path.unlink()
            except FileNotFoundError:
                size = 0
            except OSError:  # the log retries, and says so
                return False
            self.paths.pop(0)
            self.bytes -= size
        self.bytes = 0
        return True

    def _read(self, path: Path) -> Iterator[Logged]:
        data = path.read_bytes()
        copied = False
        for item in read_records(data):
            if not isinstance(item, Damage):
                yield item
                continue
            if not copied:
                copied = True
                self._copy_aside(path)
            if item.torn:
                self.torn_records += 1
            else:
                self.damaged_records += 1
            self.skipped_bytes += item.size
            logger.warning("intake log %s: %s at bytes %d-%d of %d skipped; %s", path,
                           "a torn record (never acknowledged)" if item.torn else "damage to acknowledged records",
                           item.start, item.end, len(data),
                           "everything before it replays" if item.torn else "the intact records around it replay")

    def _copy_aside(self, path: Path) -> None:
        aside = self.directory / DAMAGED
        try:
            aside.mkdir(exist_ok=True)
            copies = sorted(aside.iterdir(), key=lambda p: (p.stat().st_mtime, p.name))
            for old in copies[:max(0, len(copies) - MAX_DAMAGED_COPIES + 1)]:
                logger.warning("intake log %s: deleting the oldest copy of a damaged segment, %s", aside, old.name)
                old.unlink(missing_ok=True)
            target = aside / f"{path.stem}-{os.getpid()}-{len(copies)}{path.suffix}"
            shutil.copyfile(path, target)
            with open(target, "rb") as copy:
                os.fsync(copy.fileno())
        except OSError as exc:
            self.keep = True
            logger.error("intake log %s: could not copy the damaged segment aside (%s); it is kept in place", path, exc)
