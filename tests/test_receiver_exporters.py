"""Real OTLP exporters as the receiver's clients: the corpus sent through each of them gets
exactly the verdicts ``otel-reliability eval`` gives for the same files.

Clients: the Python ``opentelemetry-exporter-otlp`` gRPC and HTTP exporters in a traced
Python process (``tests/receiver_harness.py`` replays the files through a
``TracerProvider``), and the Node.js SDK exporters ``@opentelemetry/exporter-trace-otlp-grpc``,
``-proto`` and ``-http`` (``tests/node/send_traces.mjs``; ``npm ci`` in ``tests/node``), each
also with gzip compression where the exporter offers it.
Each client sends its own copy of the corpus with fresh ids to one shared receiver.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .receiver_harness import (
    NODE_DIR,
    Receiver,
    by_run,
    eval_json,
    module_receivers,  # noqa: F401 - fixture
    remap_corpus,
    run_replay,
)

NODE = shutil.which("node")
NODE_MISSING = (
    "node is not installed"
    if NODE is None
    else f"{NODE_DIR / 'node_modules'} is missing: run `npm ci` in {NODE_DIR}"
    if not (NODE_DIR / "node_modules").is_dir()
    else None
)
needs_node = pytest.mark.skipif(NODE_MISSING is not None, reason=f"Node.js exporters unavailable: {NODE_MISSING}")


def _python(kind: str):
    def send(receiver: Receiver, files: list[Path]) -> dict:
        url = receiver.grpc_endpoint if kind.startswith("grpc") else f"{receiver.http_url}/v1/traces"
        return run_replay(kind, url, files)

    return send


def _node(kind: str):
    def send(receiver: Receiver, files: list[Path]) -> dict:
        url = f"http://{receiver.grpc_endpoint}" if kind.startswith("grpc") else f"{receiver.http_url}/v1/traces"
        done = subprocess.run(
            [NODE, str(NODE_DIR / "send_traces.mjs"), kind, url, *map(str, files)],
            capture_output=True, text=True, timeout=120, cwd=NODE_DIR,
        )
        assert done.returncode == 0, f"node {kind} exporter failed:\n{done.stdout}\n{done.stderr}"
        return json.loads(done.stdout.strip().splitlines()[-1])

    return send


CLIENTS = [
    pytest.param(_python("grpc"), id="python-otlp-proto-grpc-exporter"),
    pytest.param(_python("grpc+gzip"), id="python-otlp-proto-grpc-exporter-gzip"),
    pytest.param(_python("http"), id="python-otlp-proto-http-exporter"),
    pytest.param(_python("http+gzip"), id="python-otlp-proto-http-exporter-gzip"),
    pytest.param(_node("grpc"), id="node-exporter-trace-otlp-grpc", marks=needs_node),
    pytest.param(_node("grpc+gzip"), id="node-exporter-trace-otlp-grpc-gzip", marks=needs_node),
    pytest.param(_node("proto"), id="node-exporter-trace-otlp-proto", marks=needs_node),
    pytest.param(_node("proto+gzip"), id="node-exporter-trace-otlp-proto-gzip", marks=needs_node),
    pytest.param(_node("http"), id="node-exporter-trace-otlp-http-json", marks=needs_node),
    pytest.param(_node("http+gzip"), id="node-exporter-trace-otlp-http-json-gzip", marks=needs_node),
]


@pytest.fixture(scope="module")
def receiver(module_receivers) -> Receiver:  # noqa: F811 - the imported fixture
    return module_receivers.start("exporters")


@pytest.mark.parametrize("send", CLIENTS)
def test_corpus_sent_through_a_real_exporter_gets_the_verdicts_eval_gives(receiver, tmp_path, request, send):
    send_corpus_expecting_eval_verdicts(receiver, send, tmp_path / "corpus", salt=request.node.callspec.id)
    assert receiver.alive()


def send_corpus_expecting_eval_verdicts(receiver: Receiver, send, corpus: Path, salt: str) -> set[str]:
    """Send a fresh copy of the corpus through ``send``; the receiver must store the verdicts
    ``eval`` gives for the same files and drop no span. Returns the trace ids."""
    files = remap_corpus(corpus, salt=salt)
    expected = by_run(eval_json([corpus])["results"])
    assert len(expected) >= 40 and any(r["eval_status"] == "FAILED" for r in expected)
    trace_ids = {r["trace_id"] for r in expected}

    summary = send(receiver, files)

    assert summary["exported"] == summary["replayed"] > 0, summary
    receiver.wait_verdicts(expected, 20)
    assert receiver.metric("agent_reliability_spans_dropped_total") == 0
    return trace_ids
