"""Publishing judgements: the fan-out to the sinks, and holding what a sink could not take.

``Publisher`` hands each tick's judgements to every sink (``Sinks``: each isolated, each
failure counted). A sink that raised ``SinkUnavailable`` has its judgements held
(``HeldVerdicts``) and offered again on later ticks, with backoff, until it takes them; the
trace of a held verdict leaves the buffer as usual, but its leaving is told to the front
door (``on_leave``: the intake log releases the trace's segments) only once every verdict
of it is published. What is retried, and what is dropped, is counted by sink and reason.
"""

from __future__ import annotations

import logging
from typing import Callable, Protocol, Sequence

from .held import DROPPED_BACKLOG_FULL, HeldVerdicts
from .sinks import SINK_ERROR, Judgement, Sink, Sinks

logger = logging.getLogger(__name__)


class PublishingObserver(Protocol):
    def sink_failed(self, sink: str) -> None: ...

    def sink_retried(self, sink: str, reason: str) -> None: ...

    def verdicts_dropped(self, count: int, sink: str, reason: str) -> None: ...


class Publisher:
    """The sinks, and the verdicts held for those that could not take them yet."""

    def __init__(
        self, sinks: Sequence[Sink], held: HeldVerdicts, observer: PublishingObserver | None = None,
        on_leave: Callable[[int], None] | None = None,
    ) -> None:
        self.sinks = Sinks(sinks, on_failure=observer.sink_failed if observer is not None else None)
        self.held = held
        self._observer = observer
        self._on_leave = on_leave

    def publish(self, judgements: Sequence[Judgement], sizes: Sequence[int], now: float, extra: Sequence[Sink] = ()) -> None:
        """Publish to every sink; hold what one that is unavailable did not take (``sizes``: each judgement's bytes)."""
        for name, reason in self.sinks.publish(judgements, extra):
            dropped, released = self.held.hold(name, reason, judgements, sizes, now)
            if dropped:
                logger.error("otel-reliability dropped %d held verdict(s) for sink %r: its backlog is full", dropped, name)
                if self._observer is not None:
                    self._observer.verdicts_dropped(dropped, name, DROPPED_BACKLOG_FULL)
            self._left(released)

    def retry(self, now: float) -> None:
        """Offer each sink whose backoff has passed everything held for it."""
        for name, judgements in self.held.due(now):
            outcome = self.sinks.retry(name, judgements)
            if outcome is None:
                logger.info("otel-reliability sink %r took %d held verdict(s)", name, len(judgements))
                self._left(self.held.taken(name, judgements))
                continue
            if self._observer is not None:
                self._observer.sink_retried(name, outcome)
            if outcome == SINK_ERROR:  # not a reason that passes: holding them would retry forever
                self._left(self.held.taken(name, judgements))
                if self._observer is not None:
                    self._observer.verdicts_dropped(len(judgements), name, SINK_ERROR)
            else:
                self.held.refused(name, outcome, now)

    def leave(self, trace_id: int) -> None:
        """A trace left the buffer: tell ``on_leave`` now, or once its held verdicts are published."""
        if self._on_leave is not None and not self.held.defer_leave(trace_id):
            self._on_leave(trace_id)

    def _left(self, trace_ids: list[int]) -> None:
        if self._on_leave is not None:
            for trace_id in trace_ids:
                self._on_leave(trace_id)
