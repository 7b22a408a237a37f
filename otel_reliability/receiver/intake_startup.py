"""A receiver's intake log at start: where it is, and the replay of what an earlier run
acknowledged and did not judge (``intake_log`` says how it is kept)."""

from __future__ import annotations

import logging
from typing import Callable

from ..stores.spec import parse_store_spec
from .config import ReceiverConfig
from .intake import Body, IntakeError
from .intake_births import replayable
from .intake_log import _SUFFIX, IntakeLog, IntakeLogError

logger = logging.getLogger(__name__)


def open_intake_log(config: ReceiverConfig, routed: bool = False) -> IntakeLog | None:
    """The intake log ``config`` asks for: one per receiver, however many workers it has
    (``routed``: the serving process of workers writes it); None when there is none
    (``ReceiverConfig.intake_directory``)."""
    directory = config.intake_directory()
    if directory is None:
        if config.durability != "none" and parse_store_spec(config.store).shared:
            logger.warning("otel-reliability receiver: no intake_dir for a postgresql:// store, so no intake log: "
                           "requests are acknowledged from memory (durability none)")
        return None
    if not config.mkdir and not directory.parent.is_dir():  # a typo in intake_dir must not create folders anywhere
        raise IntakeLogError(f"intake log {directory}: folder {directory.parent} does not exist; create it first (--mkdir)")
    for older in sorted(directory.glob("worker-*")):
        if any(older.glob("*" + _SUFFIX)):
            logger.warning("otel-reliability receiver: %s holds intake log segments of an earlier version, which "
                           "kept one log per worker; they are not replayed (start that version to replay them)", older)
    return IntakeLog(directory, config.durability, config.max_intake_log_bytes, routed=routed)


def replay(log: IntakeLog, take: Callable[[Body, set[int]], int]) -> int:
    """Take again what ``log`` holds from before this start (``take(body, traces)`` buffers
    the spans of those traces and returns the request's ticket in the new log, 0 when it
    kept none), then let the old segments go: the replayed requests are in the new ones,
    flushed. Returns how many requests held spans of traces not judged yet. A log that a
    receiver with workers wrote is read as well (``intake_births``)."""
    replayed = 0
    for logged, taken in replayable(log.recover(), log.found.reread, log.checkpoint):
        if not taken:
            continue
        try:
            ticket = take(Body(logged.data, logged.media_type, logged.signal), taken)
        except IntakeError as exc:
            if exc.status == 503:  # buffered, but not logged again (a full disk): keep the old segments
                log.found.keep = True
            # else it was accepted once: only a change of version could do this
            logger.warning("otel-reliability could not replay a logged request: %s", exc)
            continue
        replayed += bool(ticket)  # it held spans of a trace not judged yet (logged again, so: a ticket)
    log.drop_recovered()
    return replayed
