"""Backend inputs that cannot be read (SPEC §10): an unreachable backend, a URL of the wrong
shape, a scheme no source reads, or pull options that make no sense are each one line on
stderr naming what was wrong, and exit 2, with no traceback and without a server."""

from __future__ import annotations

import pytest

from .backend_harness import cli, one_line_naming
from .receiver_harness import free_port


@pytest.mark.parametrize(
    "inputs, words",
    [
        (lambda port: [f"jaeger://127.0.0.1:{port}"], ["cannot reach http://127.0.0.1:", "/api/v3/services"]),
        (lambda port: [f"phoenix://127.0.0.1:{port}/agents"], ["cannot reach http://127.0.0.1:", "/v1/projects/agents/spans"]),
        (lambda port: ["jaeger://no-port"], ["jaeger://no-port: expected jaeger://HOST:PORT"]),
        (lambda port: [f"phoenix://127.0.0.1:{port}"], ["expected phoenix://HOST:PORT/PROJECT"]),
        (lambda port: [f"phoenix://127.0.0.1:{port}/agents", "--service", "x"], ["--service is Jaeger's"]),
        (lambda port: [f"zipkin://127.0.0.1:{port}"], ["not a backend this reads"]),
        (lambda port: [f"jaeger://127.0.0.1:{port}", "--since", "last week"], ["--since 'last week'"]),
        (lambda port: [f"jaeger://127.0.0.1:{port}", "--since", "1h", "--until", "2h"], ["--since 1h is after --until 2h"]),
        (lambda port: [f"jaeger://127.0.0.1:{port}", "--attribute", "novalue"], ["--attribute 'novalue'"]),
        (lambda port: [f"jaeger://127.0.0.1:{port}", "--trace-id", "xyz"], ["--trace-id 'xyz'"]),
        (lambda port: [f"jaeger://127.0.0.1:{port}", "--limit", "0"], ["--limit must be at least 1"]),
    ],
    ids=["jaeger unreachable", "phoenix unreachable", "no port", "no project", "phoenix --service", "unknown scheme",
         "bad --since",
         "window backwards", "bad --attribute", "bad --trace-id", "bad --limit"],
)
@pytest.mark.parametrize("command", ["eval", "inspect"])
def test_a_backend_input_that_cannot_be_read_is_one_line_and_exit_2(command, inputs, words):
    port = free_port()  # nothing listens there
    done = cli(command, *inputs(port))
    one_line_naming(done, *words)
