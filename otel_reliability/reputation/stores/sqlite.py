"""Standings in a SQLite file (WAL), by default the file the results store uses.

``BEGIN IMMEDIATE`` takes the database's write lock at the start of each update, so
updates from several processes queue behind each other (a busy timeout makes them
wait rather than fail: ``connect_sqlite``) and none is lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from otel_reliability.reputation.config import ReputationConfig
from otel_reliability.reputation.stores.sql import ADDED_COLUMNS, SQLStandings, evaluations_ddl
from otel_reliability.stores.connections import connect_sqlite

_DDL = evaluations_ddl("INTEGER PRIMARY KEY AUTOINCREMENT", "REAL", "INTEGER")


class SQLiteStandings(SQLStandings):
    """Standings in a SQLite file (``":memory:"`` for a throwaway one).

    >>> from otel_reliability.reputation.evidence import Evidence
    >>> from otel_reliability.reputation.standing import Entry
    >>> store = SQLiteStandings(":memory:", ReputationConfig(missing_dimension="renormalize"))
    >>> store.append(Entry("calc", (Evidence("isnad", "matcher", True, "met"),), 1.0)).grade.value
    'Thiqah'
    """

    _begin = "BEGIN IMMEDIATE"

    def __init__(self, path: str | Path, config: ReputationConfig | None = None) -> None:
        super().__init__(config or ReputationConfig())
        self._connection = connect_sqlite(path)
        self._connection.executescript(_DDL)
        for table, column, kind in ADDED_COLUMNS:
            if column not in {row[1] for row in self._connection.execute(f"PRAGMA table_info({table})")}:
                self._connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    def _first_rows(self, *queries: tuple[str, Sequence[Sequence[Any]]]) -> list[list[Any]]:
        # Each row is read before the next statement runs: there is no pipeline to fill, and a
        # cursor left unread keeps its statement busy, so sqlite3 would compile the SQL anew
        # for the next parameter set (several times the cost of running it).
        return [[self._one(sql, params) for params in param_sets] for sql, param_sets in queries]
