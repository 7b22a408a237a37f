"""Where verdicts are kept: one module per store behind the ``ResultStore`` protocol.

``open_store("results.db")`` opens SQLite (the default), ``open_store("results.jsonl")``
JSON Lines. In both, a later verdict for the same ``(trace_id, run_span_id)`` supersedes
the earlier one: the one with the latest ``evaluated_at`` wins, and on a tie the later write.
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import ResultStore, normalise_trace_id

__all__ = ["ResultStore", "normalise_trace_id", "open_store"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


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
