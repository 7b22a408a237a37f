"""OTLP/gRPC: ``TraceService/Export`` and ``LogsService/Export`` in front of ``ShardedReceiver``.

A refusal the client should retry (a full buffer, a worker down, too many calls at once)
carries its retry delay twice in the trailing metadata: as ``RetryInfo`` inside the
``google.rpc.Status`` of ``grpc-status-details-bin`` (gRPC's rich error model, which the Go
exporter and the Collector's OTLP exporter read), and alone under ``google.rpc.retryinfo-bin``,
the one key ``opentelemetry-exporter-otlp-proto-grpc`` reads (``exporter.py``, ``_export``).

At most ``CONCURRENT_EXPORTS`` calls are handled at once; one more is refused with
RESOURCE_EXHAUSTED and the retry delay. grpcio's own limit (``maximum_concurrent_rpcs``),
which refuses without a delay, is set well above it and is only a backstop.
"""

from __future__ import annotations

import ssl
import threading
import time
from concurrent import futures
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from .auth import BearerToken
from .native_stderr import held_stderr
from .config import ReceiverConfig
from .intake import LOGS, PROTOBUF, TRACES, Body, IntakeError
from .outcomes import Overloaded
from .shards import ShardedReceiver

CONCURRENT_EXPORTS = 64  # calls handled at once; the next is asked to retry
CONCURRENT_EXPORTS_REFUSAL = "concurrent_exports"  # its reason in agent.reliability.refusals
# Threads beyond the handled calls, so that a refusal never waits behind calls that are
# stuck (a worker not answering): it is answered at once, with its delay.
REFUSING_THREADS = 8
GRPCIO_BACKSTOP = 4 * CONCURRENT_EXPORTS


class _Export:
    """``Export`` of one signal's service: traces or logs, the same checks and answers."""

    def __init__(self, service: ShardedReceiver, signal: str) -> None:
        self._service = service
        self._signal = signal
        token = service.config.auth_token
        self._auth = BearerToken(token) if token else None
        self._retry_after = service.config.retry_after
        self._slots = threading.BoundedSemaphore(CONCURRENT_EXPORTS)

    def __call__(self, request, context):
        if not self._slots.acquire(blocking=False):
            self._service.metrics.refused(CONCURRENT_EXPORTS_REFUSAL)
            _abort_with_retry(
                context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"receiver is handling {CONCURRENT_EXPORTS} export calls; retry after {self._retry_after} s",
                self._retry_after,
            )
        started = time.perf_counter()
        try:
            if self._auth is not None and not self._auth.allows(_metadata(context, "authorization")):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
            try:
                accepted = self._service.accept(Body(request, PROTOBUF, self._signal))  # raw bytes: see start_grpc
            except IntakeError as exc:
                if exc.grpc_code == "UNAVAILABLE":  # a worker down: worth a retry, after a pause
                    _abort_with_retry(context, grpc.StatusCode.UNAVAILABLE, exc.message, self._retry_after)
                context.abort(getattr(grpc.StatusCode, exc.grpc_code), exc.message)
            except Overloaded as exc:
                _abort_with_retry(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), exc.retry_after)
            if self._signal == LOGS:
                response = logs_service_pb2.ExportLogsServiceResponse()
                if accepted.rejected_spans:
                    response.partial_success.rejected_log_records = accepted.rejected_spans
                    response.partial_success.error_message = accepted.message
                return response
            response = trace_service_pb2.ExportTraceServiceResponse()
            if accepted.rejected_spans:
                response.partial_success.rejected_spans = accepted.rejected_spans
                response.partial_success.error_message = accepted.message
            return response
        finally:
            self._slots.release()
            self._service.request_duration.record(time.perf_counter() - started, {"rpc.system": "grpc"})


def _metadata(context: grpc.ServicerContext, key: str) -> str | None:
    for name, value in context.invocation_metadata():
        if name == key:
            return value if isinstance(value, str) else None  # a -bin key carries bytes, never a token
    return None


def _abort_with_retry(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, retry_after: int) -> None:
    """Abort with ``code`` and a retry delay where every OTLP exporter looks for one."""
    retry = error_details_pb2.RetryInfo(retry_delay=Duration(seconds=retry_after))
    status = status_pb2.Status(code=code.value[0], message=message)
    status.details.add().Pack(retry)
    context.abort_with_status(_RichStatus(code, status, retry))


class _RichStatus(grpc.Status):
    def __init__(self, code: grpc.StatusCode, status: status_pb2.Status, retry: error_details_pb2.RetryInfo) -> None:
        self.code = code
        self.details = status.message
        self.trailing_metadata = (
            ("grpc-status-details-bin", status.SerializeToString()),
            ("google.rpc.retryinfo-bin", retry.SerializeToString()),
        )


def start_grpc(service: ShardedReceiver, config: ReceiverConfig) -> grpc.Server:
    """Start the gRPC server on ``config.grpc_endpoint``; raises ``OSError`` when the port is taken."""
    endpoint = config.grpc_endpoint
    if endpoint is None:
        raise ValueError("no grpc_endpoint to listen on")
    server = grpc.server(
        futures.ThreadPoolExecutor(
            max_workers=CONCURRENT_EXPORTS + REFUSING_THREADS, thread_name_prefix="otel-reliability-grpc"
        ),
        options=[
            ("grpc.max_receive_message_length", config.max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=GRPCIO_BACKSTOP,
    )
    # Export takes the raw bytes and parses them itself: grpcio answers a request it cannot
    # deserialize with INTERNAL, where OTLP asks for INVALID_ARGUMENT and a message.
    handlers = []
    for service_name, signal, response in (
        ("opentelemetry.proto.collector.trace.v1.TraceService", TRACES, trace_service_pb2.ExportTraceServiceResponse),
        ("opentelemetry.proto.collector.logs.v1.LogsService", LOGS, logs_service_pb2.ExportLogsServiceResponse),
    ):
        export: Any = grpc.unary_unary_rpc_method_handler(
            _Export(service, signal), response_serializer=response.SerializeToString
        )
        handlers.append(grpc.method_handlers_generic_handler(service_name, {"Export": export}))
    server.add_generic_rpc_handlers(tuple(handlers))
    credentials = None
    if config.tls_cert and config.tls_key:  # given together or not at all (ReceiverConfig)
        _check_tls_pair(config.tls_cert, config.tls_key)  # grpcio would report a bad pair as a port in use
        with open(config.tls_cert, "rb") as cert, open(config.tls_key, "rb") as key:
            credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
    # grpcio's C core writes a failed bind to stderr itself: the OSError below says it in one line
    with held_stderr() as native:
        try:
            if credentials is not None:
                port = server.add_secure_port(endpoint, credentials)
            else:
                port = server.add_insecure_port(endpoint)
        except RuntimeError:  # grpcio reports a port it cannot bind this way
            port = 0
        if port == 0:
            native.drop("Failed to add port to server")
    if port == 0:
        raise OSError(f"cannot listen on {config.grpc_endpoint} for OTLP/gRPC (port in use?)")
    server.start()
    return server


def _check_tls_pair(cert: str, key: str) -> None:
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise OSError(f"{cert} and {key} are not a PEM certificate and its private key ({exc.reason or exc})") from None
