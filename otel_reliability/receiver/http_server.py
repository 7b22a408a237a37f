"""OTLP/HTTP (``POST /v1/traces``, ``POST /v1/logs``) and the results API, on aiohttp (the fastest stack measured here).

Routes: ``POST /v1/traces``; ``POST /v1/logs`` (GenAI event log records, joined to their spans); ``GET /api/v1/results`` (same JSON as ``eval --format json``);
``GET /api/v1/reputation`` (each agent's standing); ``POST /api/v1/reload`` (the expectation
files read again, all or nothing: 200 with the new digests, 400 with the error and the old set in force);
``GET /metrics`` (Prometheus); ``GET /healthz`` (liveness: the process answers);
``GET /readyz`` (readiness: 503 with the reasons while intake cannot be written).

With ``auth_token`` set, every route but ``/healthz`` and ``/readyz`` asks for it (``/metrics`` too,
unless ``metrics_auth: false``). Request bodies are gunzipped, parsed and buffered on a
thread pool of their own, never on the event loop: one 60 MB body must not stall the
other clients, ``/healthz`` included. A client gets ``header_timeout`` seconds to send
its headers and ``body_timeout`` for its body.
"""

from __future__ import annotations

import asyncio
import errno
import json
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from ..expectations import ExpectationError
from ..reputation import standings_document
from ..model import STATUSES
from ..moments import FORMS, moment_ns
from ..session_results import SessionResult, results_document_with_sessions
from .auth import BearerToken
from .config import ReceiverConfig
from .intake import LOGS, PROTOBUF, TRACES, IntakeError, decode_body
from .outcomes import Overloaded
from .shards import ShardedReceiver


SHUTDOWN_GRACE_S = 5.0  # requests in flight at a stop signal get this long to finish, as gRPC calls do


def intake_threads(config: ReceiverConfig) -> int:
    """Threads that decode and hand on request bodies. With workers they mostly wait for the
    workers' answers, so two per worker keep them busy; alone, a few let small requests pass
    a big one (they take turns on the GIL)."""
    return 2 * config.workers + 2


def build_app(service: ShardedReceiver, intake: ThreadPoolExecutor) -> web.Application:
    config = service.config
    open_paths = {"/healthz", "/readyz"} if config.metrics_auth else {"/healthz", "/readyz", "/metrics"}
    app = web.Application(
        client_max_size=config.max_request_bytes, middlewares=[_auth(config.auth_token, frozenset(open_paths))]
    )
    app["service"] = service
    app["intake"] = intake
    app.router.add_post("/v1/traces", _export_traces)
    app.router.add_post("/v1/logs", _export_logs)
    app.router.add_get("/api/v1/results", _results)
    app.router.add_get("/api/v1/reputation", _reputation)
    app.router.add_post("/api/v1/reload", _reload)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    return app


def _auth(token: str | None, open_paths: frozenset[str]):
    bearer = BearerToken(token) if token else None

    @web.middleware
    async def check(request: web.Request, handler):
        if bearer is not None and request.path not in open_paths:
            if not bearer.allows(request.headers.get("Authorization")):
                raise web.HTTPUnauthorized(
                    text="missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
                )
        return await handler(request)

    return check


async def _export_traces(request: web.Request) -> web.Response:
    return await _export(request, TRACES)


async def _export_logs(request: web.Request) -> web.Response:
    return await _export(request, LOGS)


