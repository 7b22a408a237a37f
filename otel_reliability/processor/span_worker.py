"""The queue between the app's threads and the span processor's worker thread.

App threads append ended spans, log records and markers to ``backlog`` and set ``wake``
when the worker should look (a possible run span ended, or the backlog grew); the worker
hands each batch to ``SpanJudging.process``. Appending to a deque is atomic, so the app
thread takes no lock. The worker holds ``batch_lock`` while it handles a batch, so that a
fork happens between two batches (``before_fork``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Sequence

from opentelemetry.sdk.trace import ReadableSpan

from ..model import LogData
from ..suppression import suppress_instrumentation_in_this_thread
from .span_judging import SpanJudging

logger = logging.getLogger(__name__)

WAKE_EVERY = 1024  # also wake the worker each time this many spans wait
_IDLE_WAKE_SECONDS = 0.5  # and at least this often, so spans of unfinished runs get buffered
# After each batch the worker lets spans gather this long (unless drain() or shutdown()
# asks for it): every wake-up costs a GIL hand-over and cold caches. Waking once per run
# instead doubled the worker's CPU per trace when runs arrive as agents make them, and
# raised the app thread's (benchmarks/processor_overhead.py). In its paced loop 5-20 ms cost
# the worker 260-310 us a trace, 50 ms and more 213-240 us; drain() does not wait for it.
_BATCH_WINDOW_SECONDS = 0.05
# How long a fork waits for the worker to finish its batch: long enough for any batch that
# is not stuck in a blocked exporter, short enough not to stall a server starting workers.
_FORK_WAIT_SECONDS = 1.0


class _Stop:
    pass


class SpanWorker:
    """The backlog and the thread that judges it (``ReliabilitySpanProcessor`` makes one).

    >>> from otel_reliability import ReliabilitySpanProcessor
    >>> processor = ReliabilitySpanProcessor(store=None)
    >>> processor.drain(timeout=5)  # waits for this worker
    True
    >>> processor.shutdown()
    """

    def __init__(self, judging: SpanJudging) -> None:
        self._judging = judging
        self.backlog: deque = deque()
        self.wake = threading.Event()
        self._hurry = threading.Event()  # cuts the batch window short
        self._batch_lock = threading.Lock()
        self._quiet_for_fork = False
        self._thread = self._start(())

    def is_current(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, marker: Any) -> None:
        self.backlog.append(marker)
        self.wake.set()
        self._hurry.set()

    def drain(self, timeout: float) -> bool:
        """Wait until every item queued so far has been handled; False on timeout."""
        if not self._thread.is_alive():  # after stop: only what no worker will ever handle is left
            return not any(isinstance(item, (ReadableSpan, LogData)) for item in list(self.backlog))
        done = threading.Event()
        self.submit(done)
        return done.wait(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Handle what is queued, stop the thread, then forward what came in meanwhile unjudged."""
        if self._thread.is_alive():
            self.submit(_Stop())
            self._thread.join(timeout=timeout)
        self._forward_leftovers()

    def _start(self, inherited: Sequence[Any]) -> threading.Thread:
        thread = threading.Thread(target=self._work, args=(inherited,), name="otel-reliability", daemon=True)
        thread.start()
        return thread

    def _work(self, inherited: Sequence[Any]) -> None:
        suppress_instrumentation_in_this_thread()  # the store's writes are not the app's spans
        judging = self._judging
        if inherited:  # queued in the parent before a fork: the parent forwards and judges them
            with self._batch_lock:
                spans = [item for item in inherited if isinstance(item, ReadableSpan)]
                judging.process(spans, [item for item in inherited if type(item) is LogData], judge=False)
        while True:
            try:
                self.wake.wait(_IDLE_WAKE_SECONDS)
                self.wake.clear()
                with self._batch_lock:
                    stopped = self._handle_backlog()
                    if not stopped:
                        judging.sweep()
                if stopped:
                    return
                if self._hurry.wait(_BATCH_WINDOW_SECONDS):
                    self._hurry.clear()
            except BaseException:  # the worker outlives anything (process() already guards each batch)
                logger.exception("otel-reliability's worker failed; it carries on")
                judging.count_drop("internal_error")

    def _handle_backlog(self) -> bool:
        """Process what is queued, up to and through each marker; True at the stop marker."""
        batch: list[ReadableSpan] = []
        logs: list[LogData] = []
        process = self._judging.process
        while self.backlog:
            item = self.backlog.popleft()
            if isinstance(item, (_Stop, threading.Event)):
                process(batch, logs)
                batch, logs = [], []
                if isinstance(item, _Stop):
                    return True
                item.set()
            elif type(item) is LogData:
                logs.append(item)
            else:
                batch.append(item)
        process(batch, logs)
        return False

    def _forward_leftovers(self) -> None:
        judging = self._judging
        while self.backlog:
            try:
                item = self.backlog.popleft()
            except IndexError:
                return
            if isinstance(item, threading.Event):
                item.set()
            elif type(item) is LogData:
                judging.count_log_drop("shutdown")
            elif isinstance(item, ReadableSpan) and id(item) in judging.held:  # the others went on in on_end
                judging.held.discard(id(item))
                judging.forward([item])

    # -- fork ----------------------------------------------------------------------------

    def before_fork(self) -> None:
        """Let the thread finish its batch, and hold it there until the fork is done."""
        thread = self._thread
        if not thread.is_alive() or thread is threading.current_thread():
            self._quiet_for_fork = False
            return
        self._quiet_for_fork = self._batch_lock.acquire(timeout=_FORK_WAIT_SECONDS)

    def after_fork_in_parent(self) -> None:
        if self._quiet_for_fork:
            self._quiet_for_fork = False
            self._batch_lock.release()

    def after_fork_in_child(self) -> tuple[bool, list[Any]]:
        """Fresh locks and events (the parent's thread did not come along); returns whether
        the fork came between two batches, and what was queued at the fork (taken out)."""
        quiet, self._quiet_for_fork = self._quiet_for_fork, False
        self._batch_lock = threading.Lock()
        self.wake = threading.Event()
        self._hurry = threading.Event()
        inherited = list(self.backlog)
        self.backlog.clear()
        return quiet, inherited

    def restart_in_child(self, inherited: Sequence[Any]) -> None:
        """The child's own thread, which first buffers ``inherited`` as evidence."""
        self._thread = self._start(inherited)
