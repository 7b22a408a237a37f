"""One shard's process, and the serving process's pipe to it.

``ShardWorker`` starts a shard (``receiver.shards``) in a process of its own and talks to
it over a pipe. Requests go one way: the serving process logged and admitted them already
(``credits``), and answers its client without waiting for the shard. The shard reads them
in order and judges between them, and reports back, whenever it has read what was waiting
and on every judge tick: the room it has left (its credits), the oldest record it still
holds a trace from, and where its traces entered its buffer (``intake_births``). The few
calls that want an answer (``/metrics``, ``/readyz``) carry an id.
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
from typing import Any, Callable, Iterable

from ..engine import Turn
from ..expectations import ExpectationError
from ..model import SpanRecord
from ..sources import Shard
from ..suppression import suppress_instrumentation_in_this_thread
from .config import ReceiverConfig
from .intake import Body, IntakeError
from .outcomes import SOFT_BYTE_LIMIT, VERDICTS_HELD
from .service import ReceiverService
from .tuning import tune_garbage_collection, tune_malloc

logger = logging.getLogger(__name__)

REPLY_TIMEOUT_S = 120.0  # a shard answers between two requests it reads: longer means it is stuck
READ_BEFORE_REPORT = 64  # requests a shard reads at most before it reports its credits


class Report:
    """What a shard says of itself: it read every record up to ``seq``, has room for
    ``spans`` and ``nbytes`` more (or refuses everything, ``refusal``), holds no trace from
    a record before ``low_water``, saw ``births`` (trace id, record number) since its last report,
    and would tell a client refused at its byte limit to retry after ``retry_after`` seconds."""

    __slots__ = ("seq", "spans", "nbytes", "refusal", "low_water", "births", "retry_after")

    def __init__(self, seq: int, spans: int, nbytes: int, refusal: str | None, low_water: int,
                 births: list[tuple[int, int]], retry_after: int) -> None:
        self.seq, self.spans, self.nbytes, self.refusal = seq, spans, nbytes, refusal
        self.low_water, self.births, self.retry_after = low_water, births, retry_after


class ShardWorker:
    """One shard in a child process, and the pipe to it. Calls carry an id and are answered
    in order; a reader thread hands answers to their callers and runs the shard's notices."""

    def __init__(self, config: ReceiverConfig, shard: Shard, on_paused, on_turn,
                 on_report: Callable[[int, Report], None], on_exit: Callable[[int], None]) -> None:
        self.shard = shard
        self._on_paused = on_paused
        self._on_turn = on_turn
        self._on_report = on_report
        self._on_exit = on_exit
        self._stopping = False
        self.stopped: Future = Future()  # the traces it left unjudged, once it stopped (``ask_to_stop``)
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
            if self.stopped.done():  # it exited: no one would answer
                reply.set_exception(_down(self.shard, "it exited"))
                return reply
            call_id = reply.call_id = next(self._ids)  # type: ignore[attr-defined]  # the answer's name
            self._replies[call_id] = reply
            self._outbox.put(((kind, call_id, *args), payload, reply))
        return reply

    def tell(self, kind: str, *args: Any, payload: bytes | None = None) -> None:
        with self._order_lock:
            self._outbox.put(((kind, None, *args), payload, None))

    def take(self, seq: int, body: Body, alive: Iterable[int] | None = None) -> None:
        """Send record ``seq`` to read (``alive``: a replay, of those traces only); no answer."""
        if alive is None:
            self.tell("take", seq, body.media_type, body.signal, payload=body.data)
        else:
            self.tell("replay", seq, body.media_type, body.signal, list(alive), payload=body.data)

    @property
    def alive(self) -> bool:
        return self._process.is_alive() and not self.stopped.done()

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
        self._stopping = True
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
            if kind == "credits":
                self._on_report(self.shard.index, Report(*payload))
            elif kind == "ready":
                self._ready.set_result(payload[0])
            elif kind == "stopped":
                self.stopped.set_result(payload[0])
            elif kind == "paused":
                self._on_paused(*payload, origin=self.shard.index)
            elif kind == "turn":
                self._on_turn(*payload)
            else:
                reply = self._replies.pop(call_id)
                reply.set_result(payload[0])
        if not self._ready.done():
            self._ready.set_result("it exited while starting")
        with self._order_lock:  # a call made from now on fails at once (``call``)
            if not self.stopped.done():
                self.stopped.set_result(None)  # it could not say what it left: the log keeps everything
            for call_id in list(self._replies):
                if (unanswered := self._replies.pop(call_id, None)) is not None:  # else the sender failed it already
                    unanswered.set_exception(_down(self.shard, "it exited"))
        if not self._stopping and self._ready.result() == "":
            self._on_exit(self.shard.index)


class _ServingProcessGone(Exception):
    """The pipe to the serving process broke: a shard stops quietly, the log keeps what it held."""


def _down(shard: Shard, why: Any) -> IntakeError:
    logger.error("worker %d is down: %s", shard.index, why)
    return IntakeError(503, "UNAVAILABLE", f"receiver worker {shard.index} is down; retry later")


