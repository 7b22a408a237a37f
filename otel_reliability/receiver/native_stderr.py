"""Holding back what native code writes to standard error while one call runs.

grpcio's C core logs a failed bind straight to file descriptor 2 (``add_port.cc … Address
already in use``) before Python learns of it; the receiver then says the same in one clean
line. ``held_stderr`` catches descriptor 2 for the length of the call, and afterwards writes
back every line it caught except those the caller chose to drop, so nothing else another
thread logged meanwhile is lost.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator


class HeldStderr:
    """What ``held_stderr`` caught; ``drop(text)`` leaves out the lines holding ``text``."""

    def __init__(self) -> None:
        self.dropped: list[str] = []

    def drop(self, text: str) -> None:
        self.dropped.append(text)


@contextmanager
def held_stderr() -> Iterator[HeldStderr]:
    """Catch file descriptor 2 while the block runs; write back the lines not dropped."""
    held = HeldStderr()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield held
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            lines = caught.read().decode("utf-8", "replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not any(text in line for text in held.dropped))
            if kept:
                os.write(2, kept.encode("utf-8"))
