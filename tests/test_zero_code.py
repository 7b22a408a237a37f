"""Zero-code setup: an unmodified pydantic-ai app (``instrument=True``, no provider of its own) run
under the real ``opentelemetry-instrument``, configured only by environment variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from otel_reliability.stores import open_store

APP = '''
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def calculator(b):
    turns = [[ToolCallPart("multiply", {"a": 10, "b": b}, tool_call_id="c1")], "done"]

    def respond(messages, info):
        turn = turns.pop(0)
        return ModelResponse(parts=[TextPart(turn)] if isinstance(turn, str) else turn)

    agent = Agent(FunctionModel(respond), name="calculator")
    agent.instrument = True

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    return agent


for b in (5, 6):
    calculator(b).run_sync("What is 10 times 5?")
'''

EXPECTATIONS = """
expectations:
  - name: calculator multiplies
    match: {agent: calculator}
    expected_tool_calls: [multiply]
    expected_tool_call_arguments: {multiply: {a: 10, b: 5}}
"""

ONE_RUN = ["chat function:respond:", "execute_tool multiply", "chat function:respond:", "invoke_agent calculator"]
"""The spans pydantic-ai emits for one run of the app's agent (a run span is exported once judged,
so the app's next run may overtake it: compared without order)."""


def _instrumented_run(tmp_path: Path, **reliability_env: str) -> subprocess.CompletedProcess:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "expectations.yaml").write_text(textwrap.dedent(EXPECTATIONS))
    env = {
        **os.environ,
        "OTEL_PYTHON_CONFIGURATOR": "otel_reliability",
        "OTEL_TRACES_EXPORTER": "console",  # the app's own exporter: it must still get every span
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        **{f"OTEL_RELIABILITY_{name.upper()}": value for name, value in reliability_env.items()},
    }
    instrument = Path(sys.executable).with_name("opentelemetry-instrument")
    return subprocess.run(
        [str(instrument), sys.executable, "app.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def _exported_spans(stdout: str) -> list[dict]:
    """The console exporter's output: one JSON object per span, pretty-printed back to back."""
    decoder, spans, index = json.JSONDecoder(), [], stdout.find("{")
    while index != -1:
        span, end = decoder.raw_decode(stdout, index)
        spans.append(span)
        index = stdout.find("{", end)
    return spans


def test_verdicts_land_in_the_store_and_on_the_spans_the_app_exporter_gets(tmp_path):
    done = _instrumented_run(tmp_path, expectations="expectations.yaml", store=str(tmp_path / "verdicts.db"))
    assert done.returncode == 0, done.stderr
    spans = _exported_spans(done.stdout)
    assert sorted(s["name"] for s in spans) == sorted(2 * ONE_RUN)
    statuses = [s["attributes"]["reliability.status"] for s in spans if "reliability.status" in s["attributes"]]
    assert statuses == ["PASSED", "FAILED"]  # run spans are judged, and forwarded, in the order they end
    stored = sorted(
        (r.agent, r.expectation, r.verdict.eval_status, tuple(r.verdict.failed_argument_checks))
        for r in _stored(tmp_path / "verdicts.db")
    )
    assert stored == [
        ("calculator", "calculator multiplies", "FAILED", ("multiply",)),
        ("calculator", "calculator multiplies", "PASSED", ()),
    ]


@pytest.mark.parametrize(
    ("reliability_env", "logged"),
    [
        ({"expectations": "missing.yaml"}, "missing.yaml: cannot read expectation file"),
        ({"max_traces": "many"}, "OTEL_RELIABILITY_MAX_TRACES: expected a whole number, got 'many'"),
        ({"max_traces": "0"}, "max_traces: must be at least 1, got 0"),
    ],
    ids=["missing expectation file", "not a number", "out of bounds"],
)
def test_a_setting_that_cannot_be_used_is_logged_and_the_app_telemetry_goes_on_unjudged(tmp_path, reliability_env, logged):
    done = _instrumented_run(tmp_path, store=str(tmp_path / "verdicts.db"), **reliability_env)
    assert done.returncode == 0, done.stderr
    assert "otel-reliability is not judging this process" in done.stderr and logged in done.stderr
    spans = _exported_spans(done.stdout)
    assert sorted(s["name"] for s in spans) == sorted(2 * ONE_RUN)
    assert not any("reliability.status" in s["attributes"] for s in spans)
    assert _stored(tmp_path / "verdicts.db") == []


def _stored(path: Path) -> list:
    """The verdicts in a store file; none when there is no file."""
    if not path.exists():
        return []
    store = open_store(path)
    try:
        return store.query(limit=None)
    finally:
        store.close()
