"""``OTLPJsonFileSpanExporter``: an SDK span exporter that writes OTLP/JSON Lines to a file.

One line per ``export`` call, each an ``ExportTraceServiceRequest`` in OTLP/JSON — hex ids,
integer enums, 64-bit integers as decimal strings — the format the OpenTelemetry Collector's
``file`` exporter writes, so that ``eval``, ``inspect`` and ``compare`` read what a script or
a test suite traced::

    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileSpanExporter("traces.jsonl")))

Spans are grouped by resource and by instrumentation scope, as OTLP nests them. Each line is
written whole and flushed before ``export`` returns, so a process that dies afterwards keeps
every span it exported; several exporters may append to one file (each line is one write).
Text that is not valid Unicode (a lone surrogate in an attribute) is written escaped, and
non-finite doubles as OTLP/JSON's ``"NaN"`` / ``"Infinity"`` strings: the line stays JSON.
"""

from __future__ import annotations

import base64
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OTLPJsonFileSpanExporter", "export_request"]


class OTLPJsonFileSpanExporter(SpanExporter):
    """Append each batch of ended spans to ``path`` as one OTLP/JSON line (JSON Lines).

    The file is created if missing (its folder must exist) and appended to otherwise.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # unbuffered binary append: one os.write per line, so concurrent writers never interleave a line
        self._file = open(self.path, "ab", buffering=0)
        self._lock = threading.Lock()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = _encode(export_request(spans)) + b"\n"
        with self._lock:
            if self._closed:
                return SpanExportResult.FAILURE
            try:
                self._file.write(line)
            except OSError:
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            if not self._closed:
                os.fsync(self._file.fileno())
        return True

    def shutdown(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._file.close()


def export_request(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The OTLP/JSON ``ExportTraceServiceRequest`` of ``spans`` (a dict ready for ``json``)."""
    by_resource: dict[int, tuple[Any, dict[tuple[str, str, str], list[dict[str, Any]]]]] = {}
    for span in spans:
        resource = span.resource
        scopes = by_resource.setdefault(id(resource), (resource, {}))[1]
        scope = span.instrumentation_scope
        key = (scope.name, scope.version or "", scope.schema_url or "") if scope is not None else ("", "", "")
        scopes.setdefault(key, []).append(_span(span))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource.attributes) if resource is not None else []},
                "schemaUrl": (resource.schema_url if resource is not None else "") or "",
                "scopeSpans": [
                    {"scope": {"name": name, "version": version}, "schemaUrl": schema_url, "spans": encoded}
                    for (name, version, schema_url), encoded in scopes.items()
                ],
            }
            for resource, scopes in by_resource.values()
        ]
    }


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.context
    encoded: dict[str, Any] = {
        "traceId": f"{context.trace_id:032x}",
        "spanId": f"{context.span_id:016x}",
        "name": span.name,
        "kind": span.kind.value + 1,  # the SDK counts from INTERNAL = 0, OTLP from UNSPECIFIED = 0
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": _attributes(span.attributes),
        "status": {"code": span.status.status_code.value, "message": span.status.description or ""},
    }
    if span.parent is not None:
        encoded["parentSpanId"] = f"{span.parent.span_id:016x}"
    trace_state = context.trace_state.to_header() if context.trace_state else ""
    if trace_state:
        encoded["traceState"] = trace_state
    if span.events:
        encoded["events"] = [
            {"timeUnixNano": str(event.timestamp), "name": event.name, "attributes": _attributes(event.attributes)}
            for event in span.events
        ]
    if span.links:
        encoded["links"] = [
            {"traceId": f"{link.context.trace_id:032x}", "spanId": f"{link.context.span_id:016x}",
             "attributes": _attributes(link.attributes)}
            for link in span.links
        ]
    return encoded


def _attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in (attributes or {}).items()]


def _any_value(value: Any) -> dict[str, Any]:
    """An OTLP/JSON ``AnyValue`` (bool before int: a bool is an int in Python).

    >>> _any_value(True), _any_value(3), _any_value(float("nan")), _any_value(("a",))
    ({'boolValue': True}, {'intValue': '3'}, {'doubleValue': 'NaN'}, {'arrayValue': {'values': [{'stringValue': 'a'}]}})
    """
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, (bytes, bytearray)):
        return {"bytesValue": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_any_value(item) for item in value]}}
    return {} if value is None else {"stringValue": str(value)}


def _encode(request: dict[str, Any]) -> bytes:
    text = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, the reader repairs it (sources.unicode_repair)
        return json.dumps(request, ensure_ascii=True, separators=(",", ":")).encode("ascii")
