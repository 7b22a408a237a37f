"""Results in PostgreSQL through psycopg 3, for receivers and apps that share them.

The table ``reliability_results`` holds one row per run, as SQLite's ``results`` does: a
later verdict for the same ``(trace_id, run_span_id)`` replaces the row when its
``evaluated_at`` is as late or later (``INSERT … ON CONFLICT DO UPDATE … WHERE``, which
PostgreSQL applies under the row's lock, so concurrent writers of one run agree), and
``seq`` keeps the order of first writes that breaks ties between equal times, as SQLite's
rowid does. A superseded run's row is deleted in the same transaction as the verdicts that
void it. Tables are created on first use under an advisory lock, so that processes
starting together do not race on the DDL.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from otel_reliability.results import RunResult
from otel_reliability.session_results import SessionResult, stored_result
from otel_reliability.stores.base import Superseded, result_filter, result_row
from otel_reliability.stores.connections import PostgresSession

_DDL = """
CREATE TABLE IF NOT EXISTS reliability_results (
    seq BIGSERIAL NOT NULL,
    trace_id TEXT NOT NULL,
    run_span_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    expectation TEXT NOT NULL,
    status TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    evaluated_at DOUBLE PRECISION NOT NULL,
    verdict TEXT NOT NULL,
    agent_version TEXT,
    PRIMARY KEY (trace_id, run_span_id)
);
CREATE INDEX IF NOT EXISTS reliability_results_by_time ON reliability_results (evaluated_at, seq);
CREATE INDEX IF NOT EXISTS reliability_results_by_agent ON reliability_results (agent, evaluated_at);
CREATE INDEX IF NOT EXISTS reliability_results_by_status ON reliability_results (status, evaluated_at);
ALTER TABLE reliability_results ADD COLUMN IF NOT EXISTS agent_version TEXT;
CREATE INDEX IF NOT EXISTS reliability_results_by_version ON reliability_results (agent_version, evaluated_at)
"""

_UPSERT = """
INSERT INTO reliability_results (trace_id, run_span_id, agent, expectation, status, score, evaluated_at, verdict, agent_version)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (trace_id, run_span_id) DO UPDATE SET
    agent = excluded.agent, expectation = excluded.expectation, status = excluded.status,
    score = excluded.score, evaluated_at = excluded.evaluated_at, verdict = excluded.verdict,
    agent_version = excluded.agent_version
WHERE excluded.evaluated_at >= reliability_results.evaluated_at
"""
_DELETE_SUPERSEDED = (
    "DELETE FROM reliability_results WHERE trace_id = %s AND run_span_id = %s AND evaluated_at <= %s"
)


class PostgresStore:
    """Results in the PostgreSQL database a ``postgresql://`` URL names.

    One connection per store guarded by a lock, so a store is safe to share between threads;
    one the server dropped is replaced (``PostgresSession``).

    >>> from otel_reliability.model import Verdict
    >>> store = PostgresStore("postgresql://reliability@db.internal/reliability")  # doctest: +SKIP
    >>> store.add(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 5.0))  # doctest: +SKIP
    >>> [r.agent for r in store.query(status="passed")]  # doctest: +SKIP
    ['calc']
    """

    def __init__(self, url: str) -> None:
        self._session = PostgresSession(url, _DDL)

    def add(self, result: RunResult) -> None:
        self.add_many([result])

    def add_many(self, results: Iterable[RunResult | SessionResult], superseded: Iterable[Superseded] = ()) -> None:
        rows = [result_row(result.to_record()) for result in results]
        void = [(*run.key(), run.at) for run in superseded]
        if rows or void:
            self._session.run(lambda db: _upsert(db, rows, void))

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
        where, params = result_filter("%s", trace_id, agent, status, since, session_id, agent_version)
        sql = "SELECT verdict FROM reliability_results" + where
        sql += " ORDER BY evaluated_at DESC, seq DESC LIMIT %s"  # LIMIT NULL: no limit
        params.append(limit)
        rows = self._session.run(lambda db: db.execute(sql, params).fetchall())
        return [stored_result(json.loads(verdict)) for (verdict,) in rows]

    def close(self) -> None:
        self._session.close()


def _upsert(db: Any, rows: list[tuple[Any, ...]], void: list[tuple[Any, ...]]) -> None:
    if len(rows) == 1 and not void:
        db.execute(_UPSERT, rows[0])
        return
    with db.transaction():  # one commit for the batch and the verdicts it voids; executemany pipelines
        cursor = db.cursor()
        if void:
            cursor.executemany(_DELETE_SUPERSEDED, void)
        if rows:
            cursor.executemany(_UPSERT, rows)