async def _export(request: web.Request, signal: str) -> web.Response:
    service: ShardedReceiver = request.app["service"]
    started = time.perf_counter()
    protobuf = request.content_type == PROTOBUF
    try:
        try:
            async with asyncio.timeout(service.config.body_timeout):
                body = await request.read()
        except TimeoutError:
            return _status(408, f"request body not received within {service.config.body_timeout:g} s", protobuf)
        accepted = await asyncio.get_running_loop().run_in_executor(
            request.app["intake"], _take, service, body, request.headers, signal
        )
    except web.HTTPRequestEntityTooLarge:
        return _status(413, f"request body exceeds the limit of {service.config.max_request_bytes} bytes", protobuf)
    except (ConnectionResetError, RequestPayloadError) as exc:  # the body ended early or its framing is broken
        return _status(400, f"request body is incomplete: {exc}", protobuf)
    except IntakeError as exc:
        retry = {"Retry-After": str(service.config.retry_after)} if exc.status == 503 else None  # a worker down
        return _status(exc.status, exc.message, protobuf, headers=retry)
    except Overloaded as exc:
        return _status(503, str(exc), protobuf, headers={"Retry-After": str(exc.retry_after)})
    finally:
        service.request_duration.record(time.perf_counter() - started, {"rpc.system": "http"})
    logs = signal == LOGS
    response = logs_service_pb2.ExportLogsServiceResponse() if logs else trace_service_pb2.ExportTraceServiceResponse()
    rejected_field = "rejected_log_records" if logs else "rejected_spans"
    if accepted.rejected_spans:
        setattr(response.partial_success, rejected_field, accepted.rejected_spans)
        response.partial_success.error_message = accepted.message
    if protobuf:
        return web.Response(body=response.SerializeToString(), content_type=PROTOBUF)
    partial = (
        {"partialSuccess": {
            "rejectedLogRecords" if logs else "rejectedSpans": str(accepted.rejected_spans),
            "errorMessage": accepted.message,
        }}
        if accepted.rejected_spans
        else {}
    )
    return web.json_response(partial)


def _take(service: ShardedReceiver, body: bytes, headers: Any, signal: str) -> Any:
    """Gunzip, parse and buffer one body of ``signal`` (traces or logs), on an intake thread."""
    checked = decode_body(
        body, headers.get("Content-Type", ""), headers.get("Content-Encoding", ""),
        service.config.max_decompressed_bytes, signal,
    )
    return service.accept(checked)


def _status(code: int, message: str, protobuf: bool, headers: dict[str, str] | None = None) -> web.Response:
    """An error as the OTLP spec wants it: a ``google.rpc.Status`` in the request's encoding."""
    if protobuf:
        body = status_pb2.Status(code=_GRPC_CODE.get(code, 2), message=message).SerializeToString()
        return web.Response(status=code, body=body, content_type=PROTOBUF, headers=headers)
    return web.json_response({"code": _GRPC_CODE.get(code, 2), "message": message}, status=code, headers=headers)


_GRPC_CODE = {400: 3, 401: 16, 408: 4, 413: 8, 415: 3, 429: 8, 503: 14}


async def _results(request: web.Request) -> web.Response:
    service: ShardedReceiver = request.app["service"]
    try:
        query = _results_query(request.query)
    except ValueError as exc:
        return web.json_response({"error": str(exc)}, status=400)
    results = await asyncio.get_running_loop().run_in_executor(None, lambda: service.store.query(**query))
    runs = [r for r in results if not isinstance(r, SessionResult)]
    sessions = [r for r in results if isinstance(r, SessionResult)]
    document = results_document_with_sessions(runs, sessions)
    return web.json_response(document, dumps=lambda d: json.dumps(d, ensure_ascii=False))


def _results_query(params: Any) -> dict[str, Any]:
    unknown = sorted(set(params) - {"trace_id", "agent", "status", "since", "limit", "session_id"})
    if unknown:
        raise ValueError(f"unknown query parameter(s): {', '.join(unknown)}")
    query: dict[str, Any] = {"agent": params.get("agent")}
    if "session_id" in params:  # that session's result, not the runs'
        if not params["session_id"]:
            raise ValueError("session_id must not be empty")
        query["session_id"] = params["session_id"]
    if "trace_id" in params:
        trace_id = params["trace_id"].lower()
        if len(trace_id) != 32 or any(c not in "0123456789abcdef" for c in trace_id):
            raise ValueError(f"trace_id must be 32 hex digits, got {params['trace_id']!r}")
        query["trace_id"] = trace_id
    if "status" in params:
        if params["status"].upper() not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {params['status']!r}")
        query["status"] = params["status"].upper()
    if "since" in params:
        query["since"] = _instant(params["since"])
    if "limit" in params:
        if not params["limit"].isdigit() or not 1 <= int(params["limit"]) <= 10_000:
            raise ValueError(f"limit must be a whole number from 1 to 10000, got {params['limit']!r}")
        query["limit"] = int(params["limit"])
    return query


