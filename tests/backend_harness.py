"""Real tracing backends for the backend source tests: Jaeger v2 and Phoenix, each started
on free loopback ports in a folder of its own, and stopped with SIGTERM.

- ``start_jaeger`` runs the Jaeger that ``.ci/setup`` builds from the Go module
  ``github.com/jaegertracing/jaeger`` (version in ``.ci/jaeger.version``) into
  ``.cache/jaeger/<version>/``: its OTLP/gRPC receiver, in-memory store and query API v3,
  with the configuration docs/backends.md documents (deploy/jaeger/jaeger.yaml), on free ports
  (Jaeger's default ports would clash on a shared machine).
- ``start_phoenix`` runs ``phoenix serve`` from ``.venv-phoenix`` (``.ci/setup``), with its
  SQLite database in the folder, its HTTP (REST API and OTLP/HTTP) and OTLP/gRPC ports free.

Each returns once the backend answers its health check and takes OTLP/gRPC.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .receiver_harness import REPO, STOP_TIMEOUT_S, free_port, terminate, wait_until

JAEGER_VERSION = (REPO / ".ci" / "jaeger.version").read_text(encoding="utf-8").strip()
JAEGER_BINARY = REPO / ".cache" / "jaeger" / JAEGER_VERSION / "jaeger"
JAEGER_CONFIG = REPO / "deploy" / "jaeger" / "jaeger.yaml"
PHOENIX_BINARY = REPO / ".venv-phoenix" / "bin" / "phoenix"
JAEGER_STARTUP_S = 60.0
PHOENIX_STARTUP_S = 180.0  # its first start creates and migrates its database
SINCE = "2000-01-01T00:00:00Z"  # the corpus was recorded in the past: every trace of it is after this
EXPORT_CALLS = 3  # each trace's spans dealt over this many export calls (receiver_harness.export_split)
EXIT_BAD_INPUT = 2


def cli(*args: str) -> subprocess.CompletedProcess:
    """``otel-reliability ARGS…`` in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", *args], capture_output=True, text=True, timeout=300, cwd=REPO
    )


def one_line_naming(done: subprocess.CompletedProcess, *words: str) -> None:
    """The command failed as bad input should: exit 2, one line on stderr with every word, no traceback."""
    assert done.returncode == EXIT_BAD_INPUT, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("otel-reliability: "), done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def missing(binary: Path, what: str) -> str | None:
    """Why a backend cannot be started here (for ``pytest.fail``), or None."""
    return None if binary.is_file() else f"{binary} is missing: run .ci/setup, which installs {what}"


@dataclass
class Backend:
    """One backend subprocess: where to send OTLP/gRPC, and the URL its source reads."""

    name: str
    process: subprocess.Popen
    grpc_port: int
    url: str
    log: Path

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        return terminate(self.process, timeout, self.name, self.log_text)


def _ports(count: int) -> list[int]:
    ports: set[int] = set()
    while len(ports) < count:
        ports.add(free_port())
    return sorted(ports)


def _healthy(backend: Backend, health_port: int, path: str) -> bool:
    if backend.process.poll() is not None:
        raise AssertionError(f"{backend.name} exited with {backend.process.returncode}:\n{backend.log_text()[-4000:]}")
    conn = http.client.HTTPConnection("127.0.0.1", health_port, timeout=1)
    try:
        conn.request("GET", path)
        if conn.getresponse().status != 200:
            return False
        with socket.create_connection(("127.0.0.1", backend.grpc_port), timeout=1):
            return True
    except OSError:
        return False
    finally:
        conn.close()


def _start(backend: Backend, health_port: int, path: str, timeout: float) -> Backend:
    try:
        wait_until(lambda: _healthy(backend, health_port, path), timeout, f"{backend.name}'s health check")
    except AssertionError:
        backend.process.kill()
        backend.process.wait(10)
        raise
    return backend


def start_jaeger(workdir: Path) -> Backend:
    import yaml

    workdir.mkdir(parents=True, exist_ok=True)
    grpc_port, query_http, query_grpc, health_port = _ports(4)
    # the documented configuration (docs/backends.md), on ports of this run's own
    config = yaml.safe_load(JAEGER_CONFIG.read_text(encoding="utf-8"))
    query = config["extensions"]["jaeger_query"]
    query["http"]["endpoint"], query["grpc"]["endpoint"] = f"127.0.0.1:{query_http}", f"127.0.0.1:{query_grpc}"
    config["extensions"]["healthcheckv2"]["http"]["endpoint"] = f"127.0.0.1:{health_port}"
    config["receivers"]["otlp"]["protocols"] = {"grpc": {"endpoint": f"127.0.0.1:{grpc_port}"}}
    (workdir / "jaeger.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    log = workdir / "jaeger.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(JAEGER_BINARY), f"--config=file:{workdir / 'jaeger.yaml'}"],
            stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
        )
    backend = Backend("Jaeger", process, grpc_port, f"jaeger://127.0.0.1:{query_http}", log)
    return _start(backend, health_port, "/status", JAEGER_STARTUP_S)


def start_phoenix(workdir: Path, project: str = "default") -> Backend:
    workdir.mkdir(parents=True, exist_ok=True)
    http_port, grpc_port = _ports(2)
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        "PHOENIX_LOGGING_LEVEL": "warning",
        "PHOENIX_DB_LOGGING_LEVEL": "warning",
    }
    log = workdir / "phoenix.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(PHOENIX_BINARY), "serve"], stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    backend = Backend("Phoenix", process, grpc_port, f"phoenix://127.0.0.1:{http_port}/{project}", log)
    return _start(backend, http_port, "/healthz", PHOENIX_STARTUP_S)
