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
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from ..assembly import assemble
from ..expectations import Expectation, ExpectationError
from ..model import EventRecord, Role, SpanRecord
from ..session_results import SessionResult
from .boundary import failure_reason, log_failure, not_evaluated, outermost_runs
from .buffer import DueTrace, TraceBuffer
from .continuations import PausedRuns, Resumers, SharedPausedRuns
from .held import HeldVerdicts
from .judge import Engine
from .publishing import Publisher
from .said_about import said_about
from .sessions import HandOn, SharedSessions, Sessions
from .settings import EngineSettings
from .sinks import Judgement, Sink

PausedHook = Callable[[list[str], list[SpanRecord]], None]
_AGENT_RUN = Role.AGENT_RUN
_TOOL = Role.TOOL
logger = logging.getLogger(__name__)


class Observer(Protocol):
    """Self-observability: what the pipeline counts (``ReliabilityMetrics`` is one)."""

    def traces_dropped(self, count: int, reason: str) -> None: ...

    def paused_runs_dropped(self, count: int, reason: str) -> None: ...

    def late_evaluation(self, count: int = 1) -> None: ...

    def sink_failed(self, sink: str) -> None: ...

    def sink_retried(self, sink: str, reason: str) -> None: ...

    def verdicts_dropped(self, count: int, sink: str, reason: str) -> None: ...

    def sessions_dropped(self, count: int, reason: str) -> None: ...

    def evaluation_failed(self, reason: str) -> None: ...


@dataclass(slots=True)
class Judged:
    """What one due trace gave: its judgements (none when it held no judgeable run)."""

    trace_id: int
    judgements: list[Judgement]


