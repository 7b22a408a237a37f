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
from otel_reliability.stores.connections import connect_postgres, create_tables

_DDL = evaluations_ddl("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BOOLEAN")


class PostgresStandings(SQLStandings):
    """Standings in a PostgreSQL database named by a ``postgresql://`` URL."""

    _placeholder = "%s"
    _lock_suffix = " FOR UPDATE"

    def _batch(self) -> Any:
        self._reconnect_if_broken()
        return self._connection.pipeline()

    def _reconnect_if_broken(self) -> None:
        """A restarted server dropped the connection: the next update or read opens a new one
        (the one that found it broken failed, and its verdicts are held and offered again)."""
        if self._connection.broken and not self._closed:
            self._connection = connect_postgres(self._url)

    def close(self) -> None:
        self._closed = True
        super().close()

    def __init__(self, url: str, config: ReputationConfig | None = None) -> None:
        super().__init__(config or ReputationConfig())
        self._url = url
        self._closed = False
        self._connection = connect_postgres(url)
        added = ";".join(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}" for table, column, kind in ADDED_COLUMNS)
        create_tables(self._connection, f"{_DDL};{added}")
