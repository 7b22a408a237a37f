"""Where verdicts are kept: one module per store behind the ``ResultStore`` protocol.

``open_store`` takes a store spec (``parse_store_spec``): a file path is SQLite (the
default), a ``.jsonl`` path JSON Lines, ``sqlite:///…`` SQLite, ``postgresql://…``
PostgreSQL. In each, a later verdict for the same ``(trace_id, run_span_id)`` supersedes
the earlier one: the one with the latest ``evaluated_at`` wins, and on a tie the later write.
A re-judged trace replaces its verdicts as a set: the runs it found are no longer top-level
(``Superseded``) lose theirs.
A PostgreSQL store also holds the paused runs the receivers sharing it judged
(``open_paused_runs``) and the turns of their sessions (``open_shared_sessions``); a SQLite
file holds the paused runs of the processes writing it (``paused_sqlite``), so that they
outlive a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .base import ResultStore, Superseded, normalise_trace_id
from .opening import opening, ready_folder
from .spec import StoreSpec, StoreSpecError, parse_store_spec

if TYPE_CHECKING:
    from .paused import PostgresPausedRuns
    from .paused_sqlite import SQLitePausedRuns
    from .sessions import PostgresSessions

__all__ = [
    "ResultStore",
    "StoreSpec",
    "StoreSpecError",
    "Superseded",
    "normalise_trace_id",
    "open_paused_runs",
    "open_shared_sessions",
    "open_store",
    "parse_store_spec",
]


def open_store(spec: str | Path, *, create_parents: bool = True) -> ResultStore:
    """Open the results store ``spec`` names; a ``StoreSpecError`` naming the spec and the
    reason when it cannot be opened (``opening``). A file's missing folder is created unless
    ``create_parents`` is False (what ``serve`` and ``demo`` pass without ``--mkdir``).

    >>> open_store("s3://bucket/results")
    Traceback (most recent call last):
    ...
    otel_reliability.stores.spec.StoreSpecError: results store 's3://bucket/results': scheme 's3' is not supported; give a file path (SQLite; .jsonl for JSON Lines), sqlite:///PATH or a postgresql:// URL
    """
    store = parse_store_spec(spec, "results")
    ready_folder(spec, store, "results", create_parents)
    with opening(spec, "results"):
        if store.kind == "postgres":
            from otel_reliability.stores.postgres import PostgresStore

            return PostgresStore(str(store.url))
        if store.kind == "jsonl":
            from otel_reliability.stores.jsonl import JsonLinesStore

            return JsonLinesStore(str(store.path))
        from otel_reliability.stores.sqlite import SQLiteStore

        return SQLiteStore(str(store.path))


def open_shared_sessions(spec: str | Path, session_idle: float) -> PostgresSessions | None:
    """The session turns shared through the results store ``spec`` (PostgreSQL), as
    ``open_paused_runs`` shares paused runs; ``None`` for a file.

    >>> open_shared_sessions("results.db", 300.0) is None
    True
    """
    store = parse_store_spec(spec, "results")
    if not store.shared:
        return None
    from otel_reliability.stores.sessions import PostgresSessions

    return PostgresSessions(str(store.url), retention=2 * session_idle)


def open_paused_runs(spec: str | Path, capacity: int) -> PostgresPausedRuns | SQLitePausedRuns | None:
    """The paused runs kept in the results store ``spec``, shared by every process that
    writes it: PostgreSQL (every receiver on every host), a SQLite file (a receiver and its
    shards, and the receiver started after a crash); ``None`` for a store in memory or JSON
    Lines, whose paused runs live in memory only.

    >>> open_paused_runs(":memory:", 1_000) is None, open_paused_runs("results.jsonl", 1_000) is None
    (True, True)
    """
    store = parse_store_spec(spec, "results")
    if store.kind == "sqlite" and not store.in_memory and store.path is not None:
        from otel_reliability.stores.paused_sqlite import SQLitePausedRuns

        return SQLitePausedRuns(store.path, capacity)
    if not store.shared:
        return None
    from otel_reliability.stores.paused import PostgresPausedRuns

    return PostgresPausedRuns(str(store.url), capacity)
