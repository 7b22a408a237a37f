"""Paused runs beside SQLite results: the twin of ``paused.PostgresPausedRuns``.

A run that ended waiting on calls (a human's approval) may be resumed minutes later, in
another trace, after the receiver that judged it paused was killed: its paused run must be
found after the restart, as its verdict is. So a receiver whose results are in a SQLite file
keeps its paused runs in the same file, in the same table and rows as the PostgreSQL store
(its continuation keys and its records, ``encode_records``), and reads them back the same
way: every process that writes there (a receiver and its shards, or the receiver started
after a crash, each with a writer id of its own) learns on its judge tick what the others
paused since it last looked, oldest first. A write takes the file's lock (``BEGIN
IMMEDIATE``), so rows become visible in ``seq`` order and a reader that remembers the last
``seq`` it saw misses none. The table keeps the newest ``capacity`` runs.

>>> import tempfile, os
>>> from otel_reliability.model import Role, SpanRecord
>>> path = os.path.join(tempfile.mkdtemp(), "verdicts.db")
>>> before_the_crash, after_it = SQLitePausedRuns(path), SQLitePausedRuns(path)
>>> before_the_crash.share(["call:c1"], [SpanRecord(1, 2, 0, "run", 0, 1, Role.AGENT_RUN)])
>>> [keys for keys, _ in after_it.shared_since_last()], after_it.shared_since_last()
([['call:c1']], [])
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

from otel_reliability.model import SpanRecord
from otel_reliability.stores.connections import connect_sqlite
from otel_reliability.stores.paused import decode_records, encode_records

__all__ = ["SQLitePausedRuns"]

_DDL = """
CREATE TABLE IF NOT EXISTS reliability_paused_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    writer TEXT NOT NULL,
    keys TEXT NOT NULL,
    records TEXT NOT NULL
)
"""


class SQLitePausedRuns:
    """The paused runs of every process writing results to the SQLite file ``path``."""

    def __init__(self, path: str | Path, capacity: int = 1_000) -> None:
        self._capacity = capacity
        self._writer = uuid.uuid4().hex
        self._last_seq = 0
        self._lock = threading.Lock()
        self._db = connect_sqlite(path)
        self._db.execute(_DDL)

    def share(self, keys: list[str], records: list[SpanRecord]) -> None:
        row = (self._writer, json.dumps(keys), encode_records(records))
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._db.execute(
                    "INSERT INTO reliability_paused_runs (writer, keys, records) VALUES (?, ?, ?)", row
                ).lastrowid
                assert seq is not None  # an INSERT's rowid
                self._db.execute("DELETE FROM reliability_paused_runs WHERE seq <= ?", (seq - self._capacity,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def shared_since_last(self) -> list[tuple[list[str], list[SpanRecord]]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, writer, keys, records FROM reliability_paused_runs WHERE seq > ? ORDER BY seq DESC LIMIT ?",
                (self._last_seq, self._capacity),
            ).fetchall()
            if rows:
                self._last_seq = rows[0][0]
        return [
            (json.loads(keys), decode_records(records))
            for _, writer, keys, records in reversed(rows)
            if writer != self._writer
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()
