"""The end-of-input rule (``eval``, and anything that judges files): everything is due at
once, nothing is bounded (the input is all there is), and a run judged again within the
input keeps only its last verdict.
"""

from __future__ import annotations

import sys
from typing import Iterable

from ..adapters import to_event_record, to_record
from ..model import EventRecord, LogData, SpanData, SpanRecord
from ..results import RunResult
from ..session_results import SessionResult
from .judge import Engine
from .pipeline import Pipeline
from .settings import EngineSettings
from .sinks import Judgement

_UNBOUNDED = EngineSettings(
    max_traces=sys.maxsize, max_spans_per_trace=sys.maxsize, max_paused_runs=sys.maxsize,
    max_sessions=sys.maxsize, max_runs_per_session=sys.maxsize, max_buffered_bytes=sys.maxsize,
)


def judge_spans(engine: Engine, spans: Iterable[SpanData], logs: Iterable[LogData] = ()) -> list[RunResult]:
    """``judge_at_end`` of spans (and log records) read from files: every top-level run's
    verdict, in start order. GenAI event log records join their spans by trace and span id.

    >>> judge_spans(Engine(), [])
    []
    """
    events = [event for event in map(to_event_record, logs) if event is not None]
    return [judgement.result for judgement in judge_at_end(engine, (to_record(span) for span in spans), events)]


def judge_at_end(engine: Engine, records: Iterable[SpanRecord], events: Iterable[EventRecord] = ()) -> list[Judgement]:
    """The end-of-input rule (``eval``): every top-level run in ``records``, judged with its
    continuations, once each, in the order their run spans started. Nothing is bounded:
    the input is all there is.
    """
    return judge_all_at_end(engine, records, events)[0]


def judge_all_at_end(
    engine: Engine, records: Iterable[SpanRecord], events: Iterable[EventRecord] = ()
) -> tuple[list[Judgement], list[SessionResult]]:
    """``judge_at_end``, and the sessions of its runs judged as ``scope: session`` expectations
    say (in the order their first runs started).

    >>> judge_all_at_end(Engine(), [])
    ([], [])
    """
    pipeline = Pipeline(engine, settings=_UNBOUNDED)
    records = list(records)
    pipeline.add(records, now=0.0)
    pipeline.add_events(list(events), now=0.0)
    started = {(r.trace_id, r.span_id): r.start_ns for r in records}  # a run no span marks is inferred from any span
    final: dict[tuple[int, int], Judgement] = {}
    for trace in pipeline.drain():
        for judgement in trace.judgements:  # a re-judgement supersedes the first
            final[judgement.result.trace_id, judgement.result.run_span_id] = judgement
            for span_id in judgement.superseded_runs:
                final.pop((judgement.result.trace_id, span_id), None)
    sessions = sorted(pipeline.end_sessions(), key=lambda s: (s.start_ns, s.session_id))
    return sorted(final.values(), key=lambda j: started[j.result.trace_id, j.result.run_span_id]), sessions
