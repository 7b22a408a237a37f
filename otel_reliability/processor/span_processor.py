"""``ReliabilitySpanProcessor``: the in-process front door.

It wraps the processor that exports (``BatchSpanProcessor(exporter)``), forwards every
span to it, and judges each top-level agent run when its span ends. The app thread
only queues the ended span (and holds back spans that may be run spans, so that the
copy it forwards carries the verdict); adapting, assembling and matching happen on a
worker thread, which forwards the held spans once judged.

GenAI event log records reach the same worker through ``log_record_processor()`` (a
``LogRecordProcessor`` for the app's ``LoggerProvider``); they join their spans before the
run is judged.

The worker outlives whatever it runs: a sink, the user's callback or the wrapped processor
raising anything, ``SystemExit`` and ``KeyboardInterrupt`` included, is logged and counted
(``agent.reliability.sink.failures``), and the worker carries on. On the app's thread, an
exception the wrapped processor raises from ``on_start`` or ``on_end`` is counted the same way
(logged the first time) and never reaches the app's ``span.end()``; ``force_flush`` and
``shutdown``, which the app calls itself, raise what the wrapped processor raised.

After ``os.fork()`` (gunicorn ``--preload``, Celery prefork) the child gets a worker of its
own, with fresh locks and events. The parent first waits (up to a second, ``span_worker``) for
the worker to finish the batch in hand, so the child inherits the buffer between two
batches and *keeps* it: a run that started before the fork and ends in the child is judged
with the spans that ended before the fork. Spans queued but not yet handled at the fork are
the parent's to forward and judge; the child only buffers them, as evidence. When the
worker could not finish in time (a wrapped exporter blocking), the child starts with an
empty buffer instead, and the runs whose spans were open at the fork are forwarded without
a verdict (counted as dropped, reason ``fork``) rather than judged on half their spans.
A results store the processor opened itself is opened again in the child (a SQLite or
PostgreSQL connection must not cross a fork); a store object passed in is used as it is.

After ``shutdown()`` spans are not queued: each goes straight to the wrapped processor,
which does what it does after its own shutdown (``BatchSpanProcessor`` drops and counts it).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from ..adapters.conventions import use as use_conventions
from ..emitters.metrics import ReliabilityMetrics
from ..emitters.sinks import MetricsSink, PrintSink, StoreSink
from ..engine import CallbackSink, Engine, EngineSettings, Pipeline, Sink
from ..engine.unmatched import log_unmatched
from ..expectations import DEFAULT_EXPECTATION, Expectation, ExpectationError
from ..model import LogData
from ..results import RunResult
from ..session_results import SessionResult
from ..stores import ResultStore, open_store, parse_store_spec
from ..stores.spec import default_store
from ..engine.reload import REFUSED, RELOADED, Reloaded, reload_expectations
from .forking import register_fork_hooks
from .inline import active_check, register_processor
from .log_processor import ReliabilityLogRecordProcessor
from .span_judging import ProcessorStats, SpanJudging, UnavailableStore, flush_within, may_be_run_span
from .span_worker import WAKE_EVERY, SpanWorker

if TYPE_CHECKING:
    from ..reputation import Reputation

__all__ = ["ProcessorStats", "ReliabilitySpanProcessor"]

logger = logging.getLogger(__name__)

STORE_FROM_ENVIRONMENT = "$OTEL_RELIABILITY_STORE"  # read when the processor is made, not at import
# Results stores a forked child must neither use nor close (the parent's connections): kept
# referenced here so that no garbage collection closes them in the child either.
_INHERITED_STORES: list[Any] = []


class ReliabilitySpanProcessor(SpanProcessor):
    """Judges every agent run's tool calls as its span ends, and forwards every span.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(
    ...     ReliabilitySpanProcessor(SimpleSpanProcessor(InMemorySpanExporter()), store=None))
    """

    def __init__(
        self,
        span_processor: SpanProcessor | None = None,
        *,
        expectations: Sequence[Expectation | str | Path] = (),
        default_expectation: Expectation = DEFAULT_EXPECTATION,
        conventions: Sequence[str | Path] = (),
        store: str | Path | ResultStore | None = STORE_FROM_ENVIRONMENT,
        meter_provider: Any = None,
        on_result: Callable[[RunResult], None] | None = None,
        print_results: bool = False,
        sinks: Sequence[Sink] = (),
        reputation: Reputation | None = None,
        max_traces: int = EngineSettings.model_fields["max_traces"].default,
        max_spans_per_trace: int = EngineSettings.model_fields["max_spans_per_trace"].default,
        trace_ttl: float = EngineSettings.model_fields["trace_ttl"].default,
        max_paused_runs: int = EngineSettings.model_fields["max_paused_runs"].default,
        session_idle: float = EngineSettings.model_fields["session_idle"].default,
        max_sessions: int = EngineSettings.model_fields["max_sessions"].default,
        max_runs_per_session: int = EngineSettings.model_fields["max_runs_per_session"].default,
        max_buffered_bytes: int = EngineSettings.model_fields["max_buffered_bytes"].default,
        max_held_verdicts: int = EngineSettings.model_fields["max_held_verdicts"].default,
        max_held_bytes: int = EngineSettings.model_fields["max_held_bytes"].default,
        max_queue: int = 100_000,
        max_open_spans: int = 100_000,
        max_label_values: int = 100,
    ) -> None:
        settings = EngineSettings.checked(
            {"max_traces": max_traces, "max_spans_per_trace": max_spans_per_trace,
             "trace_ttl": trace_ttl, "max_paused_runs": max_paused_runs, "max_buffered_bytes": max_buffered_bytes,
             "session_idle": session_idle, "max_sessions": max_sessions, "max_runs_per_session": max_runs_per_session,
             "max_held_verdicts": max_held_verdicts, "max_held_bytes": max_held_bytes}
        )
        if conventions:  # the process reads with them from now on (docs/conventions.md)
            use_conventions(conventions)
        if reputation is not None:
            from ..reputation.processor import wire_reputation

            span_processor, sinks, expectations = wire_reputation(reputation, span_processor, sinks, expectations)
            standings = reputation.store_spec
            if store == STORE_FROM_ENVIRONMENT and standings is not None and parse_store_spec(standings).kind == "sqlite":
                store = standings  # one file for verdicts and standings
        if store == STORE_FROM_ENVIRONMENT:
            store = default_store()
        engine = Engine(expectations, default_expectation)  # a bad expectation file fails before the store is opened
        self._next = span_processor
        self._store_spec = store if isinstance(store, (str, Path)) else None  # opened again in a forked child
        opened = open_store(store) if isinstance(store, (str, Path)) else store
        metrics = ReliabilityMetrics(meter_provider, max_label_values=max_label_values)
        # Where each verdict goes, in this order; a failing one is logged, counted and skipped.
        self._store_sink = (
            StoreSink(opened, on_dropped=lambda count, reason: metrics.verdicts_dropped(count, "store", reason))
            if opened is not None else None
        )
        chosen: list[Sink] = [self._store_sink] if self._store_sink is not None else []
        chosen += [MetricsSink(metrics), *sinks]
        if on_result is not None:
            chosen.append(CallbackSink(on_result))
        if print_results:
            chosen.append(PrintSink())

        def new_pipeline() -> Pipeline:
            return Pipeline(
                engine, chosen, settings=settings, observer=metrics,
                on_unjudgeable=lambda _name, _exc: self._judging.count_drop("bad_expectation"),
            )

        self._judging = SpanJudging(new_pipeline, metrics, span_processor, max_open_spans)
        self.stats = self._judging.stats
        self._max_queue = max_queue
        self._max_open_spans = max_open_spans
        # Written by app threads, drained by the worker: dict and deque operations are
        # atomic under the GIL, which keeps the app-thread path lock-free. The worker is
        # woken only when a possible run span ends (or the backlog grows), not per span:
        # waking a sleeping thread costs a system call.
        self._open = self._judging.open_spans
        self._watchers = self._judging.watchers
        self._shut = False
        self._metrics = metrics
        self._wrapped_failures = 0  # the wrapped processor's exceptions on the app's thread
        metrics.register_buffered(lambda: self.buffered_traces)
        metrics.register_unmatched(engine.use.states)
        metrics.register_buffered_bytes(lambda: self.buffered_bytes)
        self._worker = SpanWorker(self._judging)
        self._backlog = self._worker.backlog  # the same deque for the processor's life, forks included
        register_processor(self)
        register_fork_hooks(self)

    @property
    def buffered_traces(self) -> int:
        """Traces with ended spans held for judging (bounded by ``max_traces``)."""
        return len(self._judging.pipeline)

    @property
    def buffered_bytes(self) -> int:
        """Estimated bytes of the ended spans held for judging and of paused runs (bounded by
        ``max_buffered_bytes``: beyond it the oldest traces are evicted, and counted)."""
        return self._judging.pipeline.buffered_bytes

    # -- app thread ---------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if not self._shut:
            span_id = span.context.span_id
            open_spans = self._open
            open_spans[span_id] = span
            if len(open_spans) > self._max_open_spans:
                self._judging.forget_oldest_open()
            check = active_check()
            if check is not None:
                self._watchers[span_id] = check
        if self._next is not None:
            try:
                self._next.on_start(span, parent_context=parent_context)
            except Exception:
                self._wrapped_failed("on_start", span)

    def on_end(self, span: ReadableSpan) -> None:
        if self._shut:  # nothing would judge it: the wrapped processor has it as it is
            if self._next is not None:
                try:
                    self._next.on_end(span)
                except Exception:
                    self._wrapped_failed("on_end", span)
            return
        backlog = len(self._backlog)
        span_id = span.context.span_id
        open_spans = self._open
        if backlog >= self._max_queue:
            open_spans.pop(span_id, None)
            self._judging.count_drop("queue_full")
            held = False
        else:
            # The span alone, not a (span, held) pair: a held span's id goes in a set
            # (about one span in ten) rather than the app thread allocating a tuple per span.
            if span_id in open_spans:
                # The SDK hands on_end a snapshot of the span: it stands in for the live span
                # until the worker takes both out, so that the live one (its locks and lists) goes
                # when the app drops it, as without this processor. Kept a batch window longer,
                # the live spans doubled what the app thread's garbage collections traverse.
                open_spans[span_id] = span
            held = may_be_run_span(span)
            if held:
                self._judging.held.add(id(span))  # before it is queued: the worker reads it then
            self._backlog.append(span)
            if held or backlog % WAKE_EVERY == 0:
                wake = self._worker.wake
                if not wake.is_set():
                    wake.set()
        if not held and self._next is not None:
            try:
                self._next.on_end(span)
            except Exception:  # the SDK's span.end() must not raise what an exporter's processor did
                self._wrapped_failed("on_end", span)

    def _wrapped_failed(self, call: str, span: Any) -> None:
        """The wrapped processor raised on the app's thread: logged once with its traceback, counted always."""
        if not self._wrapped_failures:
            logger.exception("otel-reliability: the wrapped span processor's %s raised on span %r (logged once, "
                             "counted in agent.reliability.sink.failures)", call, getattr(span, "name", span))
        self._wrapped_failures += 1
        self._metrics.sink_failed("span_processor")

    def log_record_processor(self) -> ReliabilityLogRecordProcessor:
        """A ``LogRecordProcessor`` that hands GenAI event log records to this processor, for
        instrumentations that write message content as log records (openai-v2's default mode).

        >>> from opentelemetry.sdk._logs import LoggerProvider
        >>> spans = ReliabilitySpanProcessor(store=None)
        >>> LoggerProvider().add_log_record_processor(spans.log_record_processor())
        >>> spans.shutdown()
        """
        return ReliabilityLogRecordProcessor(self)

    def queue_log(self, log: LogData) -> None:
        """Queue a log record for the worker (app thread: one append, as for a span)."""
        if self._shut:
            self._judging.count_log_drop("shutdown")
            return
        if len(self._backlog) >= self._max_queue:
            self._judging.count_log_drop("queue_full")
            return
        self._backlog.append(log)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """True when every span queued before the call was judged, enriched and forwarded, and
        the wrapped processor's own ``force_flush`` said True, all within ``timeout_millis``;
        False when the time ran out first (a wrapped exporter blocking, say)."""
        deadline = time.monotonic() + timeout_millis / 1000
        if not self.drain(timeout_millis / 1000):
            return False
        if self._next is None:
            return True
        return flush_within(self._next, deadline)

    def reload_expectations(self, expectations: Sequence[Expectation | str | Path]) -> Reloaded:
        """Put a new set of expectations in force without a restart, all or nothing: every
        file is validated first, and one that cannot be used raises its ``ExpectationError``
        with the old set still in force. Traces are judged whole under one set
        (``engine/reload.py``). Counted in ``agent.reliability.expectations.reloads`` and
        logged with the new digests; returns them.

        >>> from otel_reliability.expectations import Expectation
        >>> processor = ReliabilitySpanProcessor(store=None)
        >>> processor.reload_expectations([Expectation(name="calc", expected_tool_calls=["multiply"])]).digests[0][0]
        'calc'
        >>> processor.shutdown()
        """
        try:
            reloaded = reload_expectations(self._judging.pipeline, expectations)
        except ExpectationError as exc:
            self._metrics.expectations_reloaded(REFUSED)
            logger.warning("otel-reliability: expectations not reloaded, the old ones stay in force: %s", exc)
            raise
        self._metrics.expectations_reloaded(RELOADED)
        logger.info("otel-reliability: expectations reloaded: %s", reloaded.describe())
        return reloaded

    def judge_session(self, session_id: str, timeout: float = 30.0) -> SessionResult | None:
        """Judge the session (conversation) ``session_id`` now, from its runs judged so far, by the
        ``scope: session`` expectations; stored and counted like an idle session's verdict. None
        when no session expectation selects it or no judged run names it. Sessions are also
        judged once idle for ``session_idle``, and at ``shutdown``.

        >>> from otel_reliability.expectations import Expectation
        >>> processor = ReliabilitySpanProcessor(store=None,
        ...     expectations=[Expectation(name="conversation", scope="session", expected_tool_calls=["a"])])
        >>> processor.judge_session("no-such-conversation") is None
        True
        >>> processor.shutdown()
        """
        if not self._worker.is_current():  # (a sink asking would wait on itself)
            self.drain(timeout)  # the runs queued so far are judged first: they may be its turns
        return self._judging.pipeline.judge_session(session_id)

    def shutdown(self) -> None:
        """Judge and forward what is queued, then shut the wrapped processor down. Spans that
        end afterwards go straight to the wrapped processor (see the module's docstring)."""
        if self._shut:
            return
        self._shut = True  # from here on_end forwards instead of queueing
        self._worker.stop()
        self._judging.forward_deferred()  # their ancestors never ended here: forwarded as they are
        self._judging.pipeline.end_sessions()  # the end of the input: sessions not judged yet are judged as they stand
        self._judging.pipeline.close()
        log_unmatched(self._judging.pipeline.engine.use, "otel-reliability span processor")
        if self._next is not None:
            self._next.shutdown()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every span queued so far has been judged and forwarded; False on timeout."""
        return self._worker.drain(timeout)

    # -- fork (forking.register_fork_hooks calls these on the thread that forks) -------------

    def before_fork(self) -> None:
        """Let the worker finish its batch, and hold it there until the fork is done."""
        if not self._shut:
            self._worker.before_fork()

    def after_fork_in_parent(self) -> None:
        self._worker.after_fork_in_parent()

    def after_fork_in_child(self) -> None:
        """A worker, locks and events of the child's own: the parent's worker did not come along."""
        quiet, inherited = self._worker.after_fork_in_child()
        self._judging.deferred.clear()  # the parent forwards the run spans it keeps waiting
        if self._shut:  # shut down before the fork: on_end forwards, nothing is left to judge
            return
        if quiet:
            self._judging.pipeline.lock = threading.Lock()
        else:
            self._judging.start_over_after_torn_fork()
            lost = sum(isinstance(item, ReadableSpan) for item in inherited)
            if lost:
                self._judging.count_drop("fork", lost)
            inherited = []
        self._reopen_store()
        self._worker.restart_in_child(inherited)

    def _reopen_store(self) -> None:
        sink = self._store_sink
        if self._store_spec is None or sink is None:
            return
        _INHERITED_STORES.append(sink.store)  # the parent's connection: never used, never closed here
        try:
            sink.store = open_store(self._store_spec)
        except Exception:  # verdicts are then not stored (each failure counted); the rest goes on
            logger.exception("otel-reliability could not open the results store again after a fork")
            sink.store = UnavailableStore()
