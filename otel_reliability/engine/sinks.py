"""Where judgements go: one small protocol, and a fan-out that isolates each sink.

A sink is handed every judgement of a tick at once (stores and reputation write them in
one transaction). A sink that raises is logged and counted, and the others still run:
a broken store must not stop the metrics, nor a user's callback the store. A sink that
raises ``SinkUnavailable`` (a failure that can pass) is named to the caller, which holds its
judgements and offers them again (``publishing``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from ..model import Run
from ..results import RunResult
from ..session_results import SessionResult

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Judgement:
    """One judged top-level run, with what else its spans said about it."""

    run: Run
    result: RunResult
    late: bool = False  # a re-judgement: it supersedes the run's earlier one
    # attributes of other evaluators' gen_ai.evaluation.result events on the run's spans
    evaluations: tuple[Mapping[str, Any], ...] = ()
    denied_span_ids: frozenset[int] = field(default_factory=frozenset)  # calls an access policy stopped
    # Run spans of the same trace that are no longer top-level runs (judged before their parent
    # run arrived, or continued by a later run span): their earlier verdicts are void.
    superseded_runs: frozenset[int] = field(default_factory=frozenset)


class SinkUnavailable(Exception):
    """A sink failed for a reason that can pass (its store unreachable, its disk full, its
    connection closed): the judgements it did not take are held and offered again (``held``).
    ``reason`` is a fixed word (``unreachable``, ``disk_full``, ``locked``) retries are counted under."""

    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(message or reason)
        self.reason = reason


SINK_ERROR = "sink_error"  # what ``Sinks.retry`` says of a sink that raised anything else


class Sink(Protocol):
    """Receives judgements; ``close`` flushes what it holds. Raises ``SinkUnavailable`` when
    it cannot take them now but may later."""

    name: str

    def publish(self, judgements: Sequence[Judgement]) -> None: ...

    def close(self) -> None: ...


class CallbackSink:
    """Calls ``callback(result)`` for every judgement.

    >>> seen = []
    >>> CallbackSink(seen.append).close()
    """

    def __init__(self, callback: Callable[[RunResult], Any], name: str = "callback") -> None:
        self.name = name
        self._callback = callback

    def publish(self, judgements: Sequence[Judgement]) -> None:
        for judgement in judgements:
            self._callback(judgement.result)

    def close(self) -> None:
        pass


class Sinks:
    """Publishes to every sink in order; each failure is logged and counted by sink name.

    >>> Sinks([]).publish([])
    []
    """

    def __init__(self, sinks: Sequence[Sink], on_failure: Callable[[str], None] | None = None) -> None:
        self.sinks = list(sinks)
        self.failures: dict[str, int] = {}
        self._on_failure = on_failure

    def publish(self, judgements: Sequence[Judgement], extra: Sequence[Sink] = ()) -> list[tuple[str, str]]:
        """Hand ``judgements`` to every sink; returns ``(sink name, reason)`` for each of
        ``sinks`` that raised ``SinkUnavailable`` (its judgements are to be held and retried)."""
        if not judgements:
            return []
        unavailable = []
        for sink in self.sinks:
            reason = self._run(sink.name, sink.publish, judgements)
            if reason is not None and reason != SINK_ERROR:
                unavailable.append((sink.name, reason))
        for sink in extra:
            self._run(sink.name, sink.publish, judgements)
        return unavailable

    def retry(self, name: str, judgements: Sequence[Judgement]) -> str | None:
        """Offer held ``judgements`` to the sink ``name`` again: None when it took them, else
        why not (``SinkUnavailable``'s reason, or ``SINK_ERROR``)."""
        sink = next(s for s in self.sinks if s.name == name)
        return self._run(name, sink.publish, judgements)

    def publish_sessions(self, results: Sequence[SessionResult]) -> None:
        """Session verdicts, to the sinks that take them (``publish_sessions``: stores, metrics)."""
        if not results:
            return
        for sink in self.sinks:
            publish = getattr(sink, "publish_sessions", None)
            if publish is not None:
                self._run(sink.name, publish, results)

    def close(self) -> None:
        for sink in self.sinks:
            self._run(sink.name, sink.close)

    def _run(self, name: str, call: Callable[..., None], *args: Any) -> str | None:
        """Call the sink; None when it did not raise, else ``SinkUnavailable``'s reason or ``SINK_ERROR``."""
        try:
            call(*args)
            return None
        except SinkUnavailable as exc:
            logger.warning("otel-reliability sink %r cannot take verdicts now (%s): %s", name, exc.reason, exc.__cause__ or exc)
            outcome = exc.reason
        except BaseException:  # SystemExit from a user's callback included: sinks run on the
            # engine's worker, which must outlive whatever one sink does
            logger.exception("otel-reliability sink %r failed", name)
            outcome = SINK_ERROR
        self.failures[name] = self.failures.get(name, 0) + 1
        if self._on_failure is not None:
            self._on_failure(name)
        return outcome
