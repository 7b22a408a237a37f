"""The protocol every results store implements, and what the stores share."""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Protocol

from otel_reliability.jsontext import encode_stored
from otel_reliability.results import RunResult, span_hex, trace_hex
from otel_reliability.session_results import SESSION_KEY_PREFIX, SESSION_KIND, SessionResult


class Superseded(NamedTuple):
    """A run whose stored verdict a judgement of its trace made void: it is no longer a
    top-level run (judged before its parent run arrived, or continued by a later run span).
    A verdict stored for it later than ``at`` stands."""

    trace_id: int
    run_span_id: int
    at: float  # unix seconds: when the superseding judgement was made

    def key(self) -> tuple[str, str]:
        """``(trace_id, run_span_id)`` in hex, as the stores' rows hold them.

        >>> Superseded(1, 2, 0.0).key()
        ('00000000000000000000000000000001', '0000000000000002')
        """
        return trace_hex(self.trace_id), span_hex(self.run_span_id)


class ResultStore(Protocol):
    def add(self, result: RunResult) -> None:
        """Keep ``result``, superseding an earlier verdict for the same run."""
        ...

    def add_many(self, results: Iterable[RunResult], superseded: Iterable[Superseded] = ()) -> None:
        """Keep several results at once, and drop the verdicts of ``superseded`` runs stored no
        later than their ``at``, so that a re-judged trace's verdicts are replaced as a set
        (one transaction where the store has them)."""
        ...

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
        """Results newest first. ``trace_id`` as an int or hex, ``status`` ``PASSED``/``FAILED``
        (any case), ``since`` unix seconds (inclusive), ``limit`` ``None`` for all,
        ``agent_version`` the agent's version the results name. Run results only, unless
        ``session_id`` asks for that session's result (``SessionResult``)."""
        ...

    def close(self) -> None: ...


UNENCODABLE = "unencodable"  # a value the store cannot write (text that is not valid Unicode, a NUL for PostgreSQL)


def record_fault(exc: BaseException) -> str | None:
    """Why a store refused a write for what the records hold — it would refuse them again,
    so only the records at fault are lost — or None when the failure may pass (the store is
    unreachable, locked, full) and the same write may succeed later.

    >>> record_fault(UnicodeEncodeError("utf-8", "\\ud800", 0, 1, "surrogates not allowed")), record_fault(OSError())
    ('unencodable', None)
    """
    if isinstance(exc, (UnicodeError, OverflowError)):
        return UNENCODABLE
    import sqlite3

    if isinstance(exc, (sqlite3.DataError, sqlite3.InterfaceError)):
        return UNENCODABLE
    if type(exc).__module__.startswith("psycopg"):
        import psycopg

        if isinstance(exc, psycopg.DataError):
            return UNENCODABLE
    return None


def passing_fault(exc: BaseException) -> str | None:
    """Why a store failed when the failure may pass and the same write succeed later — its
    server unreachable or restarting (``unreachable``), its disk full (``disk_full``), another
    writer holding it past the busy timeout (``locked``) — or None for any other failure.

    >>> passing_fault(ConnectionError("refused")), passing_fault(ValueError())
    ('unreachable', None)
    """
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "disk_full" if "full" in text else "locked" if "locked" in text or "busy" in text else "unreachable"
    if isinstance(exc, OSError):
        return "disk_full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "unreachable"
    if type(exc).__module__.startswith("psycopg"):
        import psycopg

        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
            return "unreachable"
    return None


def normalise_trace_id(trace_id: int | str | None) -> int | None:
    """A trace id filter as an int; a string is read as hex.

    >>> normalise_trace_id("ff")
    255
    """
    return int(trace_id, 16) if isinstance(trace_id, str) else trace_id


def result_row(record: dict[str, Any]) -> tuple[Any, ...]:
    """The SQL row of a ``RunResult.to_record()`` (SQLite's ``results``, PostgreSQL's
    ``reliability_results``): its columns come from the record, which has the ids in hex. A
    session's row is keyed ``session:<id>`` with no run span, so that it supersedes itself."""
    session = record.get("kind") == SESSION_KIND
    return (
        SESSION_KEY_PREFIX + record["session_id"] if session else record["trace_id"],
        "" if session else record["run_span_id"],
        record["agent"],
        record["expectation"],
        record["eval_status"],
        record["score"],
        record["evaluated_at"],
        encode_stored(record),
        record.get("agent_version"),
    )


def result_filter(
    placeholder: str,
    trace_id: int | str | None,
    agent: str | None,
    status: str | None,
    since: float | None,
    session_id: str | None = None,
    agent_version: str | None = None,
) -> tuple[str, list[object]]:
    """The ``WHERE`` clause and its parameters for a SQL store's ``query``, with the driver's
    ``placeholder`` (``?`` for sqlite3, ``%s`` for psycopg): run results, or the one session.

    >>> result_filter("?", None, "calc", "passed", None)
    (' WHERE trace_id NOT LIKE ? AND agent = ? AND status = ?', ['session:%', 'calc', 'PASSED'])
    """
    trace = normalise_trace_id(trace_id)
    where: list[str]
    params: list[object]
    if session_id is None:
        where, params = [f"trace_id NOT LIKE {placeholder}"], [SESSION_KEY_PREFIX + "%"]
    else:
        where, params = [f"trace_id = {placeholder}"], [SESSION_KEY_PREFIX + session_id]
    for column, value in (
        ("trace_id =", None if trace is None else trace_hex(trace)),
        ("agent =", agent),
        ("status =", None if status is None else status.upper()),
        ("evaluated_at >=", since),
        ("agent_version =", agent_version),
    ):
        if value is not None:
            where.append(f"{column} {placeholder}")
            params.append(value)
    return " WHERE " + " AND ".join(where), params
