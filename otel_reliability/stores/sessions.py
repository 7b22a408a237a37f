"""Session turns in PostgreSQL, shared by the receivers that write results there.

Behind a Collector that routes by trace id, the traces of one conversation reach different
receivers, each judging the runs it holds. Every receiver shares the turns it judged
(``share``); when a session looks idle to one of them it gathers every receiver's turns and
the time since the newest arrived anywhere (``gather``, on the database's clock, the one
clock they all read), and judges the session only if it is idle everywhere. Two receivers
that both find it idle with the same turns judge it once: the first to ``claim`` that
digest of the turns judges, the other leaves it (a later turn gives a new digest).

Rows older than ``retention`` seconds (two ``session_idle``: by then every receiver has
judged and closed the session) are deleted when a claim is made.
"""

from __future__ import annotations

import json
from typing import Any

from otel_reliability.engine.sessions import Turn
from otel_reliability.model import Attempt
from otel_reliability.results import span_hex, trace_hex
from otel_reliability.stores.connections import PostgresSession

__all__ = ["PostgresSessions", "decode_turn", "encode_turn"]

_DDL = """
CREATE TABLE IF NOT EXISTS reliability_session_turns (
    session_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    run_span_id TEXT NOT NULL,
    turn TEXT NOT NULL,
    arrived_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, trace_id, run_span_id)
);
CREATE INDEX IF NOT EXISTS reliability_session_turns_by_time ON reliability_session_turns (arrived_at);
CREATE TABLE IF NOT EXISTS reliability_session_claims (
    session_id TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    claimed_at DOUBLE PRECISION NOT NULL
)
"""
_NOW = "extract(epoch FROM clock_timestamp())"
_SHARE = f"""
INSERT INTO reliability_session_turns VALUES (%s, %s, %s, %s, {_NOW})
ON CONFLICT (session_id, trace_id, run_span_id) DO UPDATE SET turn = excluded.turn, arrived_at = excluded.arrived_at
"""
_CLAIM = f"""
INSERT INTO reliability_session_claims VALUES (%s, %s, {_NOW})
ON CONFLICT (session_id) DO UPDATE SET digest = excluded.digest, claimed_at = excluded.claimed_at
WHERE reliability_session_claims.digest <> excluded.digest
RETURNING session_id
"""


class PostgresSessions:
    """The session turns of every receiver that shares the database ``url``.

    Safe to share between threads (``PostgresSession``: one connection, guarded by a lock).

    For example (not a doctest: it needs a PostgreSQL server; ``tests/test_sessions.py`` runs
    one)::

        shared = PostgresSessions("postgresql://reliability@db.internal/reliability", retention=600)
        shared.claim("conv-1", "digest-of-its-turns"), shared.claim("conv-1", "digest-of-its-turns")
        # (True, False)
    """

    def __init__(self, url: str, retention: float) -> None:
        self._retention = retention
        self._session = PostgresSession(url, _DDL)

    def share(self, session_id: str, turn: Turn) -> None:
        row = (session_id, trace_hex(turn.trace_id), span_hex(turn.run_span_id), encode_turn(turn))
        self._session.run(lambda db: db.execute(_SHARE, row))

    def gather(self, session_id: str) -> tuple[list[Turn], float]:
        def read(db: Any) -> tuple[list[Any], float]:
            rows = db.execute(
                f"SELECT turn, {_NOW} - arrived_at FROM reliability_session_turns WHERE session_id = %s", (session_id,)
            ).fetchall()
            return rows, min((float(quiet) for _, quiet in rows), default=float("inf"))

        rows, quiet = self._session.run(read)
        return [decode_turn(text) for text, _ in rows], quiet

    def claim(self, session_id: str, digest: str) -> bool:
        def claim(db: Any) -> bool:
            with db.transaction():
                won = db.execute(_CLAIM, (session_id, digest)).fetchone() is not None
                db.execute(f"DELETE FROM reliability_session_turns WHERE arrived_at < {_NOW} - %s", (self._retention,))
                db.execute(f"DELETE FROM reliability_session_claims WHERE claimed_at < {_NOW} - %s", (self._retention,))
            return won

        return self._session.run(claim)

    def close(self) -> None:
        self._session.close()


def encode_turn(turn: Turn) -> str:
    """A turn as JSON (attempts as arrays of their fields, in declaration order).

    >>> from otel_reliability.model import OK
    >>> turn = Turn(1, 2, "bot", "run", {"tier": ("a", "b")}, 5, 9, [Attempt("t", {"x": 1}, OK, "bot", ("bot",))], ((1, 1),))
    >>> decode_turn(encode_turn(turn)) == turn
    True
    """
    return json.dumps([
        turn.trace_id, turn.run_span_id, turn.agent, turn.span_name, dict(turn.attributes), turn.start_ns, turn.end_ns,
        [[a.tool, a.arguments, a.outcome, a.agent, list(a.agent_path), a.call_id, a.span_id, a.error, a.start_ns,
          a.arguments_captured] for a in turn.evidence],
        [list(key) for key in turn.continues],
    ], separators=(",", ":"), default=str)  # fmt: skip


def decode_turn(text: str) -> Turn:
    trace_id, run_span_id, agent, span_name, attributes, start_ns, end_ns, evidence, continues = json.loads(text)
    return Turn(
        trace_id, run_span_id, agent, span_name,
        {key: tuple(value) if isinstance(value, list) else value for key, value in attributes.items()},
        start_ns, end_ns,
        [Attempt(tool, arguments, outcome, who, tuple(path), call_id, span_id, error, start, captured)
         for tool, arguments, outcome, who, path, call_id, span_id, error, start, captured in evidence],
        tuple((trace, span) for trace, span in continues),
    )  # fmt: skip
