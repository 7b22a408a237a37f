"""The protocol every results store implements, and what the stores share."""

from __future__ import annotations

from typing import Any, Iterable, Protocol

from otel_reliability.jsontext import encode_stored
from otel_reliability.results import RunResult


class ResultStore(Protocol):
    def add(self, result: RunResult) -> None:
        """Keep ``result``, superseding an earlier verdict for the same run."""
        ...

    def add_many(self, results: Iterable[RunResult]) -> None:
        """Keep several results at once (one transaction where the store has them)."""
        ...

    def query(
        self,
        *,
        trace_id: int | str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: float | None = None,
        limit: int | None = 100,
    ) -> list[RunResult]:
        """Results newest first. ``trace_id`` as an int or hex, ``status`` ``PASSED``/``FAILED``
        (any case), ``since`` unix seconds (inclusive), ``limit`` ``None`` for all."""
        ...

    def close(self) -> None: ...


def normalise_trace_id(trace_id: int | str | None) -> int | None:
    """A trace id filter as an int; a string is read as hex.

    >>> normalise_trace_id("ff")
    255
    """
    return int(trace_id, 16) if isinstance(trace_id, str) else trace_id


def result_row(record: dict[str, Any]) -> tuple[Any, ...]:
    """The SQL row of a ``RunResult.to_record()`` (SQLite's ``results``, PostgreSQL's
    ``reliability_results``): its columns come from the record, which has the ids in hex."""
    return (
        record["trace_id"],
        record["run_span_id"],
        record["agent"],
        record["expectation"],
        record["eval_status"],
        record["score"],
        record["evaluated_at"],
        encode_stored(record),
    )
