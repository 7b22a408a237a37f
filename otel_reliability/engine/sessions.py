"""Sessions: the top-level runs of one conversation, judged as one chain (SPEC §5.2).

A run is a turn of the session its spans name (``Run.session_id``, which the adapters read
from ``gen_ai.conversation.id``, else ``session.id``). Each judged turn leaves here only what
the session's judgement needs — its ids, times, agent, selectors and tool-call evidence, not
its trace. A session is judged by the first ``scope: session`` expectation whose ``match``
selects its first run (in start order), against the chain of every turn in start order:

- once it has been idle for ``session_idle`` (``due``: the receiver's tick, the span
  processor's sweep);
- at the end of the input (``judge_all``: ``eval``, a receiver stopping);
- on demand (``judge``: ``ReliabilitySpanProcessor.judge_session``).

A turn arriving for a judged session (a late re-judgement of a run, or the conversation going
on) makes it due again; its new verdict supersedes the first. A judged session is kept one
more ``session_idle`` for that, then closed: its id is remembered (bounded by ``max_sessions``)
so that a turn arriving after that is counted, not judged as a session of its own — a verdict
on the tail of a conversation would be a wrong one. Sessions that leave unjudged are counted
by reason: ``max_sessions`` (the least recently active pushed out), ``max_runs_per_session``
(a conversation longer than the bound: judged on part of it, its verdict could be wrong), and
``closed`` (a turn for a session already closed).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from ..expectations import Expectation
from ..matcher import evaluate
from ..model import Attempt, Run
from ..results import Evaluator
from ..session_results import SessionResult
from ..version import VERSION
from .settings import EngineSettings

logger = logging.getLogger(__name__)
MAX_SESSIONS = "max_sessions"
MAX_RUNS = "max_runs_per_session"
CLOSED = "closed"


@dataclass(slots=True)
class Turn:
    """What a session keeps of one judged top-level run."""

    trace_id: int
    run_span_id: int
    agent: str
    span_name: str
    attributes: Mapping[str, Any]
    start_ns: int
    end_ns: int
    evidence: list[Attempt]  # the run's attempts (members' included), each with a start time
    continues: tuple[tuple[int, int], ...] = ()  # earlier runs whose evidence this turn carries: it replaces them


class SharedSessions(Protocol):
    """Session turns shared between processes that judge parts of the same traffic (receivers
    behind a Collector routing by trace id: a conversation's traces reach different receivers).
    The receivers' PostgreSQL store keeps them (``stores/sessions.py``)."""

    def share(self, session_id: str, turn: Turn) -> None:
        """Offer the others a turn judged here (a re-judged run's turn replaces its first)."""
        ...

    def gather(self, session_id: str) -> tuple[list[Turn], float]:
        """Every process's turns of the session, and the seconds since the newest of them arrived."""
        ...

    def claim(self, session_id: str, digest: str) -> bool:
        """True for exactly one caller per session and ``digest`` (its turns): that one judges it."""
        ...


HandOn = Callable[[str, Turn], bool]
"""Hands a session's turn to the process that gathers that session; False when it is this one."""


@dataclass(slots=True)
class _Session:
    turns: dict[tuple[int, int], Turn] = field(default_factory=dict)
    last_seen: float = 0.0
    judged: bool = False
    too_long: bool = False


@dataclass(slots=True)
class SessionStats:
    """Sessions judged, and those that left unjudged by reason (``agent.reliability.sessions.dropped``)."""

    judged: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


class Sessions:
    """The sessions being gathered from judged runs, and their due rules.

    >>> from otel_reliability.model import OK
    >>> conversation = Expectation(name="conv", scope="session", expected_chain=["a", "b"], order="in_order")
    >>> sessions = Sessions([conversation])
    >>> for trace, tool in ((1, "a"), (2, "b")):
    ...     run = Run(trace, 9, "bot", "invoke_agent bot", trace * 10, trace * 10 + 5, session_id="c1",
    ...               own_attempts=[Attempt(tool, {}, OK, "bot", ("bot",), start_ns=trace * 10 + 1)])
    ...     sessions.note([run], now=0.0)
    >>> [(r.session_id, r.verdict.eval_status, len(r.runs)) for r in sessions.judge_all()]
    [('c1', 'PASSED', 2)]
    """

    def __init__(
        self, expectations: Sequence[Expectation], settings: EngineSettings | None = None,
        shared: SharedSessions | None = None, hand_on: HandOn | None = None,
        on_chosen: Callable[[str], None] | None = None,
    ) -> None:
        settings = settings or EngineSettings()
        self._shared = shared
        self._hand_on = hand_on
        self._on_chosen = on_chosen  # told the name of each expectation that judges a session
        self.expectations = [e for e in expectations if e.scope == "session"]
        self.idle = settings.session_idle
        self.max_sessions = settings.max_sessions
        self.max_runs = settings.max_runs_per_session
        self.stats = SessionStats()
        self._open: OrderedDict[str, _Session] = OrderedDict()  # least recently active first
        self._closed: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()  # judged runs arrive from one thread, judge_session from others

    @property
    def active(self) -> bool:
        """Whether any expectation judges sessions: without one, nothing is gathered."""
        return bool(self.expectations)

    def __len__(self) -> int:
        return len(self._open)

    def note(self, runs: Iterable[Run], now: float) -> None:
        """Keep the turns of judged runs that name a session (a re-judged run replaces its turn)."""
        if not self.expectations:
            return
        with self._lock:
            for run in runs:
                if run.session_id is None:
                    continue
                turn = _turn(run)
                if self._hand_on is not None and self._hand_on(run.session_id, turn):
                    continue  # another process gathers this session
                self._keep(run.session_id, turn, now)

    def keep_turn(self, session_id: str, turn: Turn, now: float) -> None:
        """Keep a turn another process judged and handed on (a receiver's shards: each session is
        gathered by one of them)."""
        if self.expectations:
            with self._lock:
                self._keep(session_id, turn, now)

    def due(self, now: float) -> list[SessionResult]:
        """Judge the sessions idle for ``session_idle``; close those judged and idle as long again."""
        with self._lock:
            ready, closing = [], []
            for session_id, session in self._open.items():
                if now - session.last_seen < self.idle:
                    break  # the rest were active more recently
                if not session.judged:
                    ready.append(session_id)
                elif now - session.last_seen >= 2 * self.idle:
                    closing.append(session_id)
            for session_id in closing:
                self._close(session_id)
            if self._shared is not None:
                ready = [sid for sid in ready if self._idle_everywhere(sid, now)]
            return self._judge_each(ready)

    def judge(self, session_id: str) -> SessionResult | None:
        """Judge one session now, however recently it was active (None: no session expectation
        selects it, or no judged run names it)."""
        with self._lock:
            if session_id not in self._open:
                return None
            self._learn(session_id)
            results = self._judge_each([session_id])
        return results[0] if results else None

    def judge_all(self) -> list[SessionResult]:
        """End of input: judge every session not judged since its last turn."""
        with self._lock:
            unjudged = [sid for sid, session in self._open.items() if not session.judged]
            for session_id in unjudged:
                self._learn(session_id)
            return self._judge_each(unjudged)

    # -- inside the lock ---------------------------------------------------------------

    def _keep(self, session_id: str, turn: Turn, now: float) -> None:
        if session_id in self._closed:
            self._drop(CLOSED)
            return
        session = self._open.pop(session_id, None)
        if session is None:
            session = _Session()
            while len(self._open) >= self.max_sessions:
                evicted_id, evicted = self._open.popitem(last=False)
                if not evicted.judged:
                    self._drop(MAX_SESSIONS)
                self._remember_closed(evicted_id)
        self._open[session_id] = session  # now the most recently active
        session.last_seen = now
        session.judged = False
        key = (turn.trace_id, turn.run_span_id)
        if session.too_long:
            return
        for earlier in turn.continues:  # their attempts are this turn's: counted once
            session.turns.pop(earlier, None)
        if key not in session.turns and len(session.turns) >= self.max_runs:
            session.too_long, session.turns = True, {}  # nothing of it can be judged: keep no evidence
            return
        session.turns[key] = turn
        if self._shared is not None:
            try:
                self._shared.share(session_id, turn)
            except Exception as exc:  # judged here with the turns known here; only another process misses this one
                logger.warning("otel-reliability could not share a turn of session %r: %s", session_id, exc)

    def _idle_everywhere(self, session_id: str, now: float) -> bool:
        """Whether no process saw a turn of the session for ``session_idle``; if one did, the
        session waits that much longer here."""
        quiet = self._learn(session_id)
        if quiet is None or quiet >= self.idle:
            return True
        self._open[session_id].last_seen = now - quiet
        self._open.move_to_end(session_id)
        return False

    def _learn(self, session_id: str) -> float | None:
        """Add the other processes' turns of the session; returns the seconds since the newest
        arrived anywhere (None: nothing shared, or the shared store is down)."""
        if self._shared is None:
            return None
        try:
            turns, quiet = self._shared.gather(session_id)
        except Exception as exc:  # judge with the turns known here
            logger.warning("otel-reliability could not read the shared turns of session %r: %s", session_id, exc)
            return None
        session = self._open[session_id]
        for turn in turns:
            session.turns.setdefault((turn.trace_id, turn.run_span_id), turn)
        return quiet

    def _claimed(self, session_id: str, turns: list[Turn]) -> bool:
        """Whether this process judges the session: another that judged the same turns has said it."""
        if self._shared is None:
            return True
        try:
            return self._shared.claim(session_id, _digest(turns))
        except Exception as exc:  # better a verdict twice (the store keeps one) than none
            logger.warning("otel-reliability could not claim session %r: %s", session_id, exc)
            return True

    def _judge_each(self, session_ids: list[str]) -> list[SessionResult]:
        results = []
        for session_id in session_ids:
            session = self._open[session_id]
            session.judged = True
            if session.too_long:
                self._drop(MAX_RUNS)
                self._close(session_id)
                continue
            result = self._judged(session_id, session)
            if result is not None:
                results.append(result)
        self.stats.judged += len(results)
        return results

    def _judged(self, session_id: str, session: _Session) -> SessionResult | None:
        # A paused run judged again after the run that resumes it (or learnt from another process)
        # is still carried by that run: count its attempts once.
        continued = {key for turn in session.turns.values() for key in turn.continues}
        turns = sorted(
            (t for key, t in session.turns.items() if key not in continued),
            key=lambda t: (t.start_ns, t.trace_id, t.run_span_id),
        )
        if not turns:
            return None
        first = turns[0]
        expectation = next((e for e in self.expectations if e.applies_to(first.agent, first.span_name, first.attributes)), None)
        if expectation is None or not self._claimed(session_id, turns):
            return None
        if self._on_chosen is not None:
            self._on_chosen(expectation.name)
        whole = Run(
            first.trace_id, first.run_span_id, first.agent, first.span_name, first.start_ns, turns[-1].end_ns,
            first.attributes, session_id=session_id, own_attempts=[a for t in turns for a in t.evidence],
        )
        return SessionResult(
            session_id, [(t.trace_id, t.run_span_id) for t in turns], first.agent, expectation.name,
            evaluate(whole, expectation), time.time(), first.start_ns, max(t.end_ns for t in turns),
            evaluator=Evaluator(VERSION, expectation.digest),
        )

    def _close(self, session_id: str) -> None:
        del self._open[session_id]
        self._remember_closed(session_id)

    def _remember_closed(self, session_id: str) -> None:
        self._closed[session_id] = None
        while len(self._closed) > self.max_sessions:
            self._closed.popitem(last=False)

    def _drop(self, reason: str) -> None:
        self.stats.dropped[reason] = self.stats.dropped.get(reason, 0) + 1


def _digest(turns: list[Turn]) -> str:
    """What was judged: the turns' ids and their attempts' outcomes, in order."""
    text = repr([
        (t.trace_id, t.run_span_id, t.start_ns, t.end_ns, [(a.tool, a.outcome, a.call_id, a.span_id) for a in t.evidence])
        for t in turns
    ])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _turn(run: Run) -> Turn:
    # An attempt the spans gave no time takes its run's start, so that it stays in its turn
    # when the session's chain is put in start order.
    evidence = [a if a.start_ns else replace(a, start_ns=run.start_ns) for a in run.evidence()]
    return Turn(
        run.trace_id, run.span_id, run.agent, run.span_name, dict(run.attributes), run.start_ns, run.end_ns, evidence,
        run.continues,
    )
