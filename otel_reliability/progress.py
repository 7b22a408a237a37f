"""Progress bars for long command-line work, on standard error, only for a person watching.

A bar is drawn when standard output is a terminal and the work is big enough to wait
for; piped or redirected output (CI, ``> file``, ``| jq``) gets no bar and no escape codes.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextmanager
def progress_bar(description: str, total: int, minimum: int = 1) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``: a bar of ``total`` steps when stdout is a terminal and
    ``total >= minimum``, else a function that does nothing.

    >>> with progress_bar("Reading", 3) as advance:
    ...     advance(3)
    """
    if total < minimum or not sys.stdout.isatty():
        yield _quiet
        return
    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda steps: bar.advance(task, steps)


def _quiet(steps: int) -> None:
    """Progress nobody watches."""
