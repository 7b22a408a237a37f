"""OTLP logs (``ExportLogsServiceRequest`` / ``LogsData``, protobuf or OTLP/JSON) → ``LogData``.

The same rules as for spans: OTLP/JSON ids are hex (base64 accepted too, as protobuf's
JSON mapping writes them), keys lowerCamelCase or snake_case, 64-bit integers as strings
or numbers; places read ``resourceLogs[0].scopeLogs[1].logRecords[3].spanId``. Unlike a
span, a log record need not belong to a trace: empty ids are 0. A record that cannot be
accepted is listed in ``Decoded.rejected`` and the others are kept, for partial success.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from ..model import LogData
from .decoded import WHOLE, Decoded, Shard, TraceInputError
from .otlp_fields import BadField, any_value_of, attributes_of, field_of, id_of, kind_of, list_field, str_of, uint64_of
from .otlp_json import loads_repaired
from .otlp_proto import any_value, attributes_from_proto


# ---------------------------------------------------------------- protobuf


def _proto_id(raw: bytes, nbytes: int, field: str) -> int:
    if not raw:
        return 0
    if len(raw) != nbytes:
        raise BadField(field, f"expected {nbytes} bytes or empty, got {len(raw)} bytes")
    return int.from_bytes(raw, "big")


def _proto_record(r: Any) -> LogData:
    trace_id = _proto_id(r.trace_id, 16, "traceId")
    span_id = _proto_id(r.span_id, 8, "spanId")
    body = any_value(r.body) if r.HasField("body") else None
    return LogData(
        trace_id, span_id, r.event_name, r.time_unix_nano or r.observed_time_unix_nano,
        attributes_from_proto(r.attributes), body,
    )


def decode_logs_request(request: Any, shard: Shard = WHOLE) -> Decoded:
    """The log records of an ``ExportLogsServiceRequest`` (or ``LogsData``) that ``shard`` owns
    (by trace id, as spans are owned: a record goes where its trace is judged; records with
    no trace id go to shard 0), in ``Decoded.logs``."""
    decoded = Decoded()
    sharded = shard.count > 1
    for i, resource_logs in enumerate(request.resource_logs):
        for j, scope_logs in enumerate(resource_logs.scope_logs):
            for k, r in enumerate(scope_logs.log_records):
                if sharded and shard.owner(r.trace_id) != shard.index:
                    continue
                try:
                    decoded.logs.append(_proto_record(r))
                except BadField as bad:
                    decoded.rejected.append(f"resourceLogs[{i}].scopeLogs[{j}].logRecords[{k}].{bad.path}: {bad.reason}")
    return decoded


def parse_logs_request(data: bytes) -> ExportLogsServiceRequest:
    """Parse serialized ``ExportLogsServiceRequest`` bytes (``TraceInputError`` when they are not one)."""
    try:
        return ExportLogsServiceRequest.FromString(data)
    except (DecodeError, RuntimeError, ValueError, TypeError) as exc:
        detail = str(exc).strip()
        raise TraceInputError(
            "truncated or not an OTLP logs protobuf message" + (f" ({detail})" if detail else "")
        ) from None


# ---------------------------------------------------------------- OTLP/JSON


def _json_record(r: Any) -> LogData:
    if type(r) is not dict:
        raise BadField("", f"expected a log record object, got {kind_of(r)}")
    trace_id = id_of(field_of(r, "traceId", "trace_id"), 16, "traceId", required=False)
    span_id = id_of(field_of(r, "spanId", "span_id"), 8, "spanId", required=False)
    name = str_of(field_of(r, "eventName", "event_name"), "eventName")
    time_ns = uint64_of(field_of(r, "timeUnixNano", "time_unix_nano"), "timeUnixNano") or uint64_of(
        field_of(r, "observedTimeUnixNano", "observed_time_unix_nano"), "observedTimeUnixNano"
    )
    try:
        attributes = attributes_of(r.get("attributes"))
    except BadField as bad:
        raise bad.under("attributes") from None
    try:
        body = any_value_of(r.get("body"))
    except BadField as bad:
        raise bad.under("body") from None
    return LogData(trace_id, span_id, name, time_ns, attributes, body)


def decode_logs_object(obj: Any, decoded: Decoded, place: str = "", shard: Shard = WHOLE) -> None:
    """Decode one parsed OTLP/JSON ``ExportLogsServiceRequest`` / ``LogsData`` into ``decoded.logs``.

    Damage inside a record rejects that record; damage above records raises ``TraceInputError``.
    """
    if type(obj) is not dict:
        raise TraceInputError(f"{place}expected an OTLP/JSON object with resourceLogs, got {kind_of(obj)}")
    logs = decoded.logs
    for i, rl in enumerate(list_field(obj, "resourceLogs", "resource_logs", place)):
        where = f"{place}resourceLogs[{i}]"
        if type(rl) is not dict:
            raise TraceInputError(f"{where}: expected an object, got {kind_of(rl)}")
        for j, sl in enumerate(list_field(rl, "scopeLogs", "scope_logs", where + ".")):
            here = f"{where}.scopeLogs[{j}]"
            if type(sl) is not dict:
                raise TraceInputError(f"{here}: expected an object, got {kind_of(sl)}")
            for k, r in enumerate(list_field(sl, "logRecords", "log_records", here + ".")):
                try:
                    record = _json_record(r)
                except BadField as bad:
                    if shard.index == 0:  # every shard reads JSON whole: one of them reports it
                        decoded.rejected.append(f"{bad.under(f'{here}.logRecords[{k}]').path}: {bad.reason}")
                    continue
                except RecursionError:
                    if shard.index == 0:
                        decoded.rejected.append(f"{here}.logRecords[{k}]: values nested too deeply")
                    continue
                if shard.owns(record.trace_id):
                    logs.append(record)


def decode_logs_json(data: bytes | str | Any, shard: Shard = WHOLE) -> Decoded:
    """Decode one OTLP/JSON logs document (bytes, text, or already-parsed ``json`` objects).

    >>> doc = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
    ...     {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
    ...      "eventName": "sdk.choice", "body": {"kvlistValue": {"values": []}}}]}]}]}
    >>> [hex(r.span_id) for r in decode_logs_json(doc).logs]
    ['0xeee19b7ec3c1b174']
    """
    repaired = 0
    if isinstance(data, (bytes, bytearray, memoryview, str)):
        data, repaired = loads_repaired(data)
    decoded = Decoded(repaired=repaired)
    decode_logs_object(data, decoded, shard=shard)
    return decoded
