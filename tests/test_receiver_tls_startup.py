"""TLS on both front doors, and startup errors that exit 2 with a clear message.

The self-signed certificate is made by the ``openssl`` command line for ``localhost`` and
``127.0.0.1``; the tests skip when ``openssl`` is not installed.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
from pathlib import Path

import grpc
import pytest

from .receiver_harness import (
    SERVE,
    agent_spans,
    by_run,
    eval_json,
    expected_results,
    export_request,
    free_port,
    module_receivers,  # noqa: F401 - fixture
    new_trace_id,
    remap_corpus,
    run_replay,
)

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command is not installed")


def make_certificate(directory: Path, name: str = "localhost") -> tuple[Path, Path]:
    """A self-signed EC certificate for localhost and 127.0.0.1, and its key."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return cert, key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_receiver(module_receivers, certificate):  # noqa: F811 - the imported fixture
    return module_receivers.start("tls", decision_wait=0.1, tls=certificate)


@needs_openssl
@pytest.mark.parametrize("transport", ["grpc", "http-protobuf", "http-json"])
def test_traces_sent_over_tls_are_judged_and_served_over_https(tls_receiver, transport):
    spans = agent_spans(new_trace_id(), f"tls-{transport}", failed=["get_news"])

    tls_receiver.send(spans, transport)

    got = tls_receiver.wait_results([spans[0].trace_id.hex()], 1)  # GET /api/v1/results over HTTPS
    assert by_run(got) == by_run(expected_results(spans))


@needs_openssl
@pytest.mark.parametrize("exporter", ["grpc", "http"])
def test_the_python_otlp_exporters_reach_the_receiver_over_tls(tls_receiver, tmp_path, exporter):
    chosen = {"strands/sequential_chain", "pydantic_ai/error_retry", "openai_agents/handoff"}
    files = [
        f for f in remap_corpus(tmp_path / "corpus", salt=f"tls-{exporter}")
        if f"{f.parent.name}/{f.stem}" in chosen
    ]
    expected = by_run(eval_json(files)["results"])
    if exporter == "grpc":
        endpoint = f"localhost:{tls_receiver.grpc_port}"
    else:
        endpoint = f"https://127.0.0.1:{tls_receiver.http_port}/v1/traces"

    run_replay(exporter, endpoint, files, ca_file=tls_receiver.ca_file)

    tls_receiver.wait_verdicts(expected)


