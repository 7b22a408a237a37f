"""Paused runs in PostgreSQL, shared by the receivers that write results there.

A run paused in a trace the Collector routed to receiver A may be resumed in a trace
routed to receiver B. A shares the paused run's records (``share``); every receiver reads
what the others shared on its judge tick (``shared_since_last``), keeps it in its own
``PausedRuns`` and judges again the traces it holds that resume it.

One row per paused run: its continuation keys and its records, in a compact JSON form
(``encode_records``). Rows are numbered by ``seq``; a writer takes a transaction-scoped
advisory lock before it inserts, so rows become visible in ``seq`` order and a reader
that remembers the last ``seq`` it saw misses none. The table keeps the newest
``capacity`` runs, as ``PausedRuns`` keeps the newest in memory.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterable

from otel_reliability.model import Role, SpanRecord, ToolRequest, ToolResponse
from otel_reliability.stores.connections import PostgresSession

__all__ = ["PostgresPausedRuns", "decode_records", "encode_records"]

_DDL = """
CREATE TABLE IF NOT EXISTS reliability_paused_runs (
    seq BIGSERIAL PRIMARY KEY,
    writer TEXT NOT NULL,
    keys TEXT NOT NULL,
    records TEXT NOT NULL
)
"""
_WRITE_LOCK = 0x6F74656C70617573  # any constant: one writer at a time, so seq order is commit order
_ROLES = {role.value: role for role in Role}


class PostgresPausedRuns:
    """The paused runs of every receiver that shares the database ``url``; this one's writes
    are told apart from the others' by a writer id of its own.

    Safe to share between threads (one connection, guarded by a lock, replaced if the server
    drops it: ``PostgresSession``).

    >>> url = "postgresql://reliability@db.internal/reliability"
    >>> here, there = PostgresPausedRuns(url), PostgresPausedRuns(url)  # doctest: +SKIP
    >>> here.share(["call:c1"], [SpanRecord(1, 2, 0, "run", 0, 1, Role.AGENT_RUN)])  # doctest: +SKIP
    >>> [keys for keys, _ in there.shared_since_last()]  # doctest: +SKIP
    [['call:c1']]
    """

    def __init__(self, url: str, capacity: int = 1_000) -> None:
        self._capacity = capacity
        self._writer = uuid.uuid4().hex
        self._last_seq = 0
        self._session = PostgresSession(url, _DDL)

    def share(self, keys: list[str], records: list[SpanRecord]) -> None:
        row = (self._writer, json.dumps(keys), encode_records(records))

        def insert(db: Any) -> None:
            with db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                (seq,) = db.execute(
                    "INSERT INTO reliability_paused_runs (writer, keys, records) VALUES (%s, %s, %s) RETURNING seq", row
                ).fetchone()
                db.execute("DELETE FROM reliability_paused_runs WHERE seq <= %s", (seq - self._capacity,))

        self._session.run(insert)

    def shared_since_last(self) -> list[tuple[list[str], list[SpanRecord]]]:
        def read(db: Any) -> list[Any]:
            rows = db.execute(
                "SELECT seq, writer, keys, records FROM reliability_paused_runs WHERE seq > %s "
                "ORDER BY seq DESC LIMIT %s",
                (self._last_seq, self._capacity),
            ).fetchall()
            if rows:
                self._last_seq = rows[0][0]
            return rows

        rows = self._session.run(read)
        return [
            (json.loads(keys), decode_records(records))
            for _, writer, keys, records in reversed(rows)
            if writer != self._writer
        ]

    def close(self) -> None:
        self._session.close()


def encode_records(records: Iterable[SpanRecord]) -> str:
    """``records`` as a JSON array of arrays, one per record, its fields in declaration order.

    >>> record = SpanRecord(1, 2, 0, "agent run", 10, 20, Role.AGENT_RUN, run_key="r1")
    >>> decode_records(encode_records([record])) == [record]
    True
    """
    return json.dumps([_encode(record) for record in records], separators=(",", ":"), default=str)


def decode_records(text: str) -> list[SpanRecord]:
    """The records ``encode_records`` wrote."""
    return [_decode(item) for item in json.loads(text)]


def _encode(r: SpanRecord) -> list[Any]:
    return [
        r.trace_id, r.span_id, r.parent_id, r.name, r.start_ns, r.end_ns, r.role.value, r.error,
        r.agent_name, r.run_key, None if r.attributes is None else dict(r.attributes), r.output,
        r.tool_name, r.arguments, r.call_id, r.refusal, r.handoff_to,
        [[q.name, q.arguments, q.call_id, q.held] for q in r.requests],
        [[a.call_id, a.content, a.refusal, a.error, a.names_refusal, a.ran] for a in r.responses],
        None if r.dispatched is None else [r.dispatched.name, r.dispatched.arguments, r.dispatched.call_id],
        [dict(e) for e in r.evaluations], r.policy_denied, r.session_id, r.sent_by, r.model_call, r.tokens,
        r.names_agent, r.profile, r.returned, r.refusal_possible, r.agent_version, r.parameters, r.tool_definitions,
        r.outlived, r.failure_possible, r.spans_some_calls, r.stopped_for_tools,
    ]  # fmt: skip


# session_id, sent_by, model_call, tokens, names_agent, profile, returned, refusal_possible, agent_version,
# parameters, tool_definitions, outlived, failure_possible, spans_some_calls, stopped_for_tools: the fields added since the first
# version, in order (``inferred`` and ``layers`` are assembly's, never on a stored record)
_NEWER_DEFAULTS: tuple[Any, ...] = (None, None, False, None, None, None, False, False, None, None, None, False, False, False, False)


def _decode(item: list[Any]) -> SpanRecord:
    (
        trace_id, span_id, parent_id, name, start_ns, end_ns, role, error, agent_name, run_key, attributes, output,
        tool_name, arguments, call_id, refusal, handoff_to, requests, responses, dispatched, evaluations, denied,
        *newer,  # fields added since: records an older writer stored lack them
    ) = item  # fmt: skip
    # fields added since, in the order they came: records an older writer stored lack the last ones
    (
        session_id, sent_by, model_call, tokens, names_agent, profile, returned, refusal_possible, agent_version,
        parameters, tool_definitions, outlived, failure_possible, spans_some_calls, stopped_for_tools,
    ) = (*newer, *_NEWER_DEFAULTS[len(newer):])  # fmt: skip
    return SpanRecord(
        trace_id, span_id, parent_id, name, start_ns, end_ns, _ROLES[role], error,
        agent_name=agent_name, run_key=run_key, attributes=None if attributes is None else _attributes(attributes), output=output,
        tool_name=tool_name, arguments=arguments, call_id=call_id, refusal=refusal, handoff_to=handoff_to,
        requests=tuple(ToolRequest(*q) for q in requests),
        responses=tuple(ToolResponse(*a) for a in responses),
        dispatched=None if dispatched is None else ToolRequest(*dispatched),
        evaluations=tuple(_attributes(e) for e in evaluations), policy_denied=denied,
        session_id=session_id, sent_by=sent_by, model_call=model_call, tokens=tokens,
        names_agent=names_agent, profile=profile, returned=returned, refusal_possible=refusal_possible,
        agent_version=agent_version, parameters=parameters,
        # one definition an item is a tuple on the record, which JSON wrote as a list
        tool_definitions=tuple(tool_definitions) if isinstance(tool_definitions, list) else tool_definitions,
        outlived=outlived, failure_possible=failure_possible, spans_some_calls=spans_some_calls,
        stopped_for_tools=stopped_for_tools,
    )  # fmt: skip


def _attributes(values: dict[str, Any]) -> dict[str, Any]:
    """Span attributes as the readers give them: array values are tuples, which JSON wrote as lists."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in values.items()}
