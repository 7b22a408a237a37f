"""``otel-reliability serve`` as a new user meets it (issue 14 item 8, SPEC §10 revised
2026-12-01): localhost unless told otherwise, its endpoints in the log at start, and at
shutdown what it judged and where the verdicts went.
"""

from __future__ import annotations

import re
import subprocess
import sys

from otel_reliability.receiver.config import load_config

from .corpus import CORPUS
from .receiver_harness import REPO, start_receiver

TOOL_ERROR = CORPUS / "agno" / "agent_tool_error.json"


def test_the_receiver_listens_on_localhost_unless_told_otherwise():
    config = load_config(None, {})
    assert (config.grpc_endpoint, config.http_endpoint) == ("127.0.0.1:4317", "127.0.0.1:4318")
    explicit = load_config(None, {"grpc_endpoint": "0.0.0.0:4317"})
    assert explicit.grpc_endpoint == "0.0.0.0:4317"
    help_text = subprocess.run([sys.executable, "-m", "otel_reliability.cli", "serve", "--help"],
                               capture_output=True, text=True, check=True).stdout
    help_text = " ".join(help_text.split())  # argparse wraps lines
    assert "default 127.0.0.1:4317" in help_text and "default 127.0.0.1:4318" in help_text


def test_the_docs_say_localhost_and_bind_every_interface_only_on_purpose():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "127.0.0.1:4317" in readme and "127.0.0.1:4318" in readme
    collector = (REPO / "collector-config" / "README.md").read_text(encoding="utf-8")
    # receivers on other hosts than the Collector's must be reachable: the docs' command says so
    remote = [line for line in collector.splitlines() if line.startswith("otel-reliability serve") and "127.0.0.1" not in line]
    assert remote and all("--grpc-endpoint 0.0.0.0:4317" in line for line in remote)


def test_start_logs_the_endpoints_and_shutdown_what_was_judged(tmp_path):
    # decision_wait far beyond the test: the trace can only be judged by the shutdown drain
    receiver = start_receiver(tmp_path, decision_wait=600)
    try:
        reply = receiver.post_traces(TOOL_ERROR.read_bytes(), content_type="application/json")
        assert reply.status == 200, reply.body
    finally:
        code = receiver.stop()
    log = receiver.log_text()
    assert code == 0, log
    assert f"OTLP/gRPC on 127.0.0.1:{receiver.grpc_port}" in log
    assert f"OTLP/HTTP on http://127.0.0.1:{receiver.http_port}/v1/traces" in log
    assert "no bearer token set" in log
    stopped = re.search(r"stopped: (\d+) run\(s\) judged since start \((\d+) failed\), (\d+) of them at shutdown "
                        r"from (\d+) buffered trace\(s\).*verdicts flushed to (\S+)", log)
    assert stopped, log
    judged, failed, at_shutdown, buffered, store = stopped.groups()
    assert (judged, failed, at_shutdown, buffered) == ("1", "1", "1", "1")
    assert store == str(receiver.store)

