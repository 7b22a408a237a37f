"""Trace files → ``SpanData``, whatever form they come in.

Formats, detected from the name and the content:

- one OTLP/JSON ``ExportTraceServiceRequest`` / ``TracesData`` document (pretty or not),
  or an ``ExportLogsServiceRequest`` / ``LogsData`` one (``resourceLogs``: log records);
- JSON Lines, one request per line, as the Collector's ``file`` exporter (and
  ``OTLPJsonFileSpanExporter``) writes them, trace and log requests mixed (any sequence of
  concatenated JSON objects is read the same way), or a JSON array of requests;
- the OpenTelemetry SDK's ``ConsoleSpanExporter`` output: one ``ReadableSpan.to_json()``
  object per span, concatenated (``console_json``);
- binary protobuf ``ExportTraceServiceRequest`` (``.pb``, ``.binpb``, ``.protobuf``,
  ``.bin``, ``.proto``, or content that is not JSON text), either one message or the
  Collector ``file`` exporter's ``format: proto`` stream of messages each preceded by its
  length as a 4-byte big-endian integer;
- any of these gzip-compressed (detected by the gzip magic bytes), inflating to at most
  ``max_decompressed_bytes`` (512 MiB by default): a small file can inflate to gigabytes.

Every error message starts with the file name and names the place: ``line N`` for a
file with several JSON objects (and any ``.jsonl`` / ``.ndjson`` file), the JSON path
(``resourceSpans[0].scopeSpans[0].spans[3].spanId``), ``message N`` for a
length-prefixed protobuf stream.
"""

from __future__ import annotations

import json
import re
import zlib
from os import PathLike, fspath
from pathlib import Path
from typing import Any

from ..model import SpanData
from .console_json import decode_console_span, is_console_span
from .decoded import Decoded, NotATrace, TraceInputError
from .otlp_fields import lead_of
from .otlp_json import decode_object
from .otlp_logs import decode_logs_object
from .otlp_proto import decode_request, parse_request
from ..textfile import NotUtf8Error, decode_utf8

_PROTO_SUFFIXES = {".pb", ".binpb", ".protobuf", ".bin", ".proto", ".otlp"}
_JSON_SUFFIXES = {".json", ".jsonl", ".ndjson", ".otlpjson"}
_JSON_LINES_SUFFIXES = {".jsonl", ".ndjson"}
_NON_WS = re.compile(r"[^ \t\r\n]")
_READ_FORMATS = (
    "a trace file is OTLP/JSON (an object with resourceSpans), JSON Lines of those (the Collector's file "
    "exporter), spans as ConsoleSpanExporter prints them, or binary OTLP protobuf"
)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_LOGS_KEYS = ("resourceLogs", "resource_logs")
_OTHER_SIGNALS = {
    "resourceMetrics": "metrics",
    "resource_metrics": "metrics",
    "resourceProfiles": "profiles",
    "resource_profiles": "profiles",
}


DEFAULT_MAX_DECOMPRESSED = 512 << 20
_INFLATE_STEP = 16 << 20  # output produced per step, so that a bomb stops near the limit


