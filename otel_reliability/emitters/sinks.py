"""The engine's sinks for verdicts: a results store, metrics, a printed table.

Each takes a whole tick of judgements at once: the store writes them in one
transaction, the metrics add once per label set.
"""

from __future__ import annotations

from typing import Sequence

from ..engine import Judgement
from ..session_results import SessionResult
from ..stores import ResultStore, Superseded
from .metrics import ReliabilityMetrics
from .table import render_table


class StoreSink:
    """Keeps every verdict; a re-judgement supersedes the run's stored one, and the stored
    verdicts of the trace's runs that are no longer top-level are dropped with it."""

    name = "store"

    def __init__(self, store: ResultStore) -> None:
        self.store = store

    def publish(self, judgements: Sequence[Judgement]) -> None:
        results = [j.result for j in judgements]
        superseded = {
            Superseded(j.result.trace_id, span_id, j.result.evaluated_at)
            for j in judgements
            for span_id in j.superseded_runs
        }
        if superseded:
            self.store.add_many(results, superseded=sorted(superseded))
        else:  # the common case, and a store written before supersession takes no second argument
            self.store.add_many(results)

    def publish_sessions(self, results: Sequence[SessionResult]) -> None:
        self.store.add_many(results)

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
