"""Runs that ended waiting on a human, kept so that the run resuming them can join them.

agno's ``continue_run`` and pydantic-ai's deferred tool results resume a paused run in
a new trace. Assembly joins the two when it sees both (``assembly`` decides how);
this bounded memory is what lets the engine hand it the paused run's records when
only the resuming trace is at hand. ``Resumers`` is the other direction: the buffered
traces that may resume a run, so that a trace judged before the run it resumes was known
is judged again when it becomes known. ``SharedPausedRuns`` is how processes that judge
parts of the same traffic (receivers behind a load balancer) tell each other of the runs
they judged paused.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Protocol

from ..model import PENDING, EventRecord, Role, Run, SpanRecord
from .sizes import records_size

# Why a paused run was let go before a run resumed it (``PausedRuns.dropped``).
MAX_PAUSED_RUNS = "max_paused_runs"  # the least recent key made room for another
CROWDED_KEY = "per_key"  # more paused runs waited under one key than ``PausedRuns.PER_KEY``
MAX_BYTES = "max_bytes"  # they alone outgrew the byte budget


def _call(call_id: str) -> str:
    return f"call:{call_id}"


def _run(run_key: str) -> str:
    return f"run:{run_key}"


def resume_keys(record: SpanRecord) -> list[str]:
    """The keys under which ``record`` may resume a paused run: the calls it answers, and its
    run identity when it is a run span (what ``remember`` returns for the run it resumes)."""
    keys = [_call(response.call_id) for response in record.responses]
    if record.role is Role.AGENT_RUN and record.run_key is not None:
        keys.append(_run(record.run_key))
    return keys


class PausedRuns:
    """Records of the most recent runs that ended with pending calls (least recent dropped first).

    Several paused runs may wait under one key: models reuse call ids (``call_1``), so two
    agents' runs can leave the same call id pending. Each is kept; assembly joins a resuming
    run only to a paused run of its own agent.

    ``bytes`` is the estimated size of the records kept (each paused run once, under however
    many keys); they count toward the engine's byte budget, and alone never exceed
    ``max_bytes``. A paused run let go is counted in ``dropped`` by reason once it is under
    no key any more.

    >>> PausedRuns().predecessors([], run_keys=[])
    []
    """

    PER_KEY = 16  # paused runs kept under one key, the most recent

    def __init__(self, capacity: int = 1_000, max_bytes: int | None = None) -> None:
        self._capacity = capacity
        self._max_bytes = max_bytes
        # key → paused runs (by the identity of their records) → their records
        self._by_key: OrderedDict[str, dict[tuple[int, int, int], list[SpanRecord]]] = OrderedDict()
        self._kept: dict[tuple[int, int, int], list[int]] = {}  # identity → [its bytes, keys holding it]
        self.bytes = 0
        self.dropped: dict[str, int] = {}

    def predecessors(self, records: Iterable[SpanRecord], run_keys: Iterable[str | None]) -> list[SpanRecord]:
        """Records of paused runs that ``records`` may resume: same run identity, or an answer to a pending call."""
        if not self._by_key:
            return []
        keys = [_call(response.call_id) for record in records for response in record.responses]
        keys += [_run(key) for key in run_keys if key is not None]
        found: dict[tuple[int, int], SpanRecord] = {}
        for key in keys:
            for paused in self._by_key.get(key, {}).values():
                for earlier in paused:
                    found.setdefault((earlier.trace_id, earlier.span_id), earlier)
        return list(found.values())

    def remember(self, run: Run, records: list[SpanRecord]) -> list[str]:
        """Keep ``records`` if ``run`` ended with pending calls; returns the keys they are kept under."""
        keys = [_call(a.call_id) for a in run.own_attempts if a.outcome == PENDING and a.call_id]
        if not keys:
            return keys
        if run.run_key is not None:
            keys.append(_run(run.run_key))
        self.keep(keys, records)
        return keys

    def keep(self, keys: list[str], records: list[SpanRecord]) -> None:
        """Keep ``records`` under ``keys``, as another process's ``remember`` returned them."""
        if not records:
            return
        first = records[0]
        identity = (first.trace_id, first.span_id, len(records))  # the same in every process it is handed to
        kept = self._kept.get(identity)
        if kept is None:
            kept = self._kept[identity] = [records_size(records), 0]
            self.bytes += kept[0]
        for key in keys:
            paused = self._by_key.setdefault(key, {})
            if paused.pop(identity, None) is None:
                kept[1] += 1
            paused[identity] = records
            while len(paused) > self.PER_KEY:
                oldest = next(iter(paused))
                del paused[oldest]
                self._let_go(oldest, CROWDED_KEY)
            self._by_key.move_to_end(key)
        while len(self._by_key) > self._capacity:
            self._drop_oldest_key(MAX_PAUSED_RUNS)
        while self._max_bytes is not None and self.bytes > self._max_bytes and self._by_key:
            self._drop_oldest_key(MAX_BYTES)

    def _drop_oldest_key(self, reason: str) -> None:
        _key, paused = self._by_key.popitem(last=False)
        for identity in paused:
            self._let_go(identity, reason)

    def _let_go(self, identity: tuple[int, int, int], reason: str) -> None:
        """One key less holds the paused run ``identity``; under none, it is dropped and counted."""
        kept = self._kept[identity]
        kept[1] -= 1
        if kept[1] == 0:
            del self._kept[identity]
            self.bytes -= kept[0]
            self.dropped[reason] = self.dropped.get(reason, 0) + 1


