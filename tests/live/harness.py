"""What the live framework tests share: a real ``TracerProvider`` whose processor is
``ReliabilitySpanProcessor`` over an in-memory exporter, and what a scenario's truth says.

A live test runs the framework with the scripted model of its capture script
(``tests/capture/capture_common.py``'s ``ScriptedOpenAI`` on 127.0.0.1), traced by the
framework's own instrumentation into ``Harness.provider``; it then holds the run to the
captured scenario: the chain the truth records (agent, tool, outcome in start order) and
the status ``eval`` gives the captured trace, on the exported run span. A page's snippet
(docs/frameworks/) runs as written, in a process of its own (``live_<framework>_docs.py``):
its exporter sends to an ``OtlpTraceSink`` (a real OTLP/gRPC receiver on 127.0.0.1) and its
processor to a results store, and the live run is held to what ``eval`` gives the capture.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.engine import Engine
from otel_reliability.engine import judge_spans
from otel_reliability.results import RunResult
from otel_reliability.sources import read_spans, read_telemetry
from otel_reliability.stores import open_store

from ..reading import is_pseudo_tool

TESTS = Path(__file__).resolve().parents[1]
CORPUS = TESTS / "fixtures" / "corpus"

def _load_capture_common() -> None:
    """Make ``import capture_common`` (the scripted OpenAI-compatible model) work in live tests.

    Loaded by its file, not by putting ``tests/capture`` on ``sys.path``: that folder holds
    capture folders named after frameworks and SDKs (``logfire``, ``mlflow``, ``crewai`` …),
    which would shadow, as empty namespace packages, the real ones a venv lacks.
    """
    spec = importlib.util.spec_from_file_location("capture_common", TESTS / "capture" / "capture_common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["capture_common"] = module
    spec.loader.exec_module(module)


_load_capture_common()


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
    return [(t["agent"], t["name"], t["outcome"]) for t in in_order if not is_pseudo_tool(truth, t)]


def captured_results(framework: str, scenario: str) -> list[RunResult]:
    """What ``eval`` gives each top-level run of the captured trace, with the log records the
    capture wrote beside it (``<scenario>.logs.json``), in start order."""
    logs = CORPUS / framework / f"{scenario}.logs.json"
    records = read_telemetry(logs).logs if logs.exists() else []
    return judge_spans(Engine(), read_spans(CORPUS / framework / f"{scenario}.json"), records)


def captured_statuses(framework: str, scenario: str) -> list[str]:
    """The status ``eval`` gives each top-level run of the captured trace, in start order."""
    return [r.verdict.eval_status for r in captured_results(framework, scenario)]


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


class OtlpTraceSink:
    """An OTLP/gRPC trace receiver on 127.0.0.1 that keeps every span it is sent: what a
    snippet's ``OTLPSpanExporter`` delivers, as a collector behind it would receive it."""

    def __init__(self) -> None:
        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        self.requests: list = []
        sink = self

        class Collect(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):  # noqa: N802 - the gRPC method's name
                sink.requests.append(request)
                return trace_service_pb2.ExportTraceServiceResponse()

        self.server = grpc.server(ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Collect(), self.server)
        self.endpoint = f"http://127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()

    def status_of(self, trace_id: int, span_id: int) -> str | None:
        """The ``reliability.status`` the span arrived with; None when it arrived without one
        (or never arrived)."""
        span = self.span(trace_id, span_id)
        return None if span is None else next(
            (a.value.string_value for a in span.attributes if a.key == "reliability.status"), None)

    def span(self, trace_id: int, span_id: int):
        """The span as it arrived (an OTLP protobuf ``Span``), or None."""
        for request in self.requests:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        if (int.from_bytes(span.trace_id, "big"), int.from_bytes(span.span_id, "big")) == (trace_id, span_id):
                            return span
        return None

    def stop(self) -> None:
        self.server.stop(grace=None)


def provider_shut_down(namespace: dict) -> None:
    """How a snippet that makes its own tracer provider (named ``provider``) ends."""
    namespace["provider"].shutdown()


@dataclass
class PageRun:
    """A page's snippet, executed: the names it defined, the receiver its exporter sends to, the
    results store its processor writes, and how the user's program ends."""

    namespace: dict
    receiver: OtlpTraceSink
    store: Path
    ends: Callable[[dict], None] = provider_shut_down

    def shutdown(self) -> None:
        """End the snippet's tracing as a user's program ends: the batch processor exports what
        it holds, then the receiver stops."""
        self.ends(self.namespace)
        self.receiver.stop()

    def stored_results(self) -> list[RunResult]:
        results = open_store(str(self.store))
        try:
            return results.query()
        finally:
            results.close()


def assert_page_judged_as_captured(page: PageRun, framework: str, scenario: str) -> None:
    """After the live run the page wired: the store holds the verdicts ``eval`` gives the
    captured trace of the same scenario (status and chain), and each stored run's span reached
    the receiver carrying that status."""
    stored = assert_page_stored_as_captured(page, framework, scenario)
    exported = [page.receiver.status_of(r.trace_id, r.run_span_id) for r in stored]
    assert exported == [r.verdict.eval_status for r in stored], f"the receiver got the run spans with {exported}"


def assert_page_stored_as_captured(page: PageRun, framework: str, scenario: str) -> list[RunResult]:
    """After the live run the page wired (its program ended): the store holds the verdicts
    ``eval`` gives the captured trace of the same scenario, status and chain; returns them."""
    page.shutdown()
    captured = captured_results(framework, scenario)
    # (this module is not assertion-rewritten: the messages say what differed)
    stored = page.stored_results()
    assert sorted(r.verdict.eval_status for r in stored) == sorted(r.verdict.eval_status for r in captured), (
        f"the store holds {[r.verdict.eval_status for r in stored]}, the capture says "
        f"{[r.verdict.eval_status for r in captured]}")
    assert chain_of(stored) == chain_of(captured), f"the stored chain is {chain_of(stored)}, the capture's {chain_of(captured)}"
    return stored


def run_page_snippet(framework: str, store: Path, monkeypatch, endpoint: str | None = "OTEL_EXPORTER_OTLP_ENDPOINT",
                     ends: Callable[[dict], None] = provider_shut_down) -> PageRun:
    """Run the page's snippet as it stands: its processor keeps verdicts in ``store``
    (``OTEL_RELIABILITY_STORE``) and its OTLP exporter sends to an ``OtlpTraceSink``, whose
    address is set in ``endpoint`` (the variable the page tells the user to set; None: the page
    sets none, and nothing is sent there); ``ends`` is how the program ends when the snippet names
    no ``provider``."""
    receiver = OtlpTraceSink()
    monkeypatch.setenv("OTEL_RELIABILITY_STORE", str(store))
    if endpoint is not None:
        monkeypatch.setenv(endpoint, receiver.endpoint)
    namespace: dict = {}
    exec(compile(page_snippet(framework), f"docs/frameworks/{framework}.md", "exec"), namespace)
    return PageRun(namespace, receiver, store, ends)
