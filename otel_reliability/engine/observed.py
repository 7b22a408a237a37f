"""The runs in a set of records, as ``expectation_writer`` writes from them (``expect``, the
pytest plugin's snapshots): each run judged against nothing — only its calls and usage
matter — with the model-call start times of its trace, which tell its calls' turns apart.
"""

from __future__ import annotations

from typing import Sequence

from otel_reliability.expectation_writer import ObservedRun
from otel_reliability.model import EventRecord, Role, SpanRecord
from otel_reliability.results import RunResult, span_hex

from .end_of_input import judge_all_at_end
from .judge import Engine


def observed_runs(records: Sequence[SpanRecord], events: Sequence[EventRecord] = ()) -> list[tuple[ObservedRun, RunResult]]:
    """Every top-level run in ``records`` (in start order), and its verdict under no expectation.

    >>> observed_runs([])
    []
    """
    judgements, _ = judge_all_at_end(Engine([]), records, events)
    turns: dict[int, list[int]] = {}
    for record in records:
        if record.role is Role.MODEL and record.model_call:
            turns.setdefault(record.trace_id, []).append(record.start_ns)
    return [(observed_run(j.result, tuple(sorted(turns.get(j.result.trace_id, ())))), j.result) for j in judgements]


def observed_run(result: RunResult, turn_starts: tuple[int, ...] | None = None) -> ObservedRun:
    """A verdict's run as the writer reads it (from a store: no model-call times, so no turns)."""
    return ObservedRun(span_hex(result.run_span_id), result.agent, list(result.verdict.chain), result.verdict.usage, turn_starts)