def _instant(text: str) -> float:
    """Unix seconds, or any moment the CLI's ``--since`` takes (``moments``): an RFC 3339 time,
    a date, or an age such as ``24h``."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return moment_ns(text, time.time_ns()) / 1e9
    except ValueError:
        raise ValueError(f"since must be unix seconds, {FORMS}; got {text!r}") from None


async def _reload(request: web.Request) -> web.Response:
    """Reload the expectation files: 200 with the new digests, or 400 with why, the old set in force."""
    service: ShardedReceiver = request.app["service"]
    try:
        reloaded = await asyncio.get_running_loop().run_in_executor(None, service.reload_expectations)
    except ExpectationError as exc:
        return web.json_response({"outcome": "refused", "error": str(exc)}, status=400)
    return web.json_response(reloaded.to_json())


async def _reputation(request: web.Request) -> web.Response:
    service: ShardedReceiver = request.app["service"]
    if service.reputation is None:
        return web.json_response({"error": "reputation is turned off (setting `reputation: false`)"}, status=404)
    standings = await asyncio.get_running_loop().run_in_executor(None, service.reputation.standings)
    return web.json_response(standings_document(standings), dumps=lambda d: json.dumps(d, ensure_ascii=False))


async def _metrics(request: web.Request) -> web.Response:
    service: ShardedReceiver = request.app["service"]
    body = await asyncio.get_running_loop().run_in_executor(None, service.metrics_text)
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def _healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _readyz(request: web.Request) -> web.Response:
    service: ShardedReceiver = request.app["service"]
    reasons = await asyncio.get_running_loop().run_in_executor(None, service.not_ready)
    if reasons:
        return web.json_response({"status": "not ready", "reasons": reasons}, status=503)
    return web.json_response({"status": "ready"})


class HttpServer:
    """aiohttp on its own thread and event loop."""

    def __init__(self, service: ShardedReceiver, config: ReceiverConfig) -> None:
        if config.http_endpoint is None:
            raise ValueError("no http_endpoint to listen on")
        host, _, port = config.http_endpoint.rpartition(":")
        self._host, self._port = host.strip("[]"), int(port)
        self._intake = ThreadPoolExecutor(intake_threads(config), thread_name_prefix="otel-reliability-http-intake")
        self._app = build_app(service, self._intake)
        self._ssl = _ssl_context(config)
        self._loop = asyncio.new_event_loop()
        # auto_decompress=False: else aiohttp gunzips bodies itself, limited only by
        # client_max_size, and intake.inflate then refuses every gzip body as corrupt.
        # aiohttp closes a connection still waiting for a request after keepalive_timeout,
        # counted from connecting or from the last response: that bounds a slow header too.
        self._runner = web.AppRunner(
            self._app, access_log=None, auto_decompress=False, keepalive_timeout=config.header_timeout,
            shutdown_timeout=SHUTDOWN_GRACE_S,
        )
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="otel-reliability-http", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            if isinstance(self._error, OSError) and self._error.errno == errno.EADDRINUSE:
                raise OSError(f"cannot listen on {self._host}:{self._port} for OTLP/HTTP (port in use)")
            raise OSError(f"cannot listen on {self._host}:{self._port} for OTLP/HTTP: {self._error}")

    def stop(self) -> None:
        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._intake.shutdown(wait=True)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self._host, self._port, ssl_context=self._ssl)
            self._loop.run_until_complete(site.start())
        except OSError as exc:
            self._error = exc
            self._loop.close()  # else the interpreter's exit may collect it after its self-pipe, and print a traceback
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()


def _ssl_context(config: ReceiverConfig) -> ssl.SSLContext | None:
    if not config.tls_cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context
