"""With workers, what the serving process's intake log gives back to the shards.

- **At start**, before the servers listen: the records an earlier run left are read (past
  damage, counted as in a log of one process), each trace's spans from the record it entered
  a buffer with on (``intake_births``), or only the traces a graceful stop's checkpoint names.
  Every record that still holds such a trace is written again into this run's log, under a
  new number, and sent to the shards that own its traces, with the traces to take from it;
  a births record then says where each entered, the log is flushed and the old segments go.
- **A shard that died** is started again and given, from this run's segments, every record
  that holds one of its traces still needed, the same way.
"""

from __future__ import annotations

import logging
from typing import Callable

from .intake import Body
from .intake_births import EVERY_SHARD, births_note, replayable
from .intake_log import IntakeLog
from .intake_records import Logged

logger = logging.getLogger(__name__)

Send = Callable[[int, int, Body, set[int]], None]  # (shard index, record number, body, traces to take)


def replay_at_start(log: IntakeLog, count: int, send: Send, next_seq: Callable[[], int]) -> int:
    """Give the shards what ``log`` found from before this start (see the module's docstring);
    returns how many requests held spans of traces not judged yet."""
    replayed = 0
    births: list[tuple[int, int]] = []
    seen: set[int] = set()
    last = -1
    for logged, taken in replayable(log.recover(), log.found.reread, log.checkpoint):
        if not taken:
            continue
        seq = last = next_seq()
        try:
            log.append(Logged(logged.signal, logged.media_type, logged.data, seq=seq), ())
        except OSError as exc:  # a disk still full at start: the old segments stay for the next start
            logger.error("otel-reliability could not log a replayed request again: %s", exc)
            log.found.keep = True
        births += [(t, seq) for t in taken - seen]
        seen |= taken
        body = Body(logged.data, logged.media_type, logged.signal)
        for index in sorted({t % count for t in taken}):
            send(index, seq, body, {t for t in taken if t % count == index})
        replayed += 1
    if last >= 0:
        try:
            log.append(births_note(count, EVERY_SHARD, last, births), ())
        except OSError:
            log.found.keep = True
    log.drop_recovered()
    return replayed


def replay_to_shard(log: IntakeLog, count: int, index: int, send: Send) -> int:
    """Give a restarted shard ``index`` every record of this run's log that holds one of its
    traces still needed; returns how many. The caller keeps new requests out meanwhile."""
    sent = 0
    for logged, taken in replayable(log.live_records(), log.live_records, None, lambda t: t % count == index):
        if taken:
            send(index, logged.seq, Body(logged.data, logged.media_type, logged.signal), taken)
            sent += 1
    return sent
