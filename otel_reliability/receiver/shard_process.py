"""One shard's process, and the serving process's pipe to it.

``ShardWorker`` starts a shard (``receiver.shards``) in a process of its own and talks to
it over a pipe: calls carry an id and are answered in order. The shard's main loop reads
requests and judges between them; with an intake log, its answers to commits go out once
the log has the request on disk (``_DurableReplies``).
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import queue
import signal
import threading
import time
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any, Callable

from ..engine import Turn
from ..model import SpanRecord
from ..sources import Shard
from ..suppression import suppress_instrumentation_in_this_thread
from .admission import Reservations
from .config import ReceiverConfig
from .intake import Body, IntakeError
from .intake_log import IntakeLog
from .outcomes import Overloaded
from .service import ReceiverService
from .tuning import tune_garbage_collection, tune_malloc

logger = logging.getLogger(__name__)

REPLY_TIMEOUT_S = 120.0  # a shard answers once it has buffered a request's spans: longer means it is stuck


class ShardWorker:
    """One shard in a child process, and the pipe to it. Calls carry an id and are answered
    in order; a reader thread hands answers to their callers and runs the shard's notices."""

    def __init__(self, config: ReceiverConfig, shard: Shard, on_paused, on_turn) -> None:
        self.shard = shard
        self._on_paused = on_paused
        self._on_turn = on_turn
        self._connection, child_end = multiprocessing.Pipe()
        context = multiprocessing.get_context("spawn")  # the serving process runs threads: no fork
        self._process = context.Process(
            target=_shard_main,
            args=(config.model_dump(), shard.index, shard.count, child_end),
            name=f"otel-reliability-shard-{shard.index}",
            daemon=True,
        )
        self._process.start()
        child_end.close()
        self._ids = itertools.count()
        self._replies: dict[int, Future[Any]] = {}
        self._order_lock = threading.Lock()  # call ids follow the order of the outbox
        # Messages go out from a thread of their own: writing a request's bytes waits until
        # this shard reads them, and the other shards must get theirs meanwhile.
        self._outbox: queue.SimpleQueue[tuple[tuple, bytes | None, Future | None] | None] = queue.SimpleQueue()
        self._ready: Future = Future()
        self._reader = threading.Thread(target=self._read, name=f"otel-reliability-shard-{shard.index}-reader", daemon=True)
        self._reader.start()
        self._sender = threading.Thread(target=self._send, name=f"otel-reliability-shard-{shard.index}-sender", daemon=True)
        self._sender.start()

    def wait_ready(self) -> None:
        error = self._ready.result(timeout=120)
        if error:
            raise OSError(f"worker {self.shard.index} could not start: {error}")

    def call(self, kind: str, *args: Any, payload: bytes | None = None) -> Future:
        """Queue a call (``payload`` raw after it: no pickled copy of a request body); returns
        at once, the answer comes in the future."""
        reply: Future = Future()
        with self._order_lock:
            call_id = reply.call_id = next(self._ids)  # type: ignore[attr-defined]  # a reservation's name
            self._replies[call_id] = reply
            self._outbox.put(((kind, call_id, *args), payload, reply))
        return reply

    def tell(self, kind: str, *args: Any) -> None:
        with self._order_lock:
            self._outbox.put(((kind, None, *args), None, None))

    def _send(self) -> None:
        while (message := self._outbox.get()) is not None:
            head, payload, reply = message
            try:
                self._connection.send(head)
                if payload is not None:
                    self._connection.send_bytes(payload)
            except Exception as exc:  # the sender goes on: the messages after this one are not lost with it
                gone = isinstance(exc, (OSError, ValueError))  # the pipe is closed: the worker is down
                if reply is None:
                    logger.warning("worker %d did not get a %s notice: %s", self.shard.index, head[0],
                                   "it is gone" if gone else repr(exc))
                elif self._replies.pop(head[1], None) is not None:
                    reply.set_exception(_down(self.shard, exc) if gone else exc)

    def result(self, reply: Future) -> Any:
        """The shard's answer; ``IntakeError`` (503) when it is down or does not answer."""
        try:
            return reply.result(timeout=REPLY_TIMEOUT_S)
        except TimeoutError:
            raise _down(self.shard, f"no answer within {REPLY_TIMEOUT_S:.0f} s") from None

    def ask_to_stop(self) -> None:
        self.tell("stop")

    def join(self) -> None:
        self._process.join(timeout=60)
        if self._process.is_alive():
            logger.error("worker %d did not stop within 60 s; killing it", self.shard.index)
            self._process.kill()
        self._outbox.put(None)
        self._sender.join(timeout=10)
        self._connection.close()

    def _read(self) -> None:
        while True:
            try:
                kind, call_id, *payload = self._connection.recv()
            except (EOFError, OSError):
                break
            if kind == "ready":
                self._ready.set_result(payload[0])
            elif kind == "paused":
                self._on_paused(*payload, origin=self.shard.index)
            elif kind == "turn":
                self._on_turn(*payload)
            else:
                reply = self._replies.pop(call_id)
                reply.set_result(payload[0])
        if not self._ready.done():
            self._ready.set_result("it exited while starting")
        for call_id in list(self._replies):
            if (unanswered := self._replies.pop(call_id, None)) is not None:  # else the sender failed it already
                unanswered.set_exception(_down(self.shard, "it exited"))


