"""OTLP payloads in: content types, gzip within limits, and the statuses the OTLP spec asks for.

Shared by the gRPC and HTTP servers so that both answer the same input the same way, for
traces and for logs (a ``Body`` says which signal it carries).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ..sources import (
    WHOLE,
    Decoded,
    Shard,
    TraceInputError,
    decode_json,
    decode_logs_json,
    decode_logs_request,
    decode_request,
    parse_logs_request,
    parse_request,
)
from .forwarding import request_from_json

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TRACES = "traces"
LOGS = "logs"


@dataclass(slots=True)
class IntakeError(Exception):
    """A payload refused as a whole; ``status`` is the HTTP status, ``grpc_code`` the gRPC one."""

    status: int
    grpc_code: str
    message: str

    def __str__(self) -> str:
        return self.message


def too_large(what: str, limit: int) -> IntakeError:
    return IntakeError(413, "RESOURCE_EXHAUSTED", f"{what} exceeds the limit of {limit} bytes")


def inflate(body: bytes, limit: int) -> bytes:
    """gunzip ``body``, refusing to produce more than ``limit`` bytes (a gzip bomb stops there)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
        if len(out) > limit or inflater.unconsumed_tail:
            raise too_large("decompressed payload", limit)
        out += inflater.flush()
    except zlib.error as exc:
        raise IntakeError(400, "INVALID_ARGUMENT", f"gzip body is corrupt: {exc}") from exc
    if len(out) > limit:
        raise too_large("decompressed payload", limit)
    if not inflater.eof:
        raise IntakeError(400, "INVALID_ARGUMENT", "gzip body is truncated")
    return out


@dataclass(slots=True)
class Body:
    """A request body that passed the transport checks: serialized protobuf or OTLP/JSON bytes."""

    data: bytes
    media_type: str  # PROTOBUF or JSON
    signal: str = TRACES  # or LOGS


@dataclass(slots=True)
class Payload:
    """One request's spans (those of the shard reading it), and the request itself for forwarding."""

    decoded: Decoded
    request: ExportTraceServiceRequest | None = None  # protobuf bodies arrive parsed
    json_body: bytes | None = None

    def as_request(self) -> ExportTraceServiceRequest:
        """The request as protobuf; a JSON body is converted only when asked (forwarding)."""
        if self.request is None:
            self.request = request_from_json(json.loads(self.json_body or b"{}"))
        return self.request


def decode_body(
    body: bytes, content_type: str, content_encoding: str, max_decompressed: int, signal: str = TRACES
) -> Body:
    """Check an OTLP/HTTP body: ``application/x-protobuf`` or ``application/json``, optionally gzip."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type not in (PROTOBUF, JSON):
        raise IntakeError(
            415, "INVALID_ARGUMENT", f"unsupported content type {content_type!r}: use {PROTOBUF} or {JSON}"
        )
    encoding = content_encoding.strip().lower()
    if encoding == "gzip":
        body = inflate(body, max_decompressed)
    elif encoding not in ("", "identity"):
        raise IntakeError(415, "INVALID_ARGUMENT", f"unsupported content encoding {content_encoding!r}: use gzip")
    elif len(body) > max_decompressed:
        raise too_large("payload", max_decompressed)
    return Body(body, media_type, signal)


def read_payload(body: Body, shard: Shard = WHOLE) -> Payload:
    """Parse a body and decode the spans (or log records) ``shard`` owns (``IntakeError`` 400
    when it is not OTLP)."""
    try:
        if body.signal == LOGS:
            if body.media_type == PROTOBUF:
                return Payload(decode_logs_request(parse_logs_request(body.data), shard))
            logs = decode_logs_json(body.data, shard)
            if shard.index:  # every shard decodes the whole text: shard 0 alone reports its repairs
                logs.repaired = 0
            return Payload(logs)
        if body.media_type == PROTOBUF:
            request = parse_request(body.data)
            return Payload(decode_request(request, shard), request=request)
        # JSON is decoded whole by every shard: a rejected span is reported by shard 0 alone.
        decoded = decode_json(body.data)
        if shard.count > 1:
            decoded = Decoded(
                [span for span in decoded.spans if shard.owns(span.trace_id)],
                decoded.rejected if shard.index == 0 else [],
                repaired=decoded.repaired if shard.index == 0 else 0,
            )
        return Payload(decoded, json_body=body.data)
    except TraceInputError as exc:
        raise IntakeError(400, "INVALID_ARGUMENT", str(exc)) from exc
