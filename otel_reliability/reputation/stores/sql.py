"""The standings algorithm both SQL stores share; each store supplies its connection and DDL.

One update is one transaction:

1. lock the agent's standings row (SQLite: ``BEGIN IMMEDIATE`` already holds the
   database; PostgreSQL: ``SELECT … FOR UPDATE`` on the row, created if new);
2. read the previous chain signature of the case and add the stability item;
3. insert the evaluation with its per-dimension sums, then delete what falls
   out of the window (everything older than the newest N);
4. sum the window into the standings row (one ``UPDATE … RETURNING``; the window
   index holds the tallies, so SQLite sums it without reading the table).

PostgreSQL sends the statements in a pipeline: two round trips per update.

Because step 1 serialises writers per agent, sequence numbers of one agent follow
commit order, and a concurrent history equals the sequential replay in that order.
"""

from __future__ import annotations

import json
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, cast

from otel_reliability.jsontext import encode_unicode
from otel_reliability.reputation.config import ReputationConfig
from otel_reliability.reputation.evidence import DIMENSIONS, Evidence, stability_evidence
from otel_reliability.reputation.scoring import Tally
from otel_reliability.reputation.standing import Entry, Standing, WindowEntry, standing_from
from otel_reliability.results import span_hex, trace_hex

TALLY_COLUMNS = tuple(f"{d}_{part}" for d in DIMENSIONS for part in ("weight", "passed", "items"))
_TALLIES = ", ".join(TALLY_COLUMNS)
_SUMS = ", ".join(f"COALESCE(SUM({c}), 0)" for c in TALLY_COLUMNS)
_STANDING_COLUMNS = f"agent, evaluations, total_evaluations, passed_evaluations, updated_at, last_seq, {_TALLIES}"


