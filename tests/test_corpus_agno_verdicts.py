"""Real agno traces give exactly agno's own ReliabilityEval verdicts, through ``eval`` and the processor.

Each ``.verdict.json`` holds agno 3.1.10's results for one to four configurations of
the same run; ``.runoutput.json`` names that run (``agno.run.id``).
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import SpanContext, Status, StatusCode

from otel_reliability import Expectation, ReliabilitySpanProcessor
from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.cli import main
from otel_reliability.results import span_hex
from otel_reliability.sources import read_spans

from .corpus import AGNO_FIELDS, companion, scenario_id, trace_files


CASES = [
    pytest.param(path, index, evaluation, id=f"{scenario_id(path)}#{index}")
    for path in trace_files("agno")
    for index, evaluation in enumerate(companion(path, "verdict")["evaluations"])
]


def expectation_of(evaluation) -> Expectation:
    return Expectation(name="agno", **evaluation["config"])


def run_span_id(path) -> int:
    run_id = companion(path, "runoutput")["run_id"]
    [run] = [r for r in assemble(to_record(s) for s in read_spans(path)) if r.run_key == run_id]
    return run.span_id


@pytest.mark.parametrize(("path", "index", "evaluation"), CASES)
def test_eval_reproduces_agnos_verdict(path, index, evaluation, tmp_path):
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps({"expectations": [{"name": "agno", **evaluation["config"]}]}))
    output = tmp_path / "results.json"
    code = main(["eval", str(path), "--expectations", str(expectations), "--format", "json", "--output", str(output)])
    results = json.loads(output.read_text())["results"]
    [result] = [r for r in results if r["run_span_id"] == span_hex(run_span_id(path))]
    assert {field: result[field] for field in AGNO_FIELDS} == evaluation["result"]
    assert code == (0 if all(r["eval_status"] == "PASSED" for r in results) else 1)


@pytest.mark.parametrize(("path", "index", "evaluation"), CASES)
def test_span_processor_reproduces_agnos_verdict_when_the_run_span_ends(path, index, evaluation):
    results = []
    processor = ReliabilitySpanProcessor(expectations=[expectation_of(evaluation)], store=None, on_result=results.append)
    replay(processor, read_spans(path))
    processor.shutdown()
    [result] = [r for r in results if r.run_span_id == run_span_id(path)]
    assert {field: getattr(result.verdict, field) for field in AGNO_FIELDS} == evaluation["result"]


def replay(processor, spans) -> None:
    """Start and end the recorded spans in their recorded time order, as the SDK would."""
    readable = {s.span_id: readable_span(s) for s in spans}
    timeline = [(s.start_ns, 1, s.span_id) for s in spans] + [(s.end_ns, 0, s.span_id) for s in spans]
    for _, starting, span_id in sorted(timeline):
        if starting:
            processor.on_start(readable[span_id])
        else:
            processor.on_end(readable[span_id])


def readable_span(span) -> ReadableSpan:
    return ReadableSpan(
        name=span.name,
        context=SpanContext(span.trace_id, span.span_id, is_remote=False),
        parent=SpanContext(span.trace_id, span.parent_id, is_remote=False) if span.parent_id else None,
        attributes=dict(span.attributes),
        events=[Event(e.name, dict(e.attributes), timestamp=e.time_ns) for e in span.events],
        status=Status(StatusCode(span.status_code), span.status_message or None),
        start_time=span.start_ns,
        end_time=span.end_ns,
    )
