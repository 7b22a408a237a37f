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
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Collection, Sequence, cast

from ..adapters import to_event_record, to_record
from ..model import EventRecord, SpanRecord, ToolRequest, ToolResponse
from .decoded import NotATrace, TraceInputError
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


@dataclass(slots=True)
class FileRecords:
    """One file's records and GenAI event records, or why a skippable file was not read."""

    path: Path | str  # a str: the backend URL its traces were pulled from (``backend_args``)
    records: list[SpanRecord]
    events: list[EventRecord] = field(default_factory=list)
    skipped: str | None = None  # why a skippable file was not read
    damaged: bool = False  # skipped as a damaged trace file, not as a file that holds no trace


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
    files = read_files(paths, workers, max_decompressed_bytes=max_decompressed_bytes)
    return [r for file in files for r in file.records], [e for file in files for e in file.events]


def read_files(
    paths: Sequence[str | Path],
    workers: int | None = None,
    skippable: Collection[str | Path] = (),
    progress: Callable[[int], None] | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[FileRecords]:
    """``read_telemetry_records`` file by file: a file in ``skippable`` that cannot be read
    comes back with ``skipped`` set instead of raising; ``progress(n)`` is told as each n
    files are read.

    >>> read_files([])
    []
    """
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    lenient = {Path(p) for p in skippable}
    jobs = [(Path(p), Path(p) in lenient, max_decompressed_bytes) for p in paths]
    workers = min(workers, len(jobs) // MIN_FILES_PER_WORKER)
    if workers <= 1:
        files = []
        for job in jobs:
            files.append(_file_records(*job))
            if progress is not None:
                progress(1)
        return files
    size = max(1, min(MAX_FILES_PER_CHUNK, len(jobs) // (workers * CHUNKS_PER_WORKER)))
    chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
    files = []
    pool = ProcessPoolExecutor(workers)
    try:
        for chunk in pool.map(_packed_files, chunks):  # in order: the first failed chunk raises here
            files.extend(
                FileRecords(path, list(map(_unpacked, records)), list(map(_unpacked_event, events)), skipped, damaged)
                for path, records, events, skipped, damaged in chunk
            )
            if progress is not None:
                progress(len(chunk))
    finally:
        pool.shutdown(cancel_futures=True)  # after an error, the files after it are not read
    return files


def _file_records(path: Path, skippable: bool, max_decompressed_bytes: int) -> FileRecords:
    try:
        telemetry = read_telemetry(path, max_decompressed_bytes)
    except TraceInputError as exc:
        if not skippable:
            raise
        return FileRecords(path, [], [], str(exc), damaged=not isinstance(exc, NotATrace))
    events = [event for event in map(to_event_record, telemetry.logs) if event is not None]
    return FileRecords(path, list(map(to_record, telemetry.spans)), events)


def _packed_files(jobs: Sequence[tuple[Path, bool, int]]) -> list[tuple[Any, ...]]:
    """Each job's (path, packed records, packed events, skipped, damaged), for the trip to the caller."""
    packed = []
    for job in jobs:
        file = _file_records(*job)
        packed.append((file.path, list(map(_packed, file.records)), list(map(_packed_event, file.events)), file.skipped, file.damaged))
    return packed


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
        # packed for the pipe (``_packed``): each request and response is a plain tuple here
        record.requests = tuple(ToolRequest(*cast(tuple, request)) for request in record.requests)
        record.responses = tuple(ToolResponse(*cast(tuple, response)) for response in record.responses)
        if record.dispatched is not None:
            record.dispatched = ToolRequest(*cast(tuple, record.dispatched))
    return record
