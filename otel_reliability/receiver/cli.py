"""``otel-reliability serve``: run the receiver until SIGTERM or SIGINT; SIGHUP reloads its
expectation files (as ``POST /api/v1/reload`` does: validated first, all or nothing).

On a stop signal the servers stop taking requests (calls and requests in flight get
up to 5 s to finish), every buffered trace that holds a run span is judged as it stands —
quiet or not — and the store is closed. Traces with no run span yet stay in the intake log
for the next start (with ``durability: none`` there is none, and they are lost).

A start that fails (a store that cannot be opened, a port in use, an expectation file that
cannot be read) prints one line and exits 2, and removes what it had created on disk — the
store file, the intake log, folders ``--mkdir`` made — and nothing that was there before.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from ..expectations import ExpectationError
from .config import ConfigError, ReceiverConfig, load_config
from .startup_files import NewPaths
from .tuning import tune_garbage_collection, tune_malloc


def register(commands: argparse._SubParsersAction) -> None:
    fields = ReceiverConfig.model_fields
    settings = "\n".join(f"  {name}: {field.description}" for name, field in fields.items())
    serve = commands.add_parser(
        "serve",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="settings (config file keys; environment OTEL_RELIABILITY_<KEY in upper case>):\n" + settings,
        help="run the OTLP receiver: judge every agent run in the traces it receives",
        description="Receive OTLP traces over gRPC and HTTP, judge each agent run once its trace is "
        "complete, keep the verdicts and serve them. Settings: defaults < --config file < "
        "OTEL_RELIABILITY_<SETTING> environment variables < flags. The expectation files are read "
        "again, without a restart, on SIGHUP or POST /api/v1/reload (validated first: a bad file "
        "leaves the set in force and is answered 400).",
    )
    serve.add_argument("--config", metavar="FILE", help="YAML file of settings (any of the flags below, by name)")
    serve.add_argument("--grpc-endpoint", metavar="HOST:PORT", help=_about(fields, "grpc_endpoint") + " (default 127.0.0.1:4317; 0.0.0.0:4317 for every interface)")
    serve.add_argument("--http-endpoint", metavar="HOST:PORT", help=_about(fields, "http_endpoint") + " (default 127.0.0.1:4318; 0.0.0.0:4318 for every interface)")
    serve.add_argument("--store", metavar="PATH|URL", help=_about(fields, "store") + " (default otel-reliability.db)")
    serve.add_argument("--expectations", action="append", metavar="FILE", help=_about(fields, "expectations") + "; repeatable")
    serve.add_argument("--conventions", action="append", metavar="FILE", help=_about(fields, "conventions") + "; repeatable")
    serve.add_argument("--decision-wait", type=float, metavar="SECONDS", help=_about(fields, "decision_wait") + " (default 2)")
    serve.add_argument("--workers", type=int, metavar="N", help=_about(fields, "workers") + " (default 1)")
    serve.add_argument("--durability", choices=("none", "batch", "always"), help=_about(fields, "durability") + " (default batch)")
    serve.add_argument("--auth-token", metavar="TOKEN", help=_about(fields, "auth_token"))
    serve.add_argument("--tls-cert", metavar="FILE", help=_about(fields, "tls_cert"))
    serve.add_argument("--tls-key", metavar="FILE", help=_about(fields, "tls_key"))
    serve.add_argument("--mkdir", action="store_true", default=None, help=_about(fields, "mkdir"))
    serve.set_defaults(run=_serve)


def _about(fields: dict[str, Any], name: str) -> str:
    """A setting's description, for its flag's help."""
    return fields[name].description or ""


def _serve(args: argparse.Namespace) -> int:
    try:
        from .grpc_server import start_grpc
        from .http_server import HttpServer
        from .shards import ShardedReceiver
    except ImportError as exc:
        print(f"otel-reliability serve: the receiver needs pip install 'otel-reliability[receiver]' ({exc})", file=sys.stderr)
        return 2

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Installed before anything listens: a stop signal that arrives while the servers
    # start must still drain, not kill the process with buffered spans unjudged.
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    overrides = {
        "grpc_endpoint": args.grpc_endpoint,
        "http_endpoint": args.http_endpoint,
        "store": args.store,
        "expectations": args.expectations,
        "conventions": args.conventions,
        "decision_wait": args.decision_wait,
        "workers": args.workers,
        "durability": args.durability,
        "auth_token": args.auth_token,
        "tls_cert": args.tls_cert,
        "tls_key": args.tls_key,
        "mkdir": args.mkdir,
    }
    tune_malloc()  # before any thread of the receiver allocates
    try:
        config = load_config(args.config, overrides)
    except (ConfigError, ExpectationError, OSError) as exc:
        print(f"otel-reliability serve: {exc}", file=sys.stderr)
        return 2
    new_paths = NewPaths(config)
    try:
        service = ShardedReceiver(config)
    except (ValueError, OSError) as exc:  # StoreSpecError, ExpectationError, IntakeLogError …
        new_paths.remove()
        print(f"otel-reliability serve: {exc}", file=sys.stderr)
        return 2
    # SIGHUP reloads the expectation files, on a thread of its own (a reload waits on every shard)
    signal.signal(signal.SIGHUP, lambda *_: threading.Thread(target=_reload, args=(service,), daemon=True).start())
    servers: list = []
    try:
        if config.grpc_endpoint:
            servers.append(_GrpcHandle(start_grpc(service, config)))
        if config.http_endpoint:
            http = HttpServer(service, config)
            http.start()
            servers.append(http)
    except (OSError, ValueError) as exc:
        for server in servers:
            server.stop()
        logging.getLogger("otel_reliability").setLevel(logging.WARNING)  # no "stopped" summary of a start that failed
        service.stop()
        new_paths.remove()
        print(f"otel-reliability serve: {exc}", file=sys.stderr)
        return 2
    tune_garbage_collection()
    service.start()
    log = logging.getLogger(__name__)
    if config.grpc_endpoint:
        log.info("OTLP/gRPC on %s", config.grpc_endpoint)
    if config.http_endpoint:
        scheme = "https" if config.tls_cert else "http"
        log.info("OTLP/HTTP on %s://%s/v1/traces; results on /api/v1/results, standings on /api/v1/reputation, "
                 "Prometheus on /metrics, health on /healthz", scheme, config.http_endpoint)
    log.info("verdicts in %s%s", config.store, "" if config.auth_token else "; no bearer token set: anyone who can "
             "reach the endpoints may send and read")
    stopping.wait()
    for server in servers:
        server.stop()
    service.stop()
    return 0


class _GrpcHandle:
    def __init__(self, server) -> None:
        self._server = server

    def stop(self) -> None:
        self._server.stop(grace=5).wait()


def _reload(service) -> None:
    """One SIGHUP's reload; the service logs the outcome (new digests, or why the old set stays)."""
    try:
        service.reload_expectations()
    except ExpectationError:
        pass  # logged by the service, with the error; the old expectations stay in force