class Pipeline:
    """One trace buffer and everything that judges from it.

    ``paused`` shares paused runs with other processes judging the same traffic (the
    receiver passes its PostgreSQL store's), ``shared_sessions`` the turns of sessions;
    without them they stay in this process. ``hand_on_turn`` gives a session's turns to the
    process that gathers that session (a receiver's shards without a shared store).
    ``on_trace_enter`` and ``on_trace_leave`` are told the id of every trace that enters the
    buffer and leaves it, however it leaves (the receiver's intake log releases what it holds).

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
        shared_sessions: SharedSessions | None = None,
        hand_on_turn: HandOn | None = None,
        on_unjudgeable: Callable[[str, Exception], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_trace_enter: Callable[[int], None] | None = None,
        on_trace_leave: Callable[[int], None] | None = None,
    ) -> None:
        settings = settings or EngineSettings()
        self.engine = engine
        self.settings = settings
        self.held = HeldVerdicts(settings.max_held_verdicts, settings.max_held_bytes)
        self.publisher = Publisher(sinks, self.held, observer, on_trace_leave)
        self.sinks = self.publisher.sinks
        self.resumers = Resumers()
        drop = self.resumers.drop
        if on_trace_leave is not None:
            def left(trace_id: int) -> None:
                drop(trace_id)
                self.publisher.leave(trace_id)  # told once its verdicts are published
        # One byte budget for the buffer and the paused runs: the buffer evicts to make room for both.
        self.paused = PausedRuns(settings.max_paused_runs, settings.max_buffered_bytes)
        self.buffer = TraceBuffer(
            settings, decision_wait, on_leave=drop if on_trace_leave is None else left,
            held_elsewhere=lambda: self.paused.bytes, on_enter=on_trace_enter,
        )
        self.sessions = Sessions(engine.expectations, settings, shared_sessions, hand_on_turn, engine.use.chosen)
        self._shared = paused
        self._observer = observer
        self._on_paused = on_paused
        self._on_unjudgeable = on_unjudgeable
        self._clock = clock
        self._reported: dict[tuple[str, str], int] = {}  # (what, reason) → drops told the observer
        # Front doors add from their serving threads and judge from another.
        self.lock = threading.Lock()
        self._report_lock = threading.Lock()

    # -- records in ----------------------------------------------------------------

    def add(self, records: list[SpanRecord], now: float) -> list[str]:
        """Buffer records; returns one reason per record that could not be kept."""
        with self.lock:
            refused = self.buffer.add(records, now)
            self.resumers.index(records)
        self._report_drops()
        return refused

    def add_events(self, events: list[EventRecord], now: float) -> list[str]:
        """Buffer GenAI event records (joined to their spans when judged); returns one reason
        per record that could not be kept. An event record arriving counts as an arrival of
        its trace: after the trace's verdict, it makes the trace due again (a late arrival)."""
        with self.lock:
            refused = self.buffer.add_events(events, now)
            self.resumers.index_answers(events)
        self._report_drops()
        return refused

    @property
    def buffered_spans(self) -> int:
        return self.buffer.buffered_spans

    @property
    def buffered_events(self) -> int:
        return self.buffer.buffered_events

    @property
    def buffered_bytes(self) -> int:
        """Estimated bytes held: buffered traces and paused runs (``max_buffered_bytes`` bounds both)."""
        return self.buffer.buffered_bytes + self.paused.bytes

    def __len__(self) -> int:
        return len(self.buffer)

    # -- due rules ------------------------------------------------------------------

    def tick(self, now: float) -> tuple[list[Judged], list[DueTrace]]:
        """The quiet rule: judge every trace quiet for ``decision_wait``, publish, and drop
        what outlived its window. Returns what was judged and the traces that expired unjudged.

        Paused runs other processes shared since the last tick are learnt first, so that a
        trace resuming one is judged with it (and one judged without it, judged again)."""
        self._learn_shared()
        self.publisher.retry(now)
        with self.lock:
            due = self.buffer.due(now)
        judged = [self.judge_due(trace) for trace in due]
        self.publish([j for trace in judged for j in trace.judgements])
        self.publish_sessions(self.sessions.due(now))
        return judged, self.expire(now)

    def expire(self, now: float) -> list[DueTrace]:
        """Drop the traces past their window; returns those that were never judged."""
        with self.lock:
            expired = self.buffer.expire(now)
        self._report_drops()
        return expired

    @property
    def traces_dropped(self) -> dict[str, int]:
        """Traces that left the buffer other than by ``forget``, by reason (``buffer.VERDICT_LOST``
        names those that left unjudged)."""
        return dict(self.buffer.stats.traces_dropped)

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

    def judge_unmarked(self, trace_id: int) -> list[Judgement]:
        """The local-root-ended rule (the span processor's), for runs no span marks: a buffered
        trace none of whose spans is a run span, judged whole and published (its runs are found
        from structure, ``assembly.inferred``); nothing for a trace that marks a run."""
        with self.lock:
            records = self.buffer.joined_records(trace_id)
        if any(r.role is _AGENT_RUN for r in records) or not any(r.role is _TOOL or r.requests for r in records):
            return []  # a marked run is judged when its span ends; no tool, no agent
        judgements = self._judge(trace_id, records, late=False)
        self.publish(judgements)
        return judgements

    def judge_idle_sessions(self, now: float) -> list[SessionResult]:
        """The session idle rule alone (the span processor's sweep): judge and publish the
        sessions idle for ``session_idle``."""
        results = self.sessions.due(now)
        self.publish_sessions(results)
        return results

    def judge_session(self, session_id: str) -> SessionResult | None:
        """Judge one session now, from the runs of it judged so far, and publish it."""
        result = self.sessions.judge(session_id)
        if result is not None:
            self.publish_sessions([result])
        return result

    def end_sessions(self) -> list[SessionResult]:
        """End of input, after ``drain``: judge every session not judged since its last run, and publish."""
        results = self.sessions.judge_all()
        self.publish_sessions(results)
        return results

    def publish_sessions(self, results: Sequence[SessionResult]) -> None:
        self.sinks.publish_sessions(results)
        self._report_drops()

    def forget(self, trace_id: int) -> None:
        with self.lock:
            self.buffer.forget(trace_id)

    def publish(self, judgements: Sequence[Judgement], extra_sinks: Sequence[Sink] = ()) -> None:
        if not judgements:
            return
        with self.lock:  # what a held verdict weighs: its share of its trace's bytes
            runs: dict[int, int] = {}
            for j in judgements:
                runs[j.result.trace_id] = runs.get(j.result.trace_id, 0) + 1
            sizes = [self.buffer.bytes_of(j.result.trace_id) // runs[j.result.trace_id] for j in judgements]
        self.publisher.publish(judgements, sizes, self._clock(), extra_sinks)
        if judgements and self.sessions.active:
            self.sessions.note([j.run for j in judgements], self._clock())
            self._report_drops()
        late = sum(j.late for j in judgements)
        if late and self._observer is not None:
            self._observer.late_evaluation(late)

    def close(self) -> None:
        """Offer the held verdicts once more, whatever their backoff, then close the sinks."""
        self.publisher.retry(float("inf"))
        self.sinks.close()

    # -- continuations ----------------------------------------------------------------

    def keep_paused(self, keys: list[str], records: list[SpanRecord]) -> None:
        """Remember a run another process judged paused, for the trace that may resume it here."""
        self.paused.keep(keys, records)
        self._make_room()
        self._reopen_resumers(keys, records)

    def _learn_shared(self) -> None:
        if self._shared is None:
            return
        try:
            shared = self._shared.shared_since_last()
        except Exception as exc:  # the shared store is down: judge with what is known here, try again next tick
            logger.warning("otel-reliability could not read the shared paused runs: %s", exc)
            return
        for keys, records in shared:
            self.keep_paused(keys, records)

    def _share(self, keys: list[str], records: list[SpanRecord]) -> None:
        if self._shared is None:
            return
        try:
            self._shared.share(keys, records)
        except Exception as exc:  # the verdict stands; only a resumption judged elsewhere misses this run
            logger.warning("otel-reliability could not share a paused run: %s", exc)

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
        """The trace's judgements, inside the boundary (``boundary``): whatever this trace
        makes the engine raise gives its runs NOT_EVALUATED verdicts, and costs no other trace."""
        try:
            return self._judge_runs(trace_id, records, late, only, inline)
        except Exception as exc:
            self._failed(trace_id, exc)
            return [
                Judgement(run, not_evaluated(self.engine, run, exc, inline), late)
                for run in outermost_runs(trace_id, records, only)
            ]

    def _failed(self, trace_id: int, exc: Exception) -> None:
        log_failure(trace_id, exc)
        if self._observer is not None:
            self._observer.evaluation_failed(failure_reason(exc))

    def _judge_runs(
        self, trace_id: int, records: list[SpanRecord], late: bool, only: int | None, inline: Expectation | None
    ) -> list[Judgement]:
        run_spans = [r for r in records if r.role is _AGENT_RUN]  # one pass over the records: this runs for every trace
        earlier = self.paused.predecessors(records, [r.run_key for r in run_spans])
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
        superseded = frozenset([r.span_id for r in run_spans if r.trace_id == trace_id and r.span_id not in top_ids])
        said = said_about(records, runs)
        judgements = []
        rules = self.engine.expectations  # one set for the whole trace, whatever a reload does meanwhile
        for run in runs:
            try:
                result = self.engine.judge(run, inline, rules)
            except ExpectationError as exc:  # e.g. the run span names an expectation nobody loaded
                logger.warning("otel-reliability could not judge run %r: %s", run.span_name, exc)
                if self._on_unjudgeable is not None:
                    self._on_unjudgeable(run.span_name, exc)
                continue
            except Exception as exc:  # this run alone: the trace's other runs are judged
                self._failed(trace_id, exc)
                judgements.append(Judgement(run, not_evaluated(self.engine, run, exc, inline), late))
                continue
            kept = self.paused.remember(run, every)
            if kept:
                self._make_room()
                self._reopen_resumers(kept, every)
                self._share(kept, every)
                if self._on_paused is not None:
                    self._on_paused(kept, every)
            evaluations, denied = said.get(run.span_id, ((), frozenset()))
            judgements.append(Judgement(run, result, late, evaluations, denied, superseded))
        return judgements

    def _make_room(self) -> None:
        """A paused run was kept: the buffer evicts what no longer fits beside it."""
        with self.lock:
            self.buffer.evict_over_budget()
        self._report_drops()

    def _report_drops(self) -> None:
        observer = self._observer
        if observer is None:
            return
        with self._report_lock:  # serving threads and the judge report at once: each drop once
            for what, dropped, tell in (
                ("traces", self.buffer.stats.traces_dropped, observer.traces_dropped),
                ("paused_runs", self.paused.dropped, observer.paused_runs_dropped),
                ("sessions", self.sessions.stats.dropped, observer.sessions_dropped),
            ):
                for reason, count in list(dropped.items()):
                    told = self._reported.get((what, reason), 0)
                    if count > told:
                        self._reported[what, reason] = count
                        tell(count - told, reason)