class ShardLedger:
    """Which traces this shard's buffer holds, by the number of the record each entered with:
    what the serving process needs to release its log's segments and to replay them."""

    def __init__(self) -> None:
        self.seq = -1  # the record being read
        self.read = -1  # the last record read whole
        self._entered: dict[int, int] = {}  # trace id → record number, oldest first
        self._births: list[tuple[int, int]] = []

    def trace_entered(self, trace_id: int) -> None:
        self._entered.pop(trace_id, None)  # entering again: it is as new as this record
        self._entered[trace_id] = self.seq
        self._births.append((trace_id, self.seq))

    def trace_left(self, trace_id: int) -> None:
        self._entered.pop(trace_id, None)

    def low_water(self) -> int:
        """The oldest record a trace still buffered entered with (all after the last one read when none is)."""
        return next(iter(self._entered.values()), self.read + 1)

    def births(self) -> list[tuple[int, int]]:
        births, self._births = self._births, []
        return births


def _shard_main(config_data: dict, index: int, count: int, connection: Connection) -> None:
    # The serving process decides when a shard stops: a terminal's Ctrl-C or a stop signal
    # sent to the whole process group must not kill a shard before it has judged its traces.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a reload comes from the serving process, validated there first
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s %(levelname)s shard {index} %(name)s: %(message)s")

    def send(message: tuple) -> None:
        try:
            connection.send(message)
        except (OSError, ValueError) as exc:  # a broken pipe: the serving process is gone
            raise _ServingProcessGone from exc

    def hand_on(message: tuple) -> None:
        try:
            send(message)
        except _ServingProcessGone:  # called from inside judging: the loop stops at its next report
            logger.warning("shard %d could not hand on a %s: the serving process is gone", index, message[0])

    def hand_on_paused(keys: list[str], records: list[SpanRecord]) -> None:
        hand_on(("paused", None, keys, records))

    def hand_on_turn(owner: int, session_id: str, turn: Turn) -> None:
        hand_on(("turn", None, owner, session_id, turn))

    tune_malloc()
    ledger = ShardLedger()
    try:
        service = ReceiverService(
            ReceiverConfig.model_validate(config_data), Shard(index, count), on_paused=hand_on_paused, on_turn=hand_on_turn,
            log_intake=False, ledger=ledger,
        )
    except Exception as exc:  # the serving process built the same service first: this is rare
        send(("ready", None, str(exc) or type(exc).__name__))
        return

    def report() -> None:
        refusal = VERDICTS_HELD if service.pipeline.held.at_bound else None
        send(("credits", None, ledger.read, service.room(), service.byte_room(), refusal, ledger.low_water(),
              ledger.births(), service.retry_after(SOFT_BYTE_LIMIT)))

    tune_garbage_collection()
    suppress_instrumentation_in_this_thread()
    # One thread reads requests and judges between them: a judge thread beside it would only
    # trade the GIL back and forth with it (and every message goes out from this thread).
    service.start(judge_thread=False)
    send(("ready", None, ""))
    tick = service.judge_interval
    next_tick = time.monotonic() + tick
    stopped = False
    try:
        while not stopped:
            try:
                now = time.monotonic()
                if now >= next_tick:
                    service.judge_tick()
                    report()  # judging and expiry free room: say so even when nothing arrives
                    next_tick = now + tick
                read = 0
                if not connection.poll(max(0.0, next_tick - time.monotonic())):
                    continue
                while read < READ_BEFORE_REPORT and (read == 0 or connection.poll(0)):
                    kind, call_id, *args = connection.recv()
                    read += 1
                    if kind == "stop":
                        stopped = True
                        break
                    _handle(service, ledger, connection, kind, call_id, args, send)
                if read:
                    report()
            except (EOFError, ConnectionError, _ServingProcessGone):
                stopped = True  # the serving process is gone: judge what is here and stop
    finally:
        service.stop()
        try:
            send(("stopped", None, service.unjudged))
        except _ServingProcessGone:  # its log keeps everything
            pass


def _handle(service: ReceiverService, ledger: ShardLedger, connection: Connection, kind: str, call_id: Any,
            args: list, send: Callable[[tuple], None]) -> None:
    if kind in ("take", "replay"):
        seq, media_type, signal_name, *alive = args
        body = Body(connection.recv_bytes(), media_type, signal_name)
        ledger.seq = seq
        try:
            if kind == "take":  # admitted on this shard's credits: the bounds do not refuse it here
                service.take(body, bounded=False)
            else:
                service.take(body, replaying=set(alive[0]))
        except IntakeError as exc:  # the serving process read its trace ids: only a change of version does this
            logger.warning("shard %d could not read record %d: %s", service.shard.index, seq, exc)
        ledger.read = max(ledger.read, seq)
    elif kind == "paused":
        service.keep_paused(*args)
    elif kind == "turn":
        service.keep_turn(*args)
    elif kind == "metrics":
        send(("reply", call_id, list(service.registry.collect())))
    elif kind == "readiness":
        send(("reply", call_id, service.not_ready()))
    elif kind == "reload":
        try:
            send(("reply", call_id, ("reloaded", service.reload_expectations(counted=False).describe())))
        except ExpectationError as exc:
            send(("reply", call_id, ("refused", str(exc))))
