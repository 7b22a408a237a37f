"""The pipeline every front door hands its records to: buffer → due → continuations →
assembly → expectation → matcher → sinks.

A front door turns its input into ``SpanRecord``s and says when a trace is due: the
receiver after ``decision_wait`` of quiet (``tick``), the span processor when a top-level
run span ends (``judge_trace``), ``eval`` at the end of its input (``drain``). Everything
after that is here, once: paused runs and the traces that resume them, assembly, the
choice of expectation, the matcher, what other evaluators said about each run, and the
fan-out to the sinks.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from ..adapters import to_event_record, to_record
from ..assembly import assemble
from ..expectations import Expectation, ExpectationError
from ..model import EventRecord, LogData, Role, Run, SpanData, SpanRecord
from ..results import RunResult
from .buffer import DueTrace, TraceBuffer
from .continuations import PausedRuns, Resumers, SharedPausedRuns
from .judge import Engine
from .settings import EngineSettings
from .sinks import Judgement, Sink, Sinks

PausedHook = Callable[[list[str], list[SpanRecord]], None]
_AGENT_RUN = Role.AGENT_RUN
logger = logging.getLogger(__name__)
_UNBOUNDED = EngineSettings(max_traces=sys.maxsize, max_spans_per_trace=sys.maxsize, max_paused_runs=sys.maxsize)


class Observer(Protocol):
    """Self-observability: what the pipeline counts (``ReliabilityMetrics`` is one)."""

    def traces_evicted(self, count: int = 1) -> None: ...

    def late_evaluation(self, count: int = 1) -> None: ...

    def sink_failed(self, sink: str) -> None: ...


@dataclass(slots=True)
class Judged:
    """What one due trace gave: its judgements (none when it held no judgeable run)."""

    trace_id: int
    judgements: list[Judgement]


class Pipeline:
    """One trace buffer and everything that judges from it.

    ``paused`` shares paused runs with other processes judging the same traffic (the
    receiver passes its PostgreSQL store's); without it they stay in this process.

    >>> pipeline = Pipeline(Engine())
    >>> pipeline.add([], now=0.0)
    []
    >>> pipeline.drain()
    []
    """

    def __init__(
        self,
        engine: Engine,
        sinks: Sequence[Sink] = (),
        *,
        settings: EngineSettings | None = None,
        decision_wait: float = 2.0,
        observer: Observer | None = None,
        on_paused: PausedHook | None = None,
        paused: SharedPausedRuns | None = None,
        on_unjudgeable: Callable[[str, Exception], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        settings = settings or EngineSettings()
        self.engine = engine
        self.settings = settings
        self.sinks = Sinks(sinks, on_failure=observer.sink_failed if observer is not None else None)
        self.resumers = Resumers()
        self.buffer = TraceBuffer(settings, decision_wait, on_leave=self.resumers.drop)
        self.paused = PausedRuns(settings.max_paused_runs)
        self._shared = paused
        self._observer = observer
        self._on_paused = on_paused
        self._on_unjudgeable = on_unjudgeable
        self._clock = clock
        self._evicted_reported = 0
        # Front doors add from their serving threads and judge from another.
        self.lock = threading.Lock()

    # -- records in ----------------------------------------------------------------

    def add(self, records: list[SpanRecord], now: float) -> list[str]:
        """Buffer records; returns one reason per record that could not be kept."""
        with self.lock:
            refused = self.buffer.add(records, now)
            self.resumers.index(records)
        self._report_evictions()
        return refused

    def add_events(self, events: list[EventRecord], now: float) -> list[str]:
        """Buffer GenAI event records (joined to their spans when judged); returns one reason
        per record that could not be kept. An event record arriving counts as an arrival of
        its trace: after the trace's verdict, it makes the trace due again (a late arrival)."""
        with self.lock:
            refused = self.buffer.add_events(events, now)
            self.resumers.index_answers(events)
        self._report_evictions()
        return refused

    @property
    def buffered_spans(self) -> int:
        return self.buffer.buffered_spans

    @property
    def buffered_events(self) -> int:
        return self.buffer.buffered_events

    def __len__(self) -> int:
        return len(self.buffer)

    # -- due rules ------------------------------------------------------------------

    def tick(self, now: float) -> tuple[list[Judged], list[DueTrace]]:
        """The quiet rule: judge every trace quiet for ``decision_wait``, publish, and drop
        what outlived its window. Returns what was judged and the traces that expired unjudged.

        Paused runs other processes shared since the last tick are learnt first, so that a
        trace resuming one is judged with it (and one judged without it, judged again)."""
        self._learn_shared()
        with self.lock:
            due = self.buffer.due(now)
        judged = [self.judge_due(trace) for trace in due]
        self.publish([j for trace in judged for j in trace.judgements])
        return judged, self.expire(now)

    def expire(self, now: float) -> list[DueTrace]:
        """Drop the traces past their window; returns those that were never judged."""
        with self.lock:
            expired = self.buffer.expire(now)
        self._report_evictions()
        return expired

    @property
    def traces_evicted(self) -> int:
        """Traces that left the buffer unjudged: pushed out by ``max_traces`` or expired after ``trace_ttl``."""
        stats = self.buffer.stats
        return stats.traces_evicted + stats.traces_expired_unjudged

    def drain(self) -> list[Judged]:
        """End of input: judge every trace that holds a run span as it stands, and publish."""
        with self.lock:
            remaining = self.buffer.drain()
        judged = []
        while remaining:  # judging may reopen traces (a paused run became known): judge them again
            judged += [self.judge_due(trace) for trace in remaining]
            with self.lock:
                remaining = self.buffer.drain()
        self.publish([j for trace in judged for j in trace.judgements])
        return judged

    def judge_trace(
        self, trace_id: int, run_span_id: int, inline: Expectation | None = None, extra_sinks: Sequence[Sink] = ()
    ) -> Judgement | None:
        """The run-ended rule: judge the top-level run ``run_span_id`` of a buffered trace now, and publish."""
        with self.lock:
            records = self.buffer.joined_records(trace_id)
        judgements = self._judge(trace_id, records, late=False, only=run_span_id, inline=inline)
        self.publish(judgements, extra_sinks)
        return judgements[0] if judgements else None

    def forget(self, trace_id: int) -> None:
        with self.lock:
            self.buffer.forget(trace_id)

    def publish(self, judgements: Sequence[Judgement], extra_sinks: Sequence[Sink] = ()) -> None:
        self.sinks.publish(judgements, extra_sinks)
        late = sum(j.late for j in judgements)
        if late and self._observer is not None:
            self._observer.late_evaluation(late)

    def close(self) -> None:
        self.sinks.close()

    # -- continuations ----------------------------------------------------------------

    def keep_paused(self, keys: list[str], records: list[SpanRecord]) -> None:
        """Remember a run another process judged paused, for the trace that may resume it here."""
        self.paused.keep(keys, records)
        self._reopen_resumers(keys, records)

    def _learn_shared(self) -> None:
        if self._shared is None:
            return
        try:
            shared = self._shared.shared_since_last()
        except Exception:  # the shared store is down: judge with what is known here, try again next tick
            logger.warning("otel-reliability could not read the shared paused runs", exc_info=True)
            return
        for keys, records in shared:
            self.keep_paused(keys, records)

    def _share(self, keys: list[str], records: list[SpanRecord]) -> None:
        if self._shared is None:
            return
        try:
            self._shared.share(keys, records)
        except Exception:  # the verdict stands; only a resumption judged elsewhere misses this run
            logger.warning("otel-reliability could not share a paused run", exc_info=True)

    def _reopen_resumers(self, keys: list[str], paused_records: list[SpanRecord]) -> None:
        """Make due again the judged traces that resume this paused run (not its own)."""
        own = {record.trace_id for record in paused_records}
        with self.lock:
            now = self._clock()
            for key in keys:
                for trace_id in self.resumers.traces(key):
                    if trace_id not in own:
                        self.buffer.reopen(trace_id, now)

    # -- judging ------------------------------------------------------------------------

    def judge_due(self, due: DueTrace) -> Judged:
        """Judge one due trace, without publishing."""
        return Judged(due.trace_id, self._judge(due.trace_id, due.records, due.late))

    def _judge(
        self,
        trace_id: int,
        records: list[SpanRecord],
        late: bool,
        only: int | None = None,
        inline: Expectation | None = None,
    ) -> list[Judgement]:
        keys = [r.run_key for r in records if r.role is _AGENT_RUN]
        earlier = self.paused.predecessors(records, keys)
        if earlier:  # a paused run of this very trace, judged before a late arrival, is in ``records`` already
            held = {(r.trace_id, r.span_id) for r in records}
            earlier = [r for r in earlier if (r.trace_id, r.span_id) not in held]
        every = earlier + records if earlier else records
        # A paused predecessor from another trace was judged when it ended: only this trace's runs.
        top_level = [run for run in assemble(every) if run.trace_id == trace_id]
        runs = top_level if only is None else [run for run in top_level if run.span_id == only]
        # The trace's verdicts are replaced as a set: a run judged top-level before its parent
        # arrived (or continued by a later run span) is now part of another run, and its
        # earlier verdict goes.
        top_ids = {run.span_id for run in top_level}
        superseded = frozenset(
            r.span_id for r in records if r.role is _AGENT_RUN and r.trace_id == trace_id and r.span_id not in top_ids
        )
        said = _said_about(records, runs)
        judgements = []
        for run in runs:
            try:
                result = self.engine.judge(run, inline)
            except ExpectationError as exc:  # e.g. the run span names an expectation nobody loaded
                logger.warning("otel-reliability could not judge run %r: %s", run.span_name, exc)
                if self._on_unjudgeable is not None:
                    self._on_unjudgeable(run.span_name, exc)
                continue
            kept = self.paused.remember(run, every)
            if kept:
                self._reopen_resumers(kept, every)
                self._share(kept, every)
                if self._on_paused is not None:
                    self._on_paused(kept, every)
            evaluations, denied = said.get(run.span_id, ((), frozenset()))
            judgements.append(Judgement(run, result, late, evaluations, denied, superseded))
        return judgements

    def _report_evictions(self) -> None:
        evicted = self.traces_evicted
        if evicted > self._evicted_reported:
            if self._observer is not None:
                self._observer.traces_evicted(evicted - self._evicted_reported)
            self._evicted_reported = evicted


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
    pipeline = Pipeline(engine, settings=_UNBOUNDED)
    records = list(records)
    pipeline.add(records, now=0.0)
    pipeline.add_events(list(events), now=0.0)
    started = {(r.trace_id, r.span_id): r.start_ns for r in records if r.role is _AGENT_RUN}
    final: dict[tuple[int, int], Judgement] = {}
    for trace in pipeline.drain():
        for judgement in trace.judgements:  # a re-judgement supersedes the first
            final[judgement.result.trace_id, judgement.result.run_span_id] = judgement
            for span_id in judgement.superseded_runs:
                final.pop((judgement.result.trace_id, span_id), None)
    return sorted(final.values(), key=lambda j: started[j.result.trace_id, j.result.run_span_id])


def _said_about(
    records: Iterable[SpanRecord], runs: list[Run]
) -> dict[int, tuple[tuple[Mapping[str, Any], ...], frozenset[int]]]:
    """By top-level run span: other evaluators' events on the run's spans (the run span, its
    descendants, evaluator spans reporting as its children), and its calls a policy denied."""
    records = list(records)
    marked = [r for r in records if r.evaluations or r.policy_denied]
    if not marked:
        return {}
    by_id = {r.span_id: r for r in records}
    run_ids = {run.span_id for run in runs}
    evaluations: dict[int, list[Mapping[str, Any]]] = {}
    denied: dict[int, set[int]] = {}
    for record in marked:
        top = _outermost_run(record, by_id, run_ids)
        if top is None:
            continue
        if record.evaluations:
            evaluations.setdefault(top, []).extend(record.evaluations)
        if record.policy_denied:
            denied.setdefault(top, set()).add(record.span_id)
    return {
        run_id: (tuple(evaluations.get(run_id, ())), frozenset(denied.get(run_id, ())))
        for run_id in evaluations.keys() | denied.keys()
    }


def _outermost_run(record: SpanRecord, by_id: dict[int, SpanRecord], run_ids: set[int]) -> int | None:
    """The outermost of ``run_ids`` among ``record`` and its ancestors."""
    top = None
    node: SpanRecord | None = record
    for _ in range(1024):  # a parent cycle in bad input must not hang the judge
        if node is None:
            break
        if node.span_id in run_ids:
            top = node.span_id
        node = by_id.get(node.parent_id)
    return top
