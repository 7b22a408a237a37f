"""The default results store: one SQLite file in WAL mode.

One connection per store guarded by a lock, so a store is safe to share between
threads; several processes can write the same file (``connect_sqlite``: WAL, and a busy
timeout so a writer waits for another instead of failing).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Iterable

from otel_reliability.results import RunResult
from otel_reliability.session_results import SessionResult, stored_result
from otel_reliability.stores.base import Superseded, result_filter, result_row
from otel_reliability.stores.connections import connect_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    trace_id TEXT NOT NULL,
    run_span_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    expectation TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL NOT NULL,
    evaluated_at REAL NOT NULL,
    verdict TEXT NOT NULL,
    agent_version TEXT,
    PRIMARY KEY (trace_id, run_span_id)
);
CREATE INDEX IF NOT EXISTS results_by_time ON results (evaluated_at);
CREATE INDEX IF NOT EXISTS results_by_agent ON results (agent, evaluated_at);
CREATE INDEX IF NOT EXISTS results_by_status ON results (status, evaluated_at);
"""
# Added after the table's first release: a file created before gains it (null: version unknown).
_ADDED = "ALTER TABLE results ADD COLUMN agent_version TEXT"
_VERSION_INDEX = "CREATE INDEX IF NOT EXISTS results_by_version ON results (agent_version, evaluated_at)"

_UPSERT = """
INSERT INTO results (trace_id, run_span_id, agent, expectation, status, score, evaluated_at, verdict, agent_version)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (trace_id, run_span_id) DO UPDATE SET
    agent = excluded.agent, expectation = excluded.expectation, status = excluded.status,
    score = excluded.score, evaluated_at = excluded.evaluated_at, verdict = excluded.verdict,
    agent_version = excluded.agent_version
WHERE excluded.evaluated_at >= results.evaluated_at
"""
_DELETE_SUPERSEDED = "DELETE FROM results WHERE trace_id = ? AND run_span_id = ? AND evaluated_at <= ?"


class SQLiteStore:
    """Results in a SQLite file (``":memory:"`` for a throwaway one).

    >>> from otel_reliability.model import Verdict
    >>> store = SQLiteStore(":memory:")
    >>> store.add(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 5.0))
    >>> [r.agent for r in store.query(status="passed")]
    ['calc']
    """

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = connect_sqlite(path)
        self._db.executescript(_SCHEMA)
        if "agent_version" not in {row[1] for row in self._db.execute("PRAGMA table_info(results)")}:
            self._db.execute(_ADDED)
        self._db.execute(_VERSION_INDEX)

    def add(self, result: RunResult) -> None:
        self.add_many([result])

    def add_many(self, results: Iterable[RunResult | SessionResult], superseded: Iterable[Superseded] = ()) -> None:
        rows = [result_row(result.to_record()) for result in results]
        void = [(*run.key(), run.at) for run in superseded]
        with self._lock:
            if len(rows) == 1 and not void:
                self._db.execute(_UPSERT, rows[0])
                return
            self._db.execute("BEGIN IMMEDIATE")  # one commit for the batch, not one per verdict
            try:
                self._db.executemany(_DELETE_SUPERSEDED, void)
                self._db.executemany(_UPSERT, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(
        self,
        *,
        trace_id: int | str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: float | None = None,
        limit: int | None = 100,
        session_id: str | None = None,
        agent_version: str | None = None,
    ) -> list[RunResult | SessionResult]:
        where, params = result_filter("?", trace_id, agent, status, since, session_id, agent_version)
        sql = "SELECT verdict FROM results" + where
        sql += " ORDER BY evaluated_at DESC, rowid DESC LIMIT ?"
        params.append(-1 if limit is None else limit)
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [stored_result(json.loads(verdict)) for (verdict,) in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

