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

from dataclasses import dataclass, field

from ..model import SpanData


class TraceInputError(ValueError):
    """Trace input that cannot be read; the message names the source and the place."""


@dataclass(slots=True)
class Decoded:
    """The spans that could be read, and one ``"place: reason"`` per rejected span."""

    spans: list[SpanData] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def raise_if_rejected(self, source: str = "") -> None:
        """Raise ``TraceInputError`` naming the first rejected span (and how many more)."""
        if not self.rejected:
            return
        message = self.rejected[0]
        if source:
            message = f"{source}: {message}"
        more = len(self.rejected) - 1
        if more:
            message += f" (and {more} more rejected span{'s' if more > 1 else ''})"
        raise TraceInputError(message)


@dataclass(frozen=True, slots=True)
class Shard:
    """One of ``count`` readers of the same requests: the spans of trace ``t`` are read by
    shard ``t % count`` (a malformed trace id by shard 0, which rejects it).

    >>> Shard(1, 2).owns(0x0af7651916cd43dd8448eb211c80319d)
    True
    """

    index: int = 0
    count: int = 1

    def owns(self, trace_id: int) -> bool:
        return trace_id % self.count == self.index

    def owner(self, raw_trace_id: bytes) -> int:
        """The shard of a trace id as OTLP protobuf carries it (16 bytes, big-endian)."""
        return int.from_bytes(raw_trace_id, "big") % self.count if len(raw_trace_id) == 16 else 0


WHOLE = Shard()


from .files import decode_bytes, decode_file, read_spans  # noqa: E402
from .otlp_json import decode_json, spans_from_json  # noqa: E402
from .otlp_proto import (  # noqa: E402
    any_value,
    attributes_from_proto,
    decode_protobuf,
    decode_request,
    parse_request,
    span_from_proto,
    spans_from_request,
)
from .sdk import from_readable_span  # noqa: E402

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
