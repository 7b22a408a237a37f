"""Which of the intake log's segments may go, and their deletion, which the directory may refuse.

A segment is **released** once no trace it (or an older segment) holds is in the buffer;
it is then deleted, oldest first. It leaves the list — and the log's size — only once it is
gone from disk: when the directory refuses (read-only), it stays listed and counted, the
deletion is retried at most once every ``RETRY_S``, and a release note in the segment being
written (``intake_segments.release_note``) tells a later start not to replay it. The
segments an earlier run left are deleted the same way once replayed.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable

from .intake_found import FoundSegments
from .intake_segments import Segment, release_note

logger = logging.getLogger(__name__)

RETRY_S = 1.0  # a deletion the directory refused is tried again after this


class Releases:
    """This run's segments (``segments``, oldest first; the last one is written to) and the
    ones found at start, and what of them is released. ``note(record)`` writes a record into
    the segment being written (False when it cannot)."""

    def __init__(self, directory: Path, found: FoundSegments, first_number: int,
                 note: Callable[[bytes], bool]) -> None:
        self.directory = directory
        self.found = found
        self.segments: list[Segment] = []
        self._note = note
        self._first_number = first_number  # of the segments a release note may name
        self._released_below = first_number  # this run's segments numbered below it are released
        self._noted_below = -1  # ... and the release notes say so up to here
        self._undeletable: str | None = None  # what could not be deleted, while it cannot
        self._retry_at = 0.0
        self._replayed = False  # the found segments may go

    def first_unreleased(self) -> int:
        """The index in ``segments`` of the oldest one not released."""
        index = 0
        while index < len(self.segments) and self.segments[index].number < self._released_below:
            index += 1
        return index

    def released(self, segment: Segment) -> bool:
        return segment.number < self._released_below

    def release_up_to(self, index: int) -> None:
        """The segments before ``segments[index]`` are released: delete them."""
        if index < len(self.segments):
            self._released_below = max(self._released_below, self.segments[index].number)
        self.delete()

    def release_all(self, next_number: int) -> None:
        """A graceful stop with nothing left unjudged: every segment goes."""
        self._released_below = next_number
        self._retry_at = 0.0
        self.delete()

    def retry_due(self) -> bool:
        return self._undeletable is not None and time.monotonic() >= self._retry_at

    def delete(self) -> None:
        """Delete what is released, oldest first, each leaving the list once gone from disk;
        after a refusal, only once ``RETRY_S`` has passed."""
        if self._undeletable is not None and not self.retry_due():
            return
        if self._replayed and self.found.paths:
            self.drop_found()
        segments = self.segments
        while segments and segments[0].number < self._released_below:
            try:
                segments[0].path.unlink(missing_ok=True)
            except OSError as exc:
                self._refused(f"{segments[0].path.name} ({exc.strerror or exc})")
                return
            segments.pop(0)
        if self._undeletable is not None and not self.found.paths:
            logger.info("intake log %s: released segments deleted (refused before: %s)", self.directory, self._undeletable)
            self._undeletable = None

    def drop_found(self) -> bool:
        """Delete the segments found at start (replayed: their records are in this run's
        segments), unless they are kept; whether they are gone."""
        self._replayed = True
        if not self.found.keep:  # a release note covers them too from now on
            self._first_number = 0
        if self.found.drop():
            return True
        if not self.found.keep:
            self._refused("a segment replayed at start")
        return False

    def _refused(self, what: str) -> None:
        if self._undeletable is None:
            logger.error("intake log %s: cannot delete %s, released; it stays counted in the log's size, and is "
                         "deleted once the directory takes it", self.directory, what)
        self._undeletable = what
        self._retry_at = time.monotonic() + RETRY_S
        if self._noted_below < self._released_below and self._note(release_note(self._first_number, self._released_below)):
            self._noted_below = self._released_below
