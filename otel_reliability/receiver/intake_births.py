"""Where each trace entered a shard's buffer, as the serving process's intake log keeps it.

With workers, the serving process appends every request to one log before the shards see
it, so a record cannot say which of its traces were new to a buffer (``Logged.births`` in a
log of one process). The shards say it afterwards: each report names the traces that
entered the shard's buffer and the number of the record they came with, and the serving
process appends it as a **births** record covering that shard's records up to the last one
it read. A replay then takes a trace's spans from the record it entered with on — never the
tail of a trace already judged and gone, which would be judged again on a part of it.

Records no births record covers (the shard had not read them, or its report was not on disk
yet at a crash) are taken conservatively: a trace is taken from the first of them it
appears in. That is exact for those records: a trace whose earlier records were released had
left its buffer before, so the shard, reading the next record of it, starts it afresh.

>>> note = births_note(2, 1, 9, [(0xA1, 4)])
>>> births = Births(); births.read(note)
>>> alive = set()
>>> births.take(4, [0xA1], alive), births.take(7, [0xA1, 0xA3], alive), births.take(12, [0xA3], alive)
({161}, {161}, {163})
"""

from __future__ import annotations

import struct
from typing import Callable, Iterable, Iterator

from ..sources import TraceInputError
from ..sources.trace_ids import request_trace_ids
from .intake import JSON, LOGS
from .intake_records import MEDIA, Logged

EVERY_SHARD = 0xFFFF  # a births record a replay wrote: it covers its records for every shard
_HEAD = struct.Struct("<HHQ")  # shard count, shard index, the last record number covered
_BIRTH = struct.Struct("<16sQ")  # trace id, number of the record it entered with


def births_note(count: int, index: int, up_to: int, births: Iterable[tuple[int, int]]) -> Logged:
    """The births record of shard ``index`` of ``count``: it has read every record up to
    ``up_to``, and its ``births`` (trace id, record number) since its last note."""
    data = _HEAD.pack(count, index, up_to) + b"".join(_BIRTH.pack(t.to_bytes(16, "big"), seq) for t, seq in births)
    return Logged("births", MEDIA[0], data)


class Births:
    """What the births records of a log say, and which traces a replay takes from each record."""

    def __init__(self) -> None:
        self._covered: dict[tuple[int, int], int] = {}  # (shard count, index) → last record number covered
        self._born: set[tuple[int, int]] = set()  # (trace id, record number)

    def read(self, logged: Logged) -> None:
        data = logged.data
        if len(data) < _HEAD.size:
            return
        count, index, up_to = _HEAD.unpack_from(data)
        key = (count, index)
        self._covered[key] = max(self._covered.get(key, -1), up_to)
        for offset in range(_HEAD.size, len(data) - _BIRTH.size + 1, _BIRTH.size):
            raw, seq = _BIRTH.unpack_from(data, offset)
            self._born.add((int.from_bytes(raw, "big"), seq))

    def _covers(self, trace_id: int, seq: int) -> bool:
        for (count, index), up_to in self._covered.items():
            if seq <= up_to and (index == EVERY_SHARD or trace_id % count == index):
                return True
        return False

    def take(self, seq: int, traces: Iterable[int], alive: set[int]) -> set[int]:
        """The traces of record ``seq`` a replay takes (``alive`` grows by those that enter here)."""
        taken = set()
        for trace_id in traces:
            if trace_id not in alive:
                if self._covers(trace_id, seq) and (trace_id, seq) not in self._born:
                    continue  # judged and gone before this record, or it entered with a later one
                alive.add(trace_id)
            taken.add(trace_id)
        return taken


def record_traces(logged: Logged) -> list[int]:
    """The trace ids a logged request holds spans (or log records) of."""
    try:
        return list(request_trace_ids(logged.data, json=logged.media_type == JSON, logs=logged.signal == LOGS).counts)
    except TraceInputError:  # it was read when it came: only a change of version does this
        return []


def replayable(
    first: Iterable[Logged], again: Callable[[], Iterable[Logged]], checkpoint: frozenset[int] | None,
    only: Callable[[int], bool] = lambda _: True,
) -> Iterator[tuple[Logged, set[int]]]:
    """Each request of a log with the traces to take from it (none: not needed), of those
    ``only`` keeps. The births records come after the records they tell of, so the log is read
    twice: ``first`` for its births, ``again()`` for its requests (not all held in memory at
    once). A record of a log of one process (numbered 0) names its births itself; a graceful
    stop's ``checkpoint`` names the traces to take, from every record."""
    births = Births()
    for logged in first:
        if logged.signal == "births":
            births.read(logged)
    alive: set[int] = set(checkpoint or ())
    for logged in again():
        if logged.signal == "births":
            continue
        traces = [t for t in record_traces(logged) if only(t)]
        if checkpoint is not None:
            taken = {t for t in traces if t in alive}
        elif logged.seq == 0:
            alive.update(logged.births)
            taken = {t for t in traces if t in alive}
        else:
            taken = births.take(logged.seq, traces, alive)
        yield logged, taken
