"""Trace files → ``SpanRecord``s (and ``EventRecord``s, from log records) on every core: one
process per core decodes and adapts files.

Decoding a file and adapting its spans (``adapters.to_record``) needs nothing from any
other file, and is most of what ``otel-reliability eval`` spends; assembling and judging
are not split, because a paused run in one file may be resumed in another (assembly
joins them, see ``continuations``). So worker processes turn files into records, and
the caller assembles every file's records, in file order, as if it had read them
itself: the records, their order and any error are the serial reading's.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any, Sequence

from ..adapters import to_event_record, to_record
from ..model import EventRecord, SpanRecord, ToolRequest, ToolResponse
from .files import DEFAULT_MAX_DECOMPRESSED, read_telemetry

# A pool starts in about 20 ms, what reading a few small files costs. Files go out in
# chunks (one small file costs less than sending it to a process), at least a few chunks
# a worker so that the workers finish together.
MIN_FILES_PER_WORKER = 2
MAX_FILES_PER_CHUNK = 16
CHUNKS_PER_WORKER = 4

# Records cross to the caller as tuples of their fields: pickle spends most of its time on
# a dataclass in Python (its state goes through ``dataclasses.fields``), on a tuple in C.
_RECORD_FIELDS = attrgetter(*SpanRecord.__slots__)
_REQUEST_FIELDS = attrgetter(*ToolRequest.__slots__)
_RESPONSE_FIELDS = attrgetter(*ToolResponse.__slots__)
_REQUESTS, _RESPONSES, _DISPATCHED = (SpanRecord.__slots__.index(n) for n in ("requests", "responses", "dispatched"))


def read_records(paths: Sequence[str | Path], workers: int | None = None) -> list[SpanRecord]:
    """The records of every span in the files, in file order; ``TraceInputError`` as ``read_spans``
    raises it for the first unreadable file. ``workers`` defaults to the usable cores.

    >>> read_records([])
    []
    """
    return read_telemetry_records(paths, workers)[0]


def read_telemetry_records(
    paths: Sequence[str | Path], workers: int | None = None, max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> tuple[list[SpanRecord], list[EventRecord]]:
    """``read_records``, and the GenAI event records of the log records in the files (OTLP/JSON
    log exports, JSON Lines mixing trace and log requests), in file order.

    >>> read_telemetry_records([])
    ([], [])
    """
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(workers, len(paths) // MIN_FILES_PER_WORKER)
    if workers <= 1:
        return _records_of(paths, max_decompressed_bytes)
    size = max(1, min(MAX_FILES_PER_CHUNK, len(paths) // (workers * CHUNKS_PER_WORKER)))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    records: list[SpanRecord] = []
    events: list[EventRecord] = []
    pool = ProcessPoolExecutor(workers)
    try:
        read = partial(_packed_records_of, max_decompressed_bytes=max_decompressed_bytes)
        for packed, packed_events in pool.map(read, chunks):  # in order: the first failed chunk raises here
            records.extend(map(_unpacked, packed))
            events.extend(map(_unpacked_event, packed_events))
    finally:
        pool.shutdown(cancel_futures=True)  # after an error, the files after it are not read
    return records, events


def _records_of(
    paths: Sequence[str | Path], max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> tuple[list[SpanRecord], list[EventRecord]]:
    records: list[SpanRecord] = []
    events: list[EventRecord] = []
    for path in paths:
        telemetry = read_telemetry(path, max_decompressed_bytes)
        records.extend(map(to_record, telemetry.spans))
        events.extend(event for event in map(to_event_record, telemetry.logs) if event is not None)
    return records, events


def _packed_records_of(
    paths: Sequence[str | Path], max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    records, events = _records_of(paths, max_decompressed_bytes)
    return [_packed(record) for record in records], [_packed_event(event) for event in events]


def _packed_event(event: EventRecord) -> tuple[Any, ...]:
    return (
        event.trace_id, event.span_id, event.time_ns,
        tuple(map(_REQUEST_FIELDS, event.requests)), tuple(map(_RESPONSE_FIELDS, event.responses)),
        event.assistant_turn,
    )


def _unpacked_event(fields: tuple[Any, ...]) -> EventRecord:
    trace_id, span_id, time_ns, requests, responses, assistant_turn = fields
    return EventRecord(
        trace_id, span_id, time_ns,
        tuple(ToolRequest(*request) for request in requests), tuple(ToolResponse(*response) for response in responses),
        assistant_turn,
    )


def _packed(record: SpanRecord) -> tuple[Any, ...]:
    fields = _RECORD_FIELDS(record)
    if record.requests or record.responses or record.dispatched is not None:
        nested = list(fields)
        nested[_REQUESTS] = tuple(map(_REQUEST_FIELDS, record.requests))
        nested[_RESPONSES] = tuple(map(_RESPONSE_FIELDS, record.responses))
        nested[_DISPATCHED] = None if record.dispatched is None else _REQUEST_FIELDS(record.dispatched)
        fields = tuple(nested)
    return fields


def _unpacked(fields: tuple[Any, ...]) -> SpanRecord:
    record = SpanRecord(*fields)
    if record.requests or record.responses or record.dispatched is not None:
        record.requests = tuple(ToolRequest(*request) for request in record.requests)
        record.responses = tuple(ToolResponse(*response) for response in record.responses)
        if record.dispatched is not None:
            record.dispatched = ToolRequest(*record.dispatched)
    return record
