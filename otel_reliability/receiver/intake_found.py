"""The segments an earlier run of the receiver left in its intake log directory.

They are read past damage (``intake_records.read_records``), and what was skipped is
counted: torn tails (a crash in the middle of writing a record never acknowledged) apart
from damaged stretches inside a segment. A segment found damaged is copied into
``damaged/`` before replay lets it go, for whoever wants to look at it; the last
``MAX_DAMAGED_COPIES`` copies are kept, so they take at most that many segments' bytes. When
a copy cannot be made (or a replayed request could not be logged again), ``keep`` holds
every found segment in place until the next start instead of deleting it.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Iterator

from .intake_records import Damage, Logged, read_records

logger = logging.getLogger(__name__)

DAMAGED = "damaged"
MAX_DAMAGED_COPIES = 8


class FoundSegments:
    """The segment files ``paths`` of ``directory``, oldest first, and what reading them skipped."""

    def __init__(self, directory: Path, paths: list[Path]) -> None:
        self.directory = directory
        self.paths = paths
        self.bytes = sum(path.stat().st_size for path in paths)
        self.torn_records = 0  # torn tails skipped
        self.corrupt_records = 0  # damaged stretches inside segments, read past
        self.skipped_bytes = 0  # bytes of both
        self.keep = False  # do not delete them after the replay: the next start reads them again

    def records(self) -> Iterator[Logged]:
        for path in self.paths:
            yield from self._read(path)

    def reread(self) -> Iterator[Logged]:
        """The records again, for a second pass: the damage was counted and copied by ``records``."""
        for path in self.paths:
            for item in read_records(path.read_bytes()):
                if not isinstance(item, Damage):
                    yield item

    def drop(self) -> bool:
        """Delete the segments (their records were logged again), unless ``keep``; whether they went."""
        if self.keep:
            logger.error("intake log %s: keeping the %d segment(s) found at start until the next start "
                         "(a damaged one could not be copied aside, or a record could not be logged again)",
                         self.directory, len(self.paths))
            return False
        for path in self.paths:
            path.unlink(missing_ok=True)
        self.paths, self.bytes = [], 0
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
            if item.tail:
                self.torn_records += 1
            else:
                self.corrupt_records += 1
            self.skipped_bytes += item.size
            logger.warning("intake log %s: %s at bytes %d-%d of %d skipped; %s", path,
                           "a torn record" if item.tail else "damage", item.start, item.end, len(data),
                           "everything before it replays" if item.tail else "the intact records after it replay")

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