class SharedPausedRuns(Protocol):
    """Paused runs shared between processes (a receiver's PostgreSQL store keeps them).

    Each process still looks paused runs up in its own ``PausedRuns``: sharing costs one
    write per paused run and one cheap read per judge tick, not one per judged trace.
    """

    def share(self, keys: list[str], records: list[SpanRecord]) -> None:
        """Offer the others a run this process judged paused, under the keys ``remember`` returned."""
        ...

    def shared_since_last(self) -> list[tuple[list[str], list[SpanRecord]]]:
        """The paused runs the others shared since the last call, oldest first (at the first
        call, the most recent ones the store still holds)."""
        ...


class Resumers:
    """Buffered traces by the continuation keys their records carry (``resume_keys``).

    Lookups and removals cost O(1) however many traces share a key (models reuse call
    ids such as ``call_1``); a trace's keys go when the trace leaves the buffer.

    >>> resumers = Resumers()
    >>> resumers.traces("call:c1")
    ()
    """

    __slots__ = ("_by_key", "_keys_of")

    def __init__(self) -> None:
        self._by_key: dict[str, dict[int, None]] = {}  # insertion-ordered sets
        self._keys_of: dict[int, set[str]] = {}

    def index(self, records: Iterable[SpanRecord]) -> None:
        for record in records:
            if record.responses or record.run_key is not None:
                self._add(record.trace_id, resume_keys(record))

    def index_answers(self, events: Iterable[EventRecord]) -> None:
        """Index the calls GenAI event records answer (their spans' records will carry them)."""
        for event in events:
            if event.responses:
                self._add(event.trace_id, [_call(response.call_id) for response in event.responses])

    def _add(self, trace_id: int, keys: list[str]) -> None:
        if keys:
            self._keys_of.setdefault(trace_id, set()).update(keys)
            for key in keys:
                self._by_key.setdefault(key, {})[trace_id] = None

    def traces(self, key: str) -> tuple[int, ...]:
        """The buffered traces carrying ``key``, oldest first."""
        return tuple(self._by_key.get(key, ()))

    def drop(self, trace_id: int) -> None:
        for key in self._keys_of.pop(trace_id, ()):
            traces = self._by_key.get(key)
            if traces is not None:
                traces.pop(trace_id, None)
                if not traces:
                    del self._by_key[key]

    def __len__(self) -> int:
        return len(self._keys_of)
