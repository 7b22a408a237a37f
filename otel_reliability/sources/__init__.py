"""Input readers: every way spans reach the engine, turned into ``SpanData``.

- ``from_readable_span`` — an OpenTelemetry SDK ``ReadableSpan`` (in-process).
- ``decode_request`` / ``spans_from_request`` — an OTLP protobuf
  ``ExportTraceServiceRequest`` (or ``TracesData``) already parsed; ``parse_request`` parses
  bytes (``TraceInputError`` when they are not one), ``decode_protobuf`` does both.
- ``decode_json`` / ``spans_from_json`` — OTLP/JSON (hex ids, integer enums) and
  protobuf's own JSON mapping (base64 ids, enum names), snake_case keys too.
- ``decode_logs_request`` / ``decode_logs_json`` — OTLP logs (``ExportLogsServiceRequest``),
  protobuf or OTLP/JSON, into ``Decoded.logs`` (``LogData``); ``from_sdk_log_record`` an SDK
  log record (in-process).
- ``read_spans`` / ``read_telemetry`` / ``decode_file`` / ``decode_bytes`` — trace files: one
  OTLP/JSON document, JSON Lines as the Collector's ``file`` exporter writes them (trace and
  log requests mixed), or binary protobuf (plain or with the ``file`` exporter's 4-byte
  length prefixes), gzip allowed; OTLP/JSON log documents (``resourceLogs``) too.

Attribute values become plain Python values: ``str``, ``bool``, ``int``, ``float``,
``bytes``, arrays as ``tuple``, kvlists as ``dict``, an empty ``AnyValue`` as ``None``.
Ids are ints; a root span has ``parent_id == 0``.

Bad input raises ``TraceInputError`` whose message names the place. The ``decode_*``
functions instead collect spans they cannot accept (bad ids, wrong field types, unknown
enum values) in ``Decoded.rejected`` — one reason per span — and keep the good ones,
which is what an OTLP receiver's partial success needs; they still raise for damage
outside any span (unparseable payload, ``resourceSpans`` not an array …).
"""

from __future__ import annotations

from .decoded import WHOLE, Decoded, Shard, TraceInputError
from .files import decode_bytes, decode_file, read_spans, read_telemetry
from .otlp_json import decode_json, spans_from_json
from .otlp_logs import decode_logs_json, decode_logs_request, parse_logs_request
from .otlp_proto import (
    any_value,
    attributes_from_proto,
    decode_protobuf,
    decode_request,
    parse_request,
    span_from_proto,
    spans_from_request,
)
from .sdk import from_readable_span, from_sdk_log_record

__all__ = [
    "WHOLE",
    "Decoded",
    "Shard",
    "TraceInputError",
    "any_value",
    "attributes_from_proto",
    "decode_bytes",
    "decode_file",
    "decode_json",
    "decode_logs_json",
    "decode_logs_request",
    "decode_protobuf",
    "decode_request",
    "from_readable_span",
    "from_sdk_log_record",
    "parse_logs_request",
    "parse_request",
    "read_spans",
    "read_telemetry",
    "span_from_proto",
    "spans_from_json",
    "spans_from_request",
]
