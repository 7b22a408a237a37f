"""The engine's sinks for verdicts: a results store, metrics, a printed table.

Each takes a whole tick of judgements at once: the store writes them in one
transaction, the metrics add once per label set.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from ..engine import Judgement, SinkUnavailable
from ..session_results import SessionResult
from ..stores import ResultStore, Superseded
from ..stores.base import passing_fault, record_fault
from .metrics import ReliabilityMetrics
from .table import render_table

logger = logging.getLogger(__name__)


def _raise_if_passing(exc: Exception) -> None:
    """A store failure that may pass becomes ``SinkUnavailable``: the engine holds the verdicts and retries."""
    reason = passing_fault(exc)
    if reason is not None:
        raise SinkUnavailable(reason, str(exc)) from exc


def _superseded(judgements: Sequence[Judgement]) -> list[Superseded]:
    return sorted({
        Superseded(j.result.trace_id, span_id, j.result.evaluated_at) for j in judgements for span_id in j.superseded_runs
    })


class StoreSink:
    """Keeps every verdict; a re-judgement supersedes the run's stored one, and the stored
    verdicts of the trace's runs that are no longer top-level are dropped with it.

    A tick's verdicts go in one write. When the store refuses it for what a record holds
    (``stores.record_fault``: a value it cannot encode), each verdict is written alone, so
    that only the ones at fault are lost; they are told to ``on_dropped(count, reason)``. A
    failure that may pass (``stores.passing_fault``: the store unreachable, full, locked)
    raises ``SinkUnavailable``: the engine holds the verdicts and offers them again.
    """

    name = "store"

    def __init__(self, store: ResultStore, on_dropped: Callable[[int, str], None] | None = None) -> None:
        self.store = store
        self._on_dropped = on_dropped

    def publish(self, judgements: Sequence[Judgement]) -> None:
        self._write([(j.result, _superseded([j])) for j in judgements], _superseded(judgements))

    def publish_sessions(self, results: Sequence[SessionResult]) -> None:
        self._write([(r, []) for r in results], [])

    def _write(self, items: list[tuple[Any, list[Superseded]]], superseded: list[Superseded]) -> None:
        try:
            self._add([result for result, _ in items], superseded)
            return
        except Exception as exc:
            _raise_if_passing(exc)
            if record_fault(exc) is None or len(items) == 1:
                self._tell_dropped(exc, len(items))
                raise
        for result, voids in items:  # one at a time: the others are written
            try:
                self._add([result], voids)
            except Exception as exc:
                _raise_if_passing(exc)  # all of them are held: those written are written again, the same
                self._tell_dropped(exc, 1)
                if record_fault(exc) is None:
                    raise

    def _add(self, results: list[Any], superseded: list[Superseded]) -> None:
        if superseded:
            self.store.add_many(results, superseded=superseded)
        else:  # the common case, and a store written before supersession takes no second argument
            self.store.add_many(results)

    def _tell_dropped(self, exc: Exception, count: int) -> None:
        reason = record_fault(exc)
        if reason is not None and self._on_dropped is not None:
            logger.error("otel-reliability store refused %d verdict(s) (%s): %s", count, reason, exc)
            self._on_dropped(count, reason)

    def close(self) -> None:
        self.store.close()


class MetricsSink:
    """Counts verdicts, tool calls by outcome and scores (``agent.reliability.*``)."""

    name = "metrics"

    def __init__(self, metrics: ReliabilityMetrics) -> None:
        self.metrics = metrics

    def publish(self, judgements: Sequence[Judgement]) -> None:
        self.metrics.record_many([j.result for j in judgements])

    def publish_sessions(self, results: Sequence[SessionResult]) -> None:
        self.metrics.record_sessions(results)

    def close(self) -> None:
        pass


class PrintSink:
    """Prints each verdict as a table on standard output (``print_results=True``)."""

    name = "print"

    def publish(self, judgements: Sequence[Judgement]) -> None:
        for judgement in judgements:
            render_table(judgement.result)

    def close(self) -> None:
        pass