def read_spans(path: str | PathLike[str], max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> list[SpanData]:
    """Every span in a trace file; ``TraceInputError`` on anything unreadable."""
    decoded = decode_file(path, max_decompressed_bytes)
    decoded.raise_if_rejected()
    return decoded.spans


def read_telemetry(path: str | PathLike[str], max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Decoded:
    """Every span and log record in a file (``Decoded.spans`` and ``.logs``); ``TraceInputError``
    on anything unreadable or rejected."""
    decoded = decode_file(path, max_decompressed_bytes)
    decoded.raise_if_rejected()
    return decoded


def decode_file(path: str | PathLike[str], max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Decoded:
    """Like ``read_spans``, but spans that cannot be accepted are skipped and listed
    in ``Decoded.rejected`` (each entry starts with the file name)."""
    name = fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise TraceInputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return decode_bytes(data, name, max_decompressed_bytes)


def decode_bytes(data: bytes, name: str = "<input>", max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Decoded:
    """Decode the content of a trace file; ``name`` (a file name) guides format
    detection by its suffix and starts every error message."""
    suffix = _suffix(name)
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, name, max_decompressed_bytes)
    if not data.strip():
        raise TraceInputError(f"{name}: the file is empty")
    if data[:4] == _ZSTD_MAGIC:
        raise TraceInputError(f"{name}: zstd-compressed; decompress it first (zstd -d)")

    text: str | None = None
    not_utf8: str | None = None  # what a file meant as JSON is told, if it is not protobuf either
    try:
        text = decode_utf8(data, name)
    except NotUtf8Error as exc:
        not_utf8 = str(exc)
    if suffix in _PROTO_SUFFIXES:
        return _decode_protobuf_file(data, name)
    if text is not None and (suffix in _JSON_SUFFIXES or _looks_like_json(text)):
        try:
            return _decode_json_text(text, name, suffix)
        except TraceInputError:
            # Binary protobuf can happen to be valid UTF-8 starting with "\n{".
            if suffix not in _JSON_SUFFIXES and data[:1] == b"\n":
                try:
                    return _decode_protobuf_file(data, name)
                except TraceInputError:
                    pass
            raise
    try:
        return _decode_protobuf_file(data, name)
    except TraceInputError:
        if not_utf8 is not None and (suffix in _JSON_SUFFIXES or data.lstrip()[:1] in (b"{", b"[")):
            raise TraceInputError(not_utf8) from None
        if text is None:
            raise
    raise TraceInputError(f"{name}: neither OTLP/JSON (no JSON object at the start) nor an OTLP protobuf message")


def _gunzip(data: bytes, name: str, limit: int) -> bytes:
    """Every gzip member of ``data``, inflated a step at a time and stopped past ``limit``."""
    out: list[bytes] = []
    size = 0
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = data
        try:
            while not inflater.eof:
                chunk = inflater.decompress(pending, _INFLATE_STEP)
                size += len(chunk)
                if size > limit:
                    raise TraceInputError(
                        f"{name}: gzip data inflates to more than {_mib(limit)}, the limit for one trace file"
                    )
                out.append(chunk)
                pending = inflater.unconsumed_tail
                if not chunk and not pending:
                    break
        except zlib.error as exc:
            raise TraceInputError(f"{name}: corrupt gzip data ({exc})") from None
        if not inflater.eof:
            raise TraceInputError(f"{name}: corrupt gzip data (truncated)")
        data = inflater.unused_data
        if not data.strip(b"\x00"):  # padding after the last member, as gzip allows
            break
        if data[:2] != b"\x1f\x8b":
            raise TraceInputError(f"{name}: corrupt gzip data (bytes after it that are not gzip)")
    return b"".join(out)


def _mib(size: int) -> str:
    return f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size} bytes"


def _suffix(name: str) -> str:
    lowered = name.lower()
    if lowered.endswith(".gz"):
        lowered = lowered[:-3]
    dot = lowered.rfind(".")
    return lowered[dot:] if dot > max(lowered.rfind("/"), lowered.rfind("\\")) else ""


def _looks_like_json(text: str) -> bool:
    match = _NON_WS.search(text)
    return match is not None and text[match.start()] in "{["


# ---------------------------------------------------------------- JSON


def _decode_json_text(text: str, name: str, suffix: str) -> Decoded:
    objects: list[tuple[int, Any]] = []
    decoder = json.JSONDecoder()
    line = 1
    counted = 0
    pos = 0
    end = len(text)
    try:
        while True:
            match = _NON_WS.search(text, pos)
            if match is None:
                break
            pos = match.start()
            line += text.count("\n", counted, pos)
            counted = pos
            obj, pos = decoder.raw_decode(text, pos)
            objects.append((line, obj))
            if pos >= end:
                break
    except json.JSONDecodeError as exc:
        if exc.pos == pos:  # a line that starts no JSON value at all: text, not what it was taken for
            found = text[exc.pos:].split("\n", 1)[0].strip()[:40]
            raise TraceInputError(f"{name}: line {exc.lineno}: {found!r} is not JSON: {_READ_FORMATS}") from None
        raise TraceInputError(f"{name}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise TraceInputError(f"{name}: line {line}: invalid JSON: nested too deeply") from None

    decoded = Decoded()
    several = len(objects) > 1 or suffix in _JSON_LINES_SUFFIXES
    try:
        for line, obj in objects:
            place = f"line {line}: " if several else ""
            if type(obj) is list:
                for i, item in enumerate(obj):
                    _decode_request_object(item, decoded, f"{place}[{i}].")
            else:
                _decode_request_object(obj, decoded, place)
    except TraceInputError as exc:
        raise type(exc)(f"{name}: {exc}") from None
    decoded.rejected[:] = [f"{name}: {reason}" for reason in decoded.rejected]
    return decoded


def _decode_request_object(obj: Any, decoded: Decoded, place: str) -> None:
    if type(obj) is dict and "resourceSpans" not in obj and "resource_spans" not in obj:
        if any(key in obj for key in _LOGS_KEYS):
            decode_logs_object(obj, decoded, place)
            return
        if is_console_span(obj):
            decode_console_span(obj, decoded, place)
            return
        for key, signal in _OTHER_SIGNALS.items():
            if key in obj:
                raise NotATrace(f"{lead_of(place)}holds OpenTelemetry {signal}, not traces")
        found = ", ".join(repr(k) for k in list(obj)[:5]) or "nothing"
        raise NotATrace(
            f"{lead_of(place)}not an OTLP trace export: expected an object with resourceSpans (OTLP/JSON) "
            f"or a span as ConsoleSpanExporter prints it, found {found}"
        )
    decode_object(obj, decoded, place)


# ---------------------------------------------------------------- protobuf


def _decode_protobuf_file(data: bytes, name: str) -> Decoded:
    frames = _length_prefixed_frames(data) if data[:1] != b"\n" else None
    decoded = Decoded()
    if frames is None:
        try:
            request = parse_request(data)
        except TraceInputError as exc:
            raise TraceInputError(f"{name}: {exc}") from None
        if not request.resource_spans:
            raise TraceInputError(f"{name}: truncated or not an OTLP protobuf message (no resourceSpans)")
        part = decode_request(request)
        decoded.spans = part.spans
        decoded.rejected = [f"{name}: {reason}" for reason in part.rejected]
        return decoded
    for index, frame in enumerate(frames, 1):
        where = f"{name}: message {index}"
        if frame[:4] == _ZSTD_MAGIC:
            raise TraceInputError(f"{where}: zstd-compressed; decompress it first")
        try:
            request = parse_request(frame)
        except TraceInputError as exc:
            raise TraceInputError(f"{where}: {exc}") from None
        part = decode_request(request)
        decoded.spans.extend(part.spans)
        decoded.rejected.extend(f"{where}: {reason}" for reason in part.rejected)
    return decoded


def _length_prefixed_frames(data: bytes) -> list[bytes] | None:
    """Split a stream of (4-byte big-endian length, message) frames; None unless it
    splits exactly, without a gap or overrun."""
    frames = []
    pos = 0
    end = len(data)
    while pos < end:
        if end - pos < 4:
            return None
        size = int.from_bytes(data[pos : pos + 4], "big")
        pos += 4
        if size == 0 or pos + size > end:
            return None
        frames.append(data[pos : pos + size])
        pos += size
    return frames or None
