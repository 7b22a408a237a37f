"""Input readers: every way spans reach the engine, turned into ``SpanData``.

- ``from_readable_span`` — an OpenTelemetry SDK ``ReadableSpan`` (in-process).
- ``decode_request`` / ``spans_from_request`` — an OTLP protobuf
  ``ExportTraceServiceRequest`` (or ``TracesData``) already parsed; ``parse_request`` parses
  bytes (``TraceInputError`` when they are not one), ``decode_protobuf`` does both.
- ``decode_json`` / ``spans_from_json`` — OTLP/JSON (hex ids, integer enums) and
  protobuf's own JSON mapping (base64 ids, enum names), snake_case keys too.
- ``read_spans`` / ``decode_file`` / ``decode_bytes`` — trace files: one OTLP/JSON
  document, JSON Lines as the Collector's ``file`` exporter writes them, or binary
  protobuf (plain or with the ``file`` exporter's 4-byte length prefixes), gzip allowed.

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
from .files import decode_bytes, decode_file, read_spans
from .otlp_json import decode_json, spans_from_json
from .otlp_proto import (
    any_value,
    attributes_from_proto,
    decode_protobuf,
    decode_request,
    parse_request,
    span_from_proto,
    spans_from_request,
)
from .sdk import from_readable_span

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
    "decode_protobuf",
    "decode_request",
    "from_readable_span",
    "parse_request",
    "read_spans",
    "span_from_proto",
    "spans_from_json",
    "spans_from_request",
]
