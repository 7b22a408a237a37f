"""What the live framework tests share: a real ``TracerProvider`` whose processor is
``ReliabilitySpanProcessor`` over an in-memory exporter, and what a scenario's truth says.

A live test runs the framework with the scripted model of its capture script
(``tests/capture/capture_common.py``'s ``ScriptedOpenAI`` on 127.0.0.1), traced by the
framework's own instrumentation into ``Harness.provider``; it then holds the run to the
captured scenario: the chain the truth records (agent, tool, outcome in start order) and
the status ``eval`` gives the captured trace, on the exported run span. A page's snippet
(docs/frameworks/) runs as written, in a process of its own (``live_<framework>_docs.py``).
"""

from __future__ import annotations

import json
import re
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.engine import Engine
from otel_reliability.engine.pipeline import judge_spans
from otel_reliability.results import RunResult
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store

TESTS = Path(__file__).resolve().parents[1]
CORPUS = TESTS / "fixtures" / "corpus"
sys.path.insert(0, str(TESTS / "capture"))  # capture_common: the scripted OpenAI-compatible model


@dataclass
class Harness:
    provider: TracerProvider = field(default_factory=TracerProvider)
    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    results: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.processor = ReliabilitySpanProcessor(
            SimpleSpanProcessor(self.exporter), store=None, on_result=self.results.append
        )
        self.provider.add_span_processor(self.processor)

    def judged(self) -> tuple[list[RunResult], list[ReadableSpan]]:
        """Every run judged so far, and the exported spans that carry a verdict."""
        self.provider.force_flush()
        carriers = [s for s in self.exporter.get_finished_spans() if "reliability.status" in (s.attributes or {})]
        return list(self.results), carriers

    def clear(self) -> None:
        self.provider.force_flush()
        self.exporter.clear()
        self.results.clear()


def truth_chain(framework: str, scenario: str) -> list[tuple[str, str, str]]:
    """(agent, tool, outcome) of what really ran in the captured scenario, in order."""
    truth = json.loads((CORPUS / framework / f"{scenario}.truth.json").read_text())
    in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
    return [(t["agent"], t["name"], t["outcome"]) for t in in_order]


def captured_statuses(framework: str, scenario: str) -> list[str]:
    """The status ``eval`` gives each top-level run of the captured trace, in start order."""
    return [r.verdict.eval_status for r in judge_spans(Engine(), read_spans(CORPUS / framework / f"{scenario}.json"))]


def chain_of(results: list[RunResult]) -> list[tuple[str, str, str]]:
    return [(a.agent, a.tool, a.outcome) for r in results for a in r.verdict.chain]


def assert_judged_as_captured(harness: Harness, framework: str, scenario: str) -> None:
    """The live runs give the truth's chain, and each exported run span carries the status
    ``eval`` gives the captured trace of the same scenario."""
    results, carriers = harness.judged()
    assert chain_of(results) == truth_chain(framework, scenario)
    statuses = captured_statuses(framework, scenario)
    assert [r.verdict.eval_status for r in results] == statuses
    assert sorted(s.attributes["reliability.status"] for s in carriers) == sorted(statuses)


# -- the docs pages' snippets, run as a user pastes them -------------------------------------

PAGES = TESTS.parent / "docs" / "frameworks"


def page_snippet(framework: str) -> str:
    """The Python block of docs/frameworks/<framework>.md: the lines that wire the instrumentation."""
    [code] = re.findall(r"^```python\n(.*?)^```", (PAGES / f"{framework}.md").read_text(), re.S | re.M)
    return code


def run_page_snippet(framework: str, store: Path, monkeypatch) -> dict:
    """Run the page's snippet as it stands: its processor keeps verdicts in ``store``
    (``OTEL_RELIABILITY_STORE``) and its OTLP exporter points at a closed port on 127.0.0.1."""
    with socket.socket() as probe:  # a port nothing listens on: the export fails fast, locally
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OTEL_RELIABILITY_STORE", str(store))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    namespace: dict = {}
    exec(compile(page_snippet(framework), f"docs/frameworks/{framework}.md", "exec"), namespace)
    return namespace


def stored_statuses(store: Path) -> list[str]:
    results = open_store(str(store))
    try:
        return sorted(row.verdict.eval_status for row in results.query())
    finally:
        results.close()
