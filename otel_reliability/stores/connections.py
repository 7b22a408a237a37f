"""The one way this project connects to SQLite and to PostgreSQL.

Results, standings and paused runs may live in the same database, opened by several
threads and processes at once, so every connection is opened alike:

- SQLite: WAL (readers never block the writer), ``synchronous=NORMAL`` (durable at each
  checkpoint, not each commit, which WAL makes safe against corruption), autocommit
  (each store begins its own transactions), usable from any thread (each store guards
  its connection with a lock), and one busy timeout: a writer waits up to
  ``BUSY_TIMEOUT_S`` for another process's transaction instead of failing.
- PostgreSQL: psycopg 3 in autocommit, with a clear error when psycopg is not installed;
  a store's session replaces a connection the server dropped (a restart, a failover).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

__all__ = ["BUSY_TIMEOUT_S", "PostgresSession", "connect_postgres", "connect_sqlite", "create_tables"]

T = TypeVar("T")

BUSY_TIMEOUT_S = 60.0
_DDL_LOCK = 0x6F74656C72656C69  # any constant: the advisory lock that serialises table creation


def connect_sqlite(path: str | Path) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` (created; its folder must exist: ``opening``),
    or ``":memory:"``.

    >>> connect_sqlite(":memory:").execute("PRAGMA synchronous").fetchone()
    (1,)
    """
    connection = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def connect_postgres(url: str) -> Any:
    """An autocommit psycopg 3 connection to ``url``; a server that cannot be reached is a
    ``ConnectionError`` (an ``OSError``, as a file that cannot be opened is)."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("a postgresql:// store needs psycopg 3: pip install 'otel-reliability[postgres]'") from exc
    try:
        return psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:  # the message names host and port, never the password
        raise ConnectionError(f"cannot connect to the PostgreSQL store: {str(exc).strip()}") from exc


def create_tables(connection: Any, ddl: str) -> None:
    """Run ``ddl`` (statements separated by ``;``) on a PostgreSQL connection, holding an
    advisory lock: ``CREATE … IF NOT EXISTS`` from processes starting together can still
    collide in PostgreSQL's catalogue."""
    connection.execute("SELECT pg_advisory_lock(%s)", (_DDL_LOCK,))
    try:
        for statement in filter(str.strip, ddl.split(";")):
            connection.execute(statement)
    finally:
        connection.execute("SELECT pg_advisory_unlock(%s)", (_DDL_LOCK,))


class PostgresSession:
    """One store's connection to ``url``, shared by its threads under a lock.

    When the server drops the connection (a restart, a failover, an idle timeout), the work
    that found it broken runs once more on a new connection, so a receiver's stores outlive
    a database restart. The work given to ``run`` must be safe to repeat: an upsert, a
    transaction that either committed or did not.
    """

    def __init__(self, url: str, ddl: str = "") -> None:
        self._url = url
        self._lock = threading.Lock()
        self._closed = False
        self._db = connect_postgres(url)
        if ddl:
            create_tables(self._db, ddl)

    def run(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` under the lock, retried once on a new connection if the old one broke."""
        import psycopg

        with self._lock:
            if self._closed:
                raise ValueError("the PostgreSQL store is closed")
            try:
                return work(self._db)
            except psycopg.OperationalError:
                if not self._db.broken:
                    raise
            self._db = connect_postgres(self._url)
            return work(self._db)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()