def _down(shard: Shard, why: Any) -> IntakeError:
    logger.error("worker %d is down: %s", shard.index, why)
    return IntakeError(503, "UNAVAILABLE", f"receiver worker {shard.index} is down; retry later")


def _shard_main(config_data: dict, index: int, count: int, connection: Connection) -> None:
    # The serving process decides when a shard stops: a terminal's Ctrl-C or a stop signal
    # sent to the whole process group must not kill a shard before it has judged its traces.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s shard {index} %(name)s: %(message)s")

    send_lock = threading.Lock()  # the loop and the thread answering durable commits share the pipe

    def send(message: tuple) -> None:
        with send_lock:
            connection.send(message)

    def hand_on(keys: list[str], records: list[SpanRecord]) -> None:
        send(("paused", None, keys, records))

    def hand_on_turn(owner: int, session_id: str, turn: Turn) -> None:
        send(("turn", None, owner, session_id, turn))

    tune_malloc()
    try:
        service = ReceiverService(
            ReceiverConfig.model_validate(config_data), Shard(index, count), on_paused=hand_on, on_turn=hand_on_turn
        )
    except Exception as exc:  # the serving process built the same service first: this is rare
        send(("ready", None, str(exc) or type(exc).__name__))
        return

    tune_garbage_collection()
    suppress_instrumentation_in_this_thread()
    # One thread reads requests and judges between them: a judge thread beside it would only
    # trade the GIL back and forth with it (and every message goes out from this thread).
    service.start(judge_thread=False)
    reservations = Reservations(service)
    durable = _DurableReplies(service.intake_log, send) if service.intake_log is not None else None
    send(("ready", None, ""))
    tick = service.judge_interval
    next_tick = time.monotonic() + tick
    try:
        while True:
            now = time.monotonic()
            if now >= next_tick:
                service.judge_tick()
                next_tick = now + tick
            if not connection.poll(max(0.0, next_tick - time.monotonic())):
                continue
            try:
                kind, call_id, *args = connection.recv()
            except EOFError:  # the serving process is gone: judge what is here and stop
                break
            if kind == "stop":
                break
            if kind == "paused":
                service.keep_paused(*args)
            elif kind == "turn":
                service.keep_turn(*args)
            elif kind == "reserve":
                body = Body(connection.recv_bytes(), args[0], args[1])
                refusal = reservations.reserve(call_id, body)
                send(("reply", call_id, refusal and (service.config.retry_after, refusal)))
            elif kind == "release":
                reservations.release(args[0], args[1])
            elif kind == "commit":
                ticket = 0
                try:
                    accepted, ticket = service.take(reservations.commit(args[0]))
                    outcome: tuple = ("accepted", accepted.reasons)
                except IntakeError as exc:
                    outcome = ("invalid", exc.status, exc.grpc_code, exc.message)
                except Overloaded as exc:  # the service refusing what its reservation allowed: a bug, said as such
                    outcome = ("overloaded", exc.retry_after)
                if ticket and durable is not None:
                    durable.answer(ticket, call_id, outcome)
                else:
                    send(("reply", call_id, outcome))
            elif kind == "metrics":
                send(("reply", call_id, list(service.registry.collect())))
            elif kind == "readiness":
                send(("reply", call_id, service.not_ready()))
    finally:
        if durable is not None:
            durable.close()
        service.stop()


class _DurableReplies:
    """A shard's answers to commits, each sent once the intake log has the request on disk,
    from a thread of their own: the shard goes on reading and judging while the disk
    flushes, and one flush covers every commit that came in meanwhile (group commit)."""

    def __init__(self, log: IntakeLog, send: Callable[[tuple], None]) -> None:
        self._log = log
        self._send = send
        self._waiting: list[tuple[int, int, tuple]] = []  # (ticket, call id, outcome)
        self._changed = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="otel-reliability-shard-flush", daemon=True)
        self._thread.start()

    def answer(self, ticket: int, call_id: int, outcome: tuple) -> None:
        with self._changed:
            self._waiting.append((ticket, call_id, outcome))
            self._changed.notify()

    def close(self) -> None:
        """Send what is waiting (flushed first), then stop."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiting and not self._closed:
                    self._changed.wait()
                if not self._waiting:
                    return
                batch, self._waiting = self._waiting, []
            try:
                self._log.wait_durable(max(ticket for ticket, _, _ in batch))
            except OSError as exc:  # not on disk: not acknowledged either; the client retries
                logger.error("the intake log could not be flushed: %s", exc)
                failed = ("invalid", 503, "UNAVAILABLE", f"receiver could not write its intake log ({exc}); retry later")
                batch = [(ticket, call_id, failed) for ticket, call_id, _ in batch]
            for _, call_id, outcome in batch:
                try:
                    self._send(("reply", call_id, outcome))
                except (OSError, ValueError):  # the serving process is gone: the log keeps the requests
                    return
