"""OTLP/gRPC: ``TraceService/Export`` and ``LogsService/Export`` in front of ``ShardedReceiver``."""

from __future__ import annotations

import hmac
import ssl
import time
from concurrent import futures

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from .config import ReceiverConfig
from .intake import LOGS, PROTOBUF, TRACES, Body, IntakeError
from .service import Overloaded
from .shards import ShardedReceiver


class _Export:
    """``Export`` of one signal's service: traces or logs, the same checks and answers."""

    def __init__(self, service: ShardedReceiver, signal: str) -> None:
        self._service = service
        self._signal = signal
        token = service.config.auth_token
        self._expected_auth = f"Bearer {token}" if token else None

    def __call__(self, request, context):
        started = time.perf_counter()
        try:
            if self._expected_auth is not None:
                given = dict(context.invocation_metadata()).get("authorization", "")
                if not hmac.compare_digest(given.encode(), self._expected_auth.encode()):
                    context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
            try:
                accepted = self._service.accept(Body(request, PROTOBUF, self._signal))  # raw bytes: see start_grpc
            except IntakeError as exc:
                context.abort(getattr(grpc.StatusCode, exc.grpc_code), exc.message)
            except Overloaded as exc:
                _abort_with_retry(context, exc)
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
            self._service.request_duration.record(time.perf_counter() - started, {"rpc.system": "grpc"})


def _abort_with_retry(context: grpc.ServicerContext, exc: Overloaded) -> None:
    """RESOURCE_EXHAUSTED with RetryInfo, which OTLP exporters read as "retry after"."""
    retry = error_details_pb2.RetryInfo(retry_delay=Duration(seconds=exc.retry_after))
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=str(exc))
    status.details.add().Pack(retry)
    context.abort_with_status(_RichStatus(status))


class _RichStatus(grpc.Status):
    def __init__(self, status: status_pb2.Status) -> None:
        self.code = grpc.StatusCode.RESOURCE_EXHAUSTED
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


def start_grpc(service: ShardedReceiver, config: ReceiverConfig) -> grpc.Server:
    """Start the gRPC server on ``config.grpc_endpoint``; raises ``OSError`` when the port is taken."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="otel-reliability-grpc"),
        options=[
            ("grpc.max_receive_message_length", config.max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=64,
    )
    # Export takes the raw bytes and parses them itself: grpcio answers a request it cannot
    # deserialize with INTERNAL, where OTLP asks for INVALID_ARGUMENT and a message.
    handlers = []
    for service_name, signal, response in (
        ("opentelemetry.proto.collector.trace.v1.TraceService", TRACES, trace_service_pb2.ExportTraceServiceResponse),
        ("opentelemetry.proto.collector.logs.v1.LogsService", LOGS, logs_service_pb2.ExportLogsServiceResponse),
    ):
        export = grpc.unary_unary_rpc_method_handler(
            _Export(service, signal), response_serializer=response.SerializeToString
        )
        handlers.append(grpc.method_handlers_generic_handler(service_name, {"Export": export}))
    server.add_generic_rpc_handlers(tuple(handlers))
    if config.tls_cert:
        _check_tls_pair(config.tls_cert, config.tls_key)  # grpcio would report a bad pair as a port in use
    try:
        if config.tls_cert:
            with open(config.tls_cert, "rb") as cert, open(config.tls_key, "rb") as key:
                credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
            port = server.add_secure_port(config.grpc_endpoint, credentials)
        else:
            port = server.add_insecure_port(config.grpc_endpoint)
    except RuntimeError:  # grpcio reports a port it cannot bind this way
        port = 0
    if port == 0:
        raise OSError(f"cannot listen on {config.grpc_endpoint} for OTLP/gRPC (port in use?)")
    server.start()
    return server


def _check_tls_pair(cert: str, key: str) -> None:
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise OSError(f"{cert} and {key} are not a PEM certificate and its private key ({exc.reason or exc})") from None
