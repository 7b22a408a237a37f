"""A receiver's intake log at start: which directory is this worker's, and the replay of
what an earlier run acknowledged and did not judge (``intake_log`` says how it is kept)."""

from __future__ import annotations

import logging
from typing import Callable

from ..sources import Shard
from ..stores.spec import parse_store_spec
from .config import ReceiverConfig
from .intake import Body, IntakeError
from .intake_log import _SUFFIX, IntakeLog, IntakeLogError

logger = logging.getLogger(__name__)


def open_intake_log(config: ReceiverConfig, shard: Shard) -> IntakeLog | None:
    """The intake log ``config`` asks for, the shard's own (``worker-<i>/`` under the
    directory with workers); None when there is none (``ReceiverConfig.intake_directory``)."""
    directory = config.intake_directory()
    if directory is None:
        if config.durability != "none" and parse_store_spec(config.store).shared:
            logger.warning("otel-reliability receiver: no intake_dir for a postgresql:// store, so no intake log: "
                           "requests are acknowledged from memory (durability none)")
        return None
    if not config.mkdir and not directory.parent.is_dir():  # a typo in intake_dir must not create folders anywhere
        raise IntakeLogError(f"intake log {directory}: folder {directory.parent} does not exist; create it first (--mkdir)")
    own = directory / f"worker-{shard.index}" if shard.count > 1 else directory
    if shard.index == 0:  # said once: segments that no one of this configuration replays
        others = [d for d in [directory, *directory.glob("worker-*")] if d != own and any(d.glob("*" + _SUFFIX))]
        others = [
            d for d in others
            if shard.count == 1 or d == directory or not d.name[7:].isdigit() or int(d.name[7:]) >= shard.count
        ]
        for other in others:
            logger.warning("otel-reliability receiver: %s holds intake log segments of a receiver with another "
                           "workers setting; they are not replayed (start it with that setting to replay them)", other)
    directory = own
    return IntakeLog(directory, config.durability, max(1, config.max_intake_log_bytes // shard.count))


def replay(log: IntakeLog, take: Callable[[Body, set[int]], int]) -> int:
    """Take again what ``log`` holds from before this start (``take(body, traces)`` buffers
    the spans of those traces and returns the request's ticket in the new log, 0 when it
    kept none), then let the old segments go: the replayed requests are in the new ones,
    flushed. Returns how many requests held spans of traces not judged yet."""
    checkpoint = log.checkpoint
    alive: set[int] = set(checkpoint or ())
    replayed = 0
    for logged in log.recover():
        if checkpoint is None:
            alive.update(logged.births)  # a trace's spans from the record it entered the buffer with on
        try:
            ticket = take(Body(logged.data, logged.media_type, logged.signal), alive)
        except IntakeError as exc:
            if exc.status == 503:  # buffered, but not logged again (a full disk): keep the old segments
                log.found.keep = True
            # else it was accepted once: only a change of version could do this
            logger.warning("otel-reliability could not replay a logged request: %s", exc)
            continue
        replayed += bool(ticket)  # it held spans of a trace not judged yet (logged again, so: a ticket)
    log.drop_recovered()
    return replayed
