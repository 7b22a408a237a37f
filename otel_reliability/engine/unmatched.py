"""Expectations that selected no run: a typo in ``match`` must not pass silently.

A loaded expectation that never judged a run (or a session) is almost always a mistake — an
agent name misspelt, a rule shadowed by an earlier one that matches the same runs — and the
runs it was meant for fall back to ``default``, which passes a wrong-argument call. The
engine notes every expectation it chooses; front doors ask what is still unmatched: ``eval``
warns (``--strict-expectations``: an error), the span processor and the receiver count it
(``agent.reliability.expectations.unmatched``) and name each once in their logs.
"""

from __future__ import annotations

import logging
import threading
from typing import Sequence

from ..expectations import Expectation
from ..model import Run

logger = logging.getLogger(__name__)


class ExpectationUse:
    """Which loaded expectations have been chosen for a run or a session so far.

    >>> use = ExpectationUse([Expectation(name="a"), Expectation(name="b")])
    >>> use.chosen("a")
    >>> use.unmatched()
    ['b']
    >>> use.states()
    {'a': False, 'b': True}
    >>> use.untold(), use.untold()
    (['b'], [])
    """

    def __init__(self, expectations: Sequence[Expectation]) -> None:
        self.names = [e.name for e in expectations]  # load order, for stable messages
        self._unmatched = set(self.names)
        self._told: set[str] = set()
        self._lock = threading.Lock()  # chosen on the judging thread, read by metric callbacks

    def replace(self, expectations: Sequence[Expectation]) -> None:
        """A reload put ``expectations`` in force: each is unmatched until it judges something,
        an expectation that stays is logged again if it stays unmatched (``engine.reload``)."""
        with self._lock:
            self.names = [e.name for e in expectations]
            self._unmatched = set(self.names)
            self._told = set()

    def chosen(self, name: str) -> None:
        """The expectation of that name judged a run or a session (fast: a set discard)."""
        if name in self._unmatched:
            with self._lock:
                self._unmatched.discard(name)

    def unmatched(self) -> list[str]:
        """The loaded expectations not chosen yet, in load order."""
        with self._lock:
            return [name for name in self.names if name in self._unmatched]

    def states(self) -> dict[str, bool]:
        """Every loaded expectation's name → whether it is still unmatched (a metric's callback)."""
        with self._lock:
            return {name: name in self._unmatched for name in self.names}

    def untold(self) -> list[str]:
        """The unmatched expectations not returned by an earlier call: each is logged once."""
        with self._lock:
            fresh = [name for name in self.names if name in self._unmatched and name not in self._told]
            self._told.update(fresh)
            return fresh


def why_unmatched(expectation: Expectation, runs: Sequence[Run], judged_by: Sequence[str]) -> str:
    """One line on why ``expectation`` judged none of ``runs`` (``judged_by[i]`` is the
    expectation that judged ``runs[i]``).

    >>> from otel_reliability.expectations import Match
    >>> calc = Run(1, 2, "calculator", "invoke_agent calculator", 0, 1)
    >>> why_unmatched(Expectation(name="calc", match=Match(agent="calcuator")), [calc], ["default"])
    "expectation 'calc' matched none of the 1 run(s): its match {agent: calcuator} selects none (agents seen: calculator)"
    >>> why_unmatched(Expectation(name="late"), [calc], ["first"])
    "expectation 'late' matched none of the 1 run(s): the 1 run(s) it selects were judged by an earlier rule (first)"
    """
    head = f"expectation {expectation.name!r} matched none of the {len(runs)} run(s)"
    if expectation.scope == "session":
        return f"{head}: no session's first run is selected by it (or no run names a conversation)"
    selected = [
        name for run, name in zip(runs, judged_by, strict=True)
        if expectation.applies_to(run.agent, run.span_name, run.attributes)
    ]
    if selected:
        earlier = ", ".join(sorted(set(selected)))
        return f"{head}: the {len(selected)} run(s) it selects were judged by an earlier rule ({earlier})"
    match = expectation.match.model_dump(exclude_none=True) if expectation.match is not None else {}
    spelled = ", ".join(f"{key}: {value}" for key, value in match.items())
    agents = ", ".join(sorted({run.agent for run in runs})[:10])
    return f"{head}: its match {{{spelled}}} selects none (agents seen: {agents})"


def log_unmatched(use: ExpectationUse, who: str) -> None:
    """Name in the log, once each, the loaded expectations that have judged no run yet (the
    span processor and the receiver call this when they stop)."""
    for name in use.untold():
        logger.warning(
            "%s: expectation %r judged no run since it was loaded: check its match (the runs it was "
            "meant for, if any, were judged by the default expectation)", who, name,
        )
