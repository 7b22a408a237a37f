"""Where verdicts are kept: one module per store behind the ``ResultStore`` protocol.

``open_store("results.db")`` opens SQLite (the default), ``open_store("results.jsonl")``
JSON Lines. In both, a later verdict for the same ``(trace_id, run_span_id)`` supersedes
the earlier one: the one with the latest ``evaluated_at`` wins, and on a tie the later write.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Protocol

from otel_reliability.results import RunResult

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class ResultStore(Protocol):
    def add(self, result: RunResult) -> None:
        """Keep ``result``, superseding an earlier verdict for the same run."""
        ...

    def add_many(self, results: Iterable[RunResult]) -> None:
        """Keep several results at once (one transaction where the store has them)."""
        ...

    def query(
        self,
        *,
        trace_id: int | str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: float | None = None,
        limit: int | None = 100,
    ) -> list[RunResult]:
        """Results newest first. ``trace_id`` as an int or hex, ``status`` ``PASSED``/``FAILED``
        (any case), ``since`` unix seconds (inclusive), ``limit`` ``None`` for all."""
        ...

    def close(self) -> None: ...


def open_store(spec: str | Path) -> ResultStore:
    """Open the store ``spec`` names: a ``.jsonl`` path is JSON Lines, any other path SQLite.

    >>> open_store("postgresql://db/results")
    Traceback (most recent call last):
    ...
    ValueError: results store scheme 'postgresql' is not supported yet; give a file path (.jsonl for JSON Lines, anything else for SQLite)
    """
    scheme = _SCHEME.match(str(spec))
    if scheme:
        raise ValueError(
            f"results store scheme {scheme.group(1)!r} is not supported yet; "
            "give a file path (.jsonl for JSON Lines, anything else for SQLite)"
        )
    path = Path(spec)
    if path.suffix.lower() == ".jsonl":
        from otel_reliability.stores.jsonl import JsonLinesStore

        return JsonLinesStore(path)
    from otel_reliability.stores.sqlite import SQLiteStore

    return SQLiteStore(path)


def normalise_trace_id(trace_id: int | str | None) -> int | None:
    """A trace id filter as an int; a string is read as hex.

    >>> normalise_trace_id("ff")
    255
    """
    return int(trace_id, 16) if isinstance(trace_id, str) else trace_id
