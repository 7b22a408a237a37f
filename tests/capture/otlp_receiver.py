"""An OTLP/HTTP trace receiver on 127.0.0.1, for SDKs whose spans only leave through their own exporter.

Some tracing SDKs keep a tracer provider of their own and send its spans over OTLP (MLflow
does when ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set). Pointing that at this receiver
records exactly what a collector would get: ``POST /v1/traces`` with an
``ExportTraceServiceRequest`` as protobuf (gzip or not) or OTLP/JSON. ``save`` writes the
received spans as ``capture_common.save_scenario`` writes spans it holds in memory: one
OTLP/JSON document (hex ids), its truth and the span index.

Only the standard library, ``capture_common`` and opentelemetry-proto are imported.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import capture_common as cc
from google.protobuf.json_format import MessageToDict, Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse


class OtlpReceiver:
    """Keeps every ``ExportTraceServiceRequest`` posted to ``endpoint``; a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def document(self) -> dict[str, Any]:
        """Every span received since ``clear``, as one OTLP/JSON request."""
        with self._lock:
            return {"resourceSpans": [rs for request in self._requests for rs in request.get("resourceSpans", [])]}

    def _keep(self, request: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                if "json" in (self.headers.get("content-type") or ""):
                    Parse(body, request)
                else:
                    request.ParseFromString(body)
                receiver._keep(cc._hex_ids(MessageToDict(request, use_integers_for_enums=True)))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        return Handler


def span_index(document: dict[str, Any]) -> list[dict[str, Any]]:
    """``capture_common.span_index`` of received OTLP/JSON spans."""
    spans = [s for rs in document["resourceSpans"] for ss in rs.get("scopeSpans", []) for s in ss.get("spans", [])]
    status_names = {0: "UNSET", 1: "OK", 2: "ERROR"}
    return [
        {"span_id": s["spanId"], "parent_span_id": s.get("parentSpanId") or None, "trace_id": s["traceId"],
         "name": s["name"], "status": status_names[(s.get("status") or {}).get("code", 0)]}
        for s in sorted(spans, key=lambda s: int(s.get("startTimeUnixNano", 0)))
    ]


def save(framework: str, scenario: str, document: dict[str, Any], truth: dict[str, Any]) -> None:
    """Write the received trace and the truth of one scenario, as ``capture_common.save_scenario`` does."""
    folder = cc.FIXTURES / framework
    folder.mkdir(parents=True, exist_ok=True)
    index = span_index(document)
    cc._write(folder / f"{scenario}.json", document)
    cc._write(folder / f"{scenario}.truth.json", {"framework": framework, "scenario": scenario, **truth, "span_index": index})
    print(f"saved {framework}/{scenario}: {len(index)} spans received over OTLP, "
          f"{len(truth.get('tool_executions', []))} tool executions")
    if not index:
        raise AssertionError(f"{framework}/{scenario}: no span reached the receiver")