@needs_openssl
def test_plaintext_clients_are_refused_by_a_tls_receiver(tls_receiver):
    with grpc.insecure_channel(tls_receiver.grpc_endpoint) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as refused:
            export(export_request(agent_spans(new_trace_id(), "plaintext")).SerializeToString(), timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE

    with socket.create_connection(("127.0.0.1", tls_receiver.http_port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            answer = sock.recv(1024)
        except ConnectionResetError:
            answer = b""
    assert not answer.startswith(b"HTTP/1.1 200")

    context = ssl.create_default_context()  # the system's CAs do not know the self-signed certificate
    with pytest.raises(ssl.SSLCertVerificationError):
        with socket.create_connection(("127.0.0.1", tls_receiver.http_port), timeout=5) as sock:
            context.wrap_socket(sock, server_hostname="localhost")
    assert tls_receiver.alive()


# -- startup errors -----------------------------------------------------------------------


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = ["--store", str(tmp_path / "startup.db"), "--decision-wait", "0.2"]
    if "--grpc-endpoint" not in args:
        base += ["--grpc-endpoint", f"127.0.0.1:{free_port()}"]
    if "--http-endpoint" not in args:
        base += ["--http-endpoint", f"127.0.0.1:{free_port()}"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_RELIABILITY_")}
    return subprocess.run(
        [*SERVE, *base, *args], capture_output=True, text=True, timeout=30, cwd=tmp_path, env={**environ, **(env or {})}
    )


def _listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _write_bytes(tmp_path: Path, name: str, content: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


STARTUP_ERRORS = {
    # name: (arguments given the tmp dir and a listening socket, extra environment, words in the message)
    "gRPC port in use": (
        lambda tmp, busy: ["--grpc-endpoint", f"127.0.0.1:{busy.getsockname()[1]}"], None, ["cannot listen", "gRPC"]
    ),
    "HTTP port in use": (
        lambda tmp, busy: ["--http-endpoint", f"127.0.0.1:{busy.getsockname()[1]}"], None, ["cannot listen", "HTTP"]
    ),
    "certificate file missing": (
        lambda tmp, busy: ["--tls-cert", str(tmp / "missing.crt"), "--tls-key", _write(tmp, "k.key", "x")],
        None, ["tls_cert", "cannot read", "missing.crt"],
    ),
    "certificate that is not PEM": (
        lambda tmp, busy: ["--tls-cert", _write(tmp, "junk.crt", "junk"), "--tls-key", _write(tmp, "k.key", "x")],
        None, ["junk.crt", "not a PEM certificate"],
    ),
    "certificate without its key": (
        lambda tmp, busy: ["--tls-cert", _write(tmp, "c.crt", "x")], None, ["tls_cert and tls_key"]
    ),
    "config file missing": (
        lambda tmp, busy: ["--config", str(tmp / "absent.yaml")], None, ["absent.yaml", "cannot read"]
    ),
    "config file that is not YAML": (
        lambda tmp, busy: ["--config", _write(tmp, "bad.yaml", "decision_wait: [1,\n")],
        None, ["bad.yaml", "not valid YAML"],
    ),
    "config file that is not UTF-8": (
        lambda tmp, busy: ["--config", _write_bytes(tmp, "latin1.yaml", b"# caf\xe9\n")],
        None, ["latin1.yaml: not UTF-8: byte 0xe9 at offset 5 (line 1)"],
    ),
    "expectation file that is not UTF-8": (
        lambda tmp, busy: ["--expectations", _write_bytes(tmp, "rules.yaml", b"expectations:\n  - name: caf\xe9\n")],
        None, ["rules.yaml: not UTF-8: byte 0xe9 at offset 27 (line 2)"],
    ),
    "unknown setting in the config file": (
        lambda tmp, busy: ["--config", _write(tmp, "typo.yaml", "decision_wiat: 1\n")], None, ["decision_wiat"]
    ),
    "out-of-range setting in the config file": (
        lambda tmp, busy: ["--config", _write(tmp, "zero.yaml", "max_traces: 0\n")], None, ["max_traces", "zero.yaml"]
    ),
    "endpoint without a port": (
        lambda tmp, busy: ["--grpc-endpoint", "localhost"], None, ["grpc_endpoint", "HOST:PORT"]
    ),
    "bad value in the environment": (
        lambda tmp, busy: [], {"OTEL_RELIABILITY_MAX_BUFFERED_SPANS": "lots"}, ["max_buffered_spans"]
    ),
}


@pytest.mark.parametrize(("args", "env", "words"), list(STARTUP_ERRORS.values()), ids=list(STARTUP_ERRORS))
def test_startup_errors_exit_2_with_a_clear_message(tmp_path, args, env, words):
    with _listening() as busy:
        done = _serve(tmp_path, *args(tmp_path, busy), env=env)

    assert done.returncode == 2, (done.stdout, done.stderr)
    prefix = "otel-reliability serve: "
    assert prefix in done.stderr, done.stderr  # grpcio may log its own line before it
    message = done.stderr[done.stderr.index(prefix):]
    assert all(word in message for word in words), message
    assert "Traceback" not in done.stderr


def test_a_config_file_sets_what_the_flags_do_not(tmp_path):
    """Sanity check of the harness's own way of configuring: settings from --config apply."""
    from .receiver_harness import start_receiver

    receiver = start_receiver(tmp_path / "r", config={"max_buffered_spans": 3, "retry_after": 7})
    try:
        reply = receiver.post_traces(export_request(agent_spans(new_trace_id(), "cfg")).SerializeToString())
        assert reply.status == 503 and reply.headers["retry-after"] == "7"
    finally:
        assert receiver.stop() == 0

