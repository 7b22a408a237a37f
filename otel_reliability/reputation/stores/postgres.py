"""Standings in PostgreSQL through psycopg 3, for receivers and apps that share them.

Each update locks the agent's standings row (``SELECT … FOR UPDATE``) for its
transaction, so writers of the same agent queue in order and writers of different
agents proceed side by side. The tables are created on first use, under an advisory
lock so that processes starting together do not race on the DDL.
"""

from __future__ import annotations

from typing import Any

from otel_reliability.reputation.config import ReputationConfig
from otel_reliability.reputation.stores.sql import ADDED_COLUMNS, SQLStandings, evaluations_ddl

_DDL = evaluations_ddl("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BOOLEAN")
_DDL_LOCK = 0x6F74656C72657075  # any constant: the advisory lock that serialises table creation


class PostgresStandings(SQLStandings):
    """Standings in a PostgreSQL database named by a ``postgresql://`` URL."""

    _placeholder = "%s"
    _lock_suffix = " FOR UPDATE"

    def _batch(self) -> Any:
        return self._connection.pipeline()

    def __init__(self, url: str, config: ReputationConfig | None = None) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError("a postgresql:// store needs psycopg 3: pip install 'otel-reliability[postgres]'") from exc
        super().__init__(config or ReputationConfig())
        self._connection = psycopg.connect(url, autocommit=True)
        self._connection.execute("SELECT pg_advisory_lock(%s)", (_DDL_LOCK,))
        try:
            for statement in filter(str.strip, _DDL.split(";")):
                self._connection.execute(statement)
            for table, column, kind in ADDED_COLUMNS:
                self._connection.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")
        finally:
            self._connection.execute("SELECT pg_advisory_unlock(%s)", (_DDL_LOCK,))