class SQLStandings:
    """Standings in SQL tables ``reputation_evaluations``, ``reputation_signatures``, ``reputation_standings``.

    Subclasses set ``_connection`` (autocommit), ``_placeholder``, ``_begin`` and
    ``_lock_suffix``, and create the tables.
    """

    _placeholder = "?"
    _begin = "BEGIN"
    _lock_suffix = ""

    def __init__(self, config: ReputationConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._connection: Any = None

    # -- the protocol ---------------------------------------------------------------

    def append(self, entry: Entry) -> Standing:
        with self._lock, self._batch(), self._transaction():
            total, passed, previous = self._lock_agent(entry.agent, entry.case)
            update_case = True
            if entry.supersedes and (replaced := self._take_superseded(entry)) is not None:
                total, passed = total - 1, passed - replaced.passed
                previous, update_case = replaced.previous_signature, replaced.latest_of_case
            self._insert(entry, previous, update_case)
            self._evict([entry.agent])
            return self._refresh(entry.agent, total + 1, passed + (entry.passed is True), entry.evaluated_at)

    def append_many(self, entries: Sequence[Entry]) -> dict[str, Standing]:
        """Append evaluations in one transaction, in order; the same result as appending them one by one.

        Agents are locked in name order, so concurrent batches cannot deadlock. Returns
        each agent's new standing.
        """
        if not entries:
            return {}
        with self._lock, self._batch(), self._transaction():
            agents = sorted({e.agent for e in entries})
            cursor = self._connection.cursor()
            cursor.executemany(self._sql(_CREATE_STANDING), [(agent,) for agent in agents])
            cases = sorted({(e.agent, e.case) for e in entries if e.case is not None})
            standing_rows, signature_rows = self._first_rows(
                (_LOCK_STANDING + self._lock_suffix, [(agent,) for agent in agents]), (_READ_SIGNATURE, cases)
            )
            counters = {agent: list(map(int, row)) for agent, row in zip(agents, standing_rows, strict=True)}
            signatures: dict[tuple[str, str | None], Any] = {
                pair: None if row is None else row[0] for pair, row in zip(cases, signature_rows, strict=True)
            }
            last_at: dict[str, float] = {}
            rows: list[tuple[Any, ...]] = []
            runs_in_rows: set[tuple[str, int | None, int | None]] = set()
            changed: set[tuple[str, str]] = set()
            for entry in entries:
                key = (entry.agent, entry.case)
                previous, update_case = signatures.get(key), True
                run = (entry.agent, entry.trace_id, entry.run_span_id)
                if entry.supersedes and run in runs_in_rows:  # it replaces an entry of this batch: written first
                    cursor.executemany(self._sql(_INSERT_EVALUATION), rows)
                    rows.clear()
                    runs_in_rows.clear()
                if entry.supersedes and (replaced := self._take_superseded(entry)) is not None:
                    counters[entry.agent][0] -= 1
                    counters[entry.agent][1] -= replaced.passed
                    previous, update_case = replaced.previous_signature, replaced.latest_of_case
                rows.append(_row(entry, previous))
                runs_in_rows.add(run)
                if update_case and entry.case is not None and entry.signature is not None:
                    signatures[key] = entry.signature
                    changed.add((entry.agent, entry.case))
                counters[entry.agent][0] += 1
                counters[entry.agent][1] += entry.passed is True
                last_at[entry.agent] = entry.evaluated_at
            cursor.executemany(self._sql(_INSERT_EVALUATION), rows)
            for agent, case in sorted(changed):
                self._run(_UPSERT_SIGNATURE, (agent, case, signatures[(agent, case)]))
            self._evict(agents)
            return {agent: self._refresh(agent, counters[agent][0], counters[agent][1], last_at[agent]) for agent in agents}

    def amend(
        self, agent: str, trace_id: int | None, run_span_id: int | None, evidence: Sequence[Evidence], evaluated_at: float
    ) -> Standing:
        with self._lock, self._batch(), self._transaction():
            total, passed, _ = self._lock_agent(agent, None)
            row = None
            if trace_id is not None and run_span_id is not None:
                row = self._one(
                    "SELECT seq, evidence FROM reputation_evaluations WHERE agent = ? AND trace_id = ? AND run_span_id = ?",
                    (agent, trace_hex(trace_id), span_hex(run_span_id)),
                )
            if row is None:
                self._insert(Entry(agent, tuple(evidence), evaluated_at, trace_id, run_span_id), None)
                self._evict([agent])
                return self._refresh(agent, total + 1, passed, evaluated_at)
            items = [Evidence.from_json(e) for e in json.loads(row[1])] + list(evidence)
            sets = ", ".join(f"{c} = ?" for c in TALLY_COLUMNS)
            self._run(
                f"UPDATE reputation_evaluations SET {sets}, evidence = ? WHERE seq = ?",
                (*_tally_values(items), _evidence_json(items), row[0]),
            )
            return self._refresh(agent, total, passed, evaluated_at)

    def standing(self, agent: str) -> Standing | None:
        with self._lock:
            self._reconnect_if_broken()
            row = self._one(f"SELECT {_STANDING_COLUMNS} FROM reputation_standings WHERE agent = ?", (agent,))
        return None if row is None or row[5] == 0 else self._standing(row)

    def standings(self) -> list[Standing]:
        with self._lock:
            self._reconnect_if_broken()
            rows = self._all(f"SELECT {_STANDING_COLUMNS} FROM reputation_standings WHERE last_seq > 0 ORDER BY agent", ())
        return [self._standing(row) for row in rows]

    def window(self, agent: str, limit: int | None = None) -> list[WindowEntry]:
        sql = (
            "SELECT seq, agent, evaluated_at, evidence, trace_id, run_span_id, expectation, passed "
            "FROM reputation_evaluations WHERE agent = ? ORDER BY seq DESC"
        )
        params: tuple[Any, ...] = (agent,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        with self._lock:
            self._reconnect_if_broken()
            rows = self._all(sql, params)
        return [
            WindowEntry(
                seq=row[0],
                agent=row[1],
                evaluated_at=row[2],
                evidence=[Evidence.from_json(e) for e in json.loads(row[3])],
                trace_id=None if row[4] is None else int(row[4], 16),
                run_span_id=None if row[5] is None else int(row[5], 16),
                expectation=row[6],
                passed=None if row[7] is None else bool(row[7]),
            )
            for row in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    # -- steps ----------------------------------------------------------------------

    def _lock_agent(self, agent: str, case: str | None) -> tuple[int, int, str | None]:
        """Take the agent's lock for this transaction; return (total, passed) so far and the
        chain signature the case's previous run left.

        The signature is read by a statement of its own, after the lock: under READ
        COMMITTED a statement that waited for a lock still reads other tables as they
        were when it started, so a subquery of the locking statement could miss the
        signature the previous lock holder just committed.
        """
        self._run(_CREATE_STANDING, (agent,))
        (locked,), (signature,) = self._first_rows(
            (_LOCK_STANDING + self._lock_suffix, [(agent,)]), (_READ_SIGNATURE, [(agent, case)])
        )
        return int(locked[0]), int(locked[1]), None if signature is None else signature[0]

    def _insert(self, entry: Entry, previous: str | None, update_case: bool = True) -> None:
        """Insert the evaluation (with its stability item, given the case's previous signature)."""
        if update_case and entry.case is not None and entry.signature is not None:
            self._run(_UPSERT_SIGNATURE, (entry.agent, entry.case, entry.signature))
        self._run(_INSERT_EVALUATION, _row(entry, previous))

    def _take_superseded(self, entry: Entry) -> _Replaced | None:
        """Delete the entry ``entry`` supersedes (same agent, trace and run span), if still in the window."""
        if entry.trace_id is None or entry.run_span_id is None:
            return None
        row = self._one(
            "SELECT seq, passed, previous_signature FROM reputation_evaluations "
            "WHERE agent = ? AND trace_id = ? AND run_span_id = ? ORDER BY seq DESC LIMIT 1",
            (entry.agent, trace_hex(entry.trace_id), span_hex(entry.run_span_id)),
        )
        if row is None:
            return None
        seq, passed, previous = row
        later = None
        if entry.case is not None:  # a later run of the same case left the signature its successors compare with
            later = self._one(
                "SELECT seq FROM reputation_evaluations WHERE agent = ? AND expectation = ? AND seq > ? LIMIT 1",
                (entry.agent, entry.case, seq),
            )
        self._run("DELETE FROM reputation_evaluations WHERE seq = ?", (seq,))
        return _Replaced(int(bool(passed)), previous, later is None)

    def _evict(self, agents: Sequence[str]) -> None:
        """Delete each agent's evaluations older than its newest N."""
        window = self.config.window
        self._connection.cursor().executemany(self._sql(_EVICT), [(agent, agent, window) for agent in agents])

    def _refresh(self, agent: str, total: int, passed: int, evaluated_at: float) -> Standing:
        """Sum the window into the standings row and return it."""
        row = self._one(
            f"UPDATE reputation_standings SET (evaluations, last_seq, {_TALLIES}) = "
            f"(SELECT COUNT(*), COALESCE(MAX(seq), 0), {_SUMS} FROM reputation_evaluations WHERE agent = ?), "
            "total_evaluations = ?, passed_evaluations = ?, updated_at = ? "
            f"WHERE agent = ? RETURNING {_STANDING_COLUMNS}",
            (agent, total, passed, evaluated_at, agent),
        )
        return self._standing(row)

    def _standing(self, row: Sequence[Any]) -> Standing:
        values = row[6:]
        tallies = {
            d: Tally(float(values[3 * i]), float(values[3 * i + 1]), int(values[3 * i + 2])) for i, d in enumerate(DIMENSIONS)
        }
        return standing_from(
            row[0],
            tallies,
            evaluations=int(row[1]),
            window=self.config.window,
            total_evaluations=int(row[2]),
            passed_evaluations=int(row[3]),
            updated_at=float(row[4]),
            last_seq=int(row[5]),
            weights=cast(Mapping[str, float], self.config.weights),  # Dimension keys are str
            missing=self.config.missing_dimension,
        )

    # -- the connection ---------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _batch(self) -> Any:
        """Where the driver can send statements without waiting for each (PostgreSQL's
        pipeline); every update starts with it, under the lock."""
        return nullcontext()

    def _reconnect_if_broken(self) -> None:
        """Before a read or an update (never inside one): replace a connection the server dropped."""

    def _sql(self, sql: str) -> str:
        return sql if self._placeholder == "?" else sql.replace("?", self._placeholder)

    def _run(self, sql: str, params: Sequence[Any]) -> Any:
        return self._connection.execute(self._sql(sql), params)

    def _one(self, sql: str, params: Sequence[Any]) -> Any:
        return self._run(sql, params).fetchone()

    def _first_rows(self, *queries: tuple[str, Sequence[Sequence[Any]]]) -> list[list[Any]]:
        """For each query ``(sql, parameter sets)``, the first row ``sql`` gives with each set.

        Every statement is sent before any row is read: one round trip in a pipeline.
        """
        cursors = [[self._run(sql, params) for params in param_sets] for sql, param_sets in queries]
        return [[cursor.fetchone() for cursor in group] for group in cursors]

    def _all(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._run(sql, params).fetchall()


_CREATE_STANDING = "INSERT INTO reputation_standings (agent) VALUES (?) ON CONFLICT (agent) DO NOTHING"
_LOCK_STANDING = "SELECT total_evaluations, passed_evaluations FROM reputation_standings WHERE agent = ?"
_READ_SIGNATURE = "SELECT signature FROM reputation_signatures WHERE agent = ? AND case_key = ?"
_EVICT = (
    "DELETE FROM reputation_evaluations WHERE agent = ? AND seq <= "
    "(SELECT seq FROM reputation_evaluations WHERE agent = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)"
)
_UPSERT_SIGNATURE = (
    "INSERT INTO reputation_signatures (agent, case_key, signature) VALUES (?, ?, ?) "
    "ON CONFLICT (agent, case_key) DO UPDATE SET signature = excluded.signature"
)
_INSERT_EVALUATION = (
    "INSERT INTO reputation_evaluations "
    f"(agent, trace_id, run_span_id, expectation, evaluated_at, passed, {_TALLIES}, evidence, previous_signature) "
    f"VALUES (?, ?, ?, ?, ?, ?, {', '.join('?' for _ in TALLY_COLUMNS)}, ?, ?)"
)


@dataclass(slots=True)
class _Replaced:
    passed: int  # 1 when the superseded verdict passed
    previous_signature: str | None  # what the superseded entry's stability item compared with
    latest_of_case: bool  # no later run of its case: the superseding signature becomes the case's


def _row(entry: Entry, previous: str | None) -> tuple[Any, ...]:
    """The evaluation's row, its stability item derived from the case's previous signature."""
    evidence = list(entry.evidence)
    if entry.case is not None and entry.signature is not None:
        item = stability_evidence(entry.case, previous, entry.signature)
        if item is not None:
            evidence.append(item)
    return (
        entry.agent,
        None if entry.trace_id is None else trace_hex(entry.trace_id),
        None if entry.run_span_id is None else span_hex(entry.run_span_id),
        entry.expectation,
        entry.evaluated_at,
        entry.passed,
        *_tally_values(evidence),
        _evidence_json(evidence),
        previous,
    )


class _Transaction:
    __slots__ = ("_store",)

    def __init__(self, store: SQLStandings) -> None:
        self._store = store

    def __enter__(self) -> None:
        self._store._connection.execute(self._store._begin)

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        self._store._connection.execute("COMMIT" if kind is None else "ROLLBACK")


_FIRST_COLUMN = {dimension: 3 * i for i, dimension in enumerate(DIMENSIONS)}


def _tally_values(evidence: Sequence[Evidence]) -> list[float | int]:
    """The ``TALLY_COLUMNS`` values: ``tally(evidence)`` summed in the same order, straight into the row."""
    values: list[float | int] = [0.0, 0.0, 0] * len(DIMENSIONS)
    for item in evidence:
        column = _FIRST_COLUMN[item.dimension]
        values[column] += item.confidence
        if item.passed:
            values[column + 1] += item.confidence
        values[column + 2] += 1
    return values


def _evidence_json(evidence: Sequence[Evidence]) -> str:
    return encode_unicode([e.to_json() for e in evidence])


# Columns added since the first release: (table, column, type), added to older databases on open.
ADDED_COLUMNS = (("reputation_evaluations", "previous_signature", "TEXT"),)


def evaluations_ddl(seq_type: str, real: str, boolean: str) -> str:
    """The three tables, in the column types of one SQL dialect."""
    tallies = ",\n    ".join(
        f"{c} {'INTEGER' if c.endswith('_items') else real} NOT NULL DEFAULT 0" for c in TALLY_COLUMNS
    )
    return f"""
CREATE TABLE IF NOT EXISTS reputation_evaluations (
    seq {seq_type},
    agent TEXT NOT NULL,
    trace_id TEXT,
    run_span_id TEXT,
    expectation TEXT,
    evaluated_at {real} NOT NULL,
    passed {boolean},
    {tallies},
    evidence TEXT NOT NULL,
    previous_signature TEXT
);
-- The window in sequence order with its tallies: summing a window reads this index alone.
CREATE INDEX IF NOT EXISTS reputation_evaluations_window ON reputation_evaluations (agent, seq, {_TALLIES});
-- What the window index replaced, in databases made before it.
DROP INDEX IF EXISTS reputation_evaluations_by_agent;
CREATE INDEX IF NOT EXISTS reputation_evaluations_by_run ON reputation_evaluations (trace_id, run_span_id);
CREATE TABLE IF NOT EXISTS reputation_signatures (
    agent TEXT NOT NULL,
    case_key TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (agent, case_key)
);
CREATE TABLE IF NOT EXISTS reputation_standings (
    agent TEXT PRIMARY KEY,
    evaluations INTEGER NOT NULL DEFAULT 0,
    total_evaluations BIGINT NOT NULL DEFAULT 0,
    passed_evaluations BIGINT NOT NULL DEFAULT 0,
    updated_at {real} NOT NULL DEFAULT 0,
    last_seq BIGINT NOT NULL DEFAULT 0,
    {tallies}
);
"""
