"""Verdicts a sink could not take yet, held and retried: a verdict is published or its trace is kept.

A sink that fails for a reason that can pass (its store unreachable, its disk full, its
connection closed) raises ``SinkUnavailable``. The judgements it did not take are held here,
per sink, and offered to it again with exponential backoff (``FIRST_RETRY_S`` doubling up
to ``LAST_RETRY_S``, as the Collector's exporters retry), all of a sink's at once, until
it takes them. While a trace has a verdict held, its leaving the buffer is not passed on
(``defer_leave``): the receiver's intake log keeps the segments that hold its spans, so a
crash meanwhile replays and judges it again. A re-judgement of a held run replaces the held
one (the later verdict supersedes it anyway).

The backlog is bounded in count and bytes (``max_verdicts``, ``max_bytes``; a held
judgement weighs what its trace weighed in the buffer): at the bound, ``at_bound`` tells the
receiver to refuse new work with the retryable status, as the Collector's exporter queue
does when full. Judging what is already buffered may take the backlog past it; beyond twice
the bound the oldest held verdicts are dropped, counted (``DROPPED_BACKLOG_FULL``) — the span
processor, which cannot refuse its app, meets that limit first.

>>> held = HeldVerdicts(max_verdicts=10, max_bytes=1 << 20)
>>> held.at_bound, held.holds(1)
(False, False)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Sequence

from .sinks import Judgement

FIRST_RETRY_S = 0.25
LAST_RETRY_S = 5.0
DROPPED_BACKLOG_FULL = "held_backlog_full"  # a held verdict let go beyond twice the bound


@dataclass(slots=True)
class _Backlog:
    """One sink's held judgements by run, oldest first, and when to offer them again."""

    judgements: OrderedDict[tuple[int, int], tuple[Judgement, int]] = field(default_factory=OrderedDict)
    next_try: float = 0.0
    delay: float = FIRST_RETRY_S
    reason: str = ""


class HeldVerdicts:
    """Every sink's held judgements; thread-safe (the buffer tells of leaving traces from serving threads)."""

    def __init__(self, max_verdicts: int, max_bytes: int) -> None:
        self.max_verdicts = max_verdicts
        self.max_bytes = max_bytes
        self._backlogs: dict[str, _Backlog] = {}
        self._by_trace: dict[int, int] = {}  # trace id → judgements held for it, over every sink
        self._left: set[int] = set()  # held traces that left the buffer meanwhile
        self.count = 0
        self.bytes = 0
        self._lock = threading.Lock()

    @property
    def at_bound(self) -> bool:
        return self.count >= self.max_verdicts or self.bytes >= self.max_bytes

    def holds(self, trace_id: int) -> bool:
        return trace_id in self._by_trace

    def trace_ids(self) -> list[int]:
        """The traces with a verdict held (their intake segments must outlive a stop)."""
        with self._lock:
            return list(self._by_trace)

    def reasons(self) -> dict[str, tuple[int, str]]:
        """By sink: how many verdicts it holds, and why it did not take them."""
        with self._lock:
            return {name: (len(b.judgements), b.reason) for name, b in self._backlogs.items() if b.judgements}

    def hold(
        self, sink: str, reason: str, judgements: Sequence[Judgement], sizes: Sequence[int], now: float
    ) -> tuple[int, list[int]]:
        """Hold what ``sink`` did not take; returns how many held verdicts were dropped beyond
        twice the bound, and the traces that left the buffer and hold nothing more because of it."""
        with self._lock:
            backlog = self._backlogs.setdefault(sink, _Backlog())
            if not backlog.judgements:
                backlog.delay, backlog.next_try = FIRST_RETRY_S, now + FIRST_RETRY_S
            backlog.reason = reason
            for judgement, size in zip(judgements, sizes, strict=True):
                key = (judgement.result.trace_id, judgement.result.run_span_id)
                replaced = backlog.judgements.pop(key, None)
                if replaced is not None:
                    self._forget(key[0], replaced[1])
                backlog.judgements[key] = (judgement, size)
                self._by_trace[key[0]] = self._by_trace.get(key[0], 0) + 1
                self.count += 1
                self.bytes += size
            return self._drop_beyond_bound(backlog)

    def due(self, now: float) -> list[tuple[str, list[Judgement]]]:
        """The sinks whose backoff has passed, each with every judgement it holds."""
        with self._lock:
            return [
                (name, [j for j, _ in b.judgements.values()])
                for name, b in self._backlogs.items() if b.judgements and now >= b.next_try
            ]

    def taken(self, sink: str, judgements: Sequence[Judgement]) -> list[int]:
        """``sink`` took these: let them go; returns the traces that left the buffer while held
        and now hold nothing more (their leaving is passed on now)."""
        released = []
        with self._lock:
            backlog = self._backlogs[sink]
            for judgement in judgements:
                key = (judgement.result.trace_id, judgement.result.run_span_id)
                held = backlog.judgements.get(key)
                if held is not None and held[0] is judgement:  # not replaced by a re-judgement meanwhile
                    del backlog.judgements[key]
                    if self._forget(key[0], held[1]):
                        released.append(key[0])
            backlog.delay = FIRST_RETRY_S
        return released

    def refused(self, sink: str, reason: str, now: float) -> None:
        """``sink`` failed again: offer its backlog later, twice as late (at most ``LAST_RETRY_S``)."""
        with self._lock:
            backlog = self._backlogs[sink]
            backlog.reason = reason
            backlog.delay = min(backlog.delay * 2, LAST_RETRY_S)
            backlog.next_try = now + backlog.delay

    def defer_leave(self, trace_id: int) -> bool:
        """A trace leaves the buffer: True (and remembered) when a verdict of it is held."""
        with self._lock:
            if trace_id not in self._by_trace:
                return False
            self._left.add(trace_id)
            return True

    def _forget(self, trace_id: int, size: int) -> bool:
        """One judgement of ``trace_id`` let go; True when the trace left and holds no more."""
        self.count -= 1
        self.bytes -= size
        remaining = self._by_trace[trace_id] - 1
        if remaining:
            self._by_trace[trace_id] = remaining
            return False
        del self._by_trace[trace_id]
        if trace_id in self._left:
            self._left.discard(trace_id)
            return True
        return False

    def _drop_beyond_bound(self, backlog: _Backlog) -> tuple[int, list[int]]:
        dropped, released = 0, []
        while backlog.judgements and (self.count > 2 * self.max_verdicts or self.bytes > 2 * self.max_bytes):
            key, (_, size) = backlog.judgements.popitem(last=False)
            dropped += 1
            if self._forget(key[0], size):
                released.append(key[0])
        return dropped, released
