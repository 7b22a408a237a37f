"""Issue 25, point 3: the agent's version on every result, in the stores, the metrics and
``compare --store X --version-a A --version-b B``.

Spans come from the real SDK (a ``TracerProvider`` whose resource names ``service.version``),
through every reader that keeps it: the SDK span itself, OTLP protobuf, OTLP/JSON and the
console exporter's JSON; verdicts go to real SQLite, JSON Lines and PostgreSQL stores.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import Expectation, ReliabilitySpanProcessor
from otel_reliability.cli import main
from otel_reliability.emitters.metrics import ReliabilityMetrics
from otel_reliability.emitters.otlp_file import export_request
from otel_reliability.engine import Engine
from otel_reliability.engine.end_of_input import judge_spans
from otel_reliability.model import SpanData, Verdict
from otel_reliability.results import RunResult
from otel_reliability.sources.files import decode_bytes
from otel_reliability.sources.sdk import from_readable_span
from otel_reliability.stores import open_store

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

CALC = Expectation(name="calc", expected_tool_calls=["multiply"])


def traced(service_version: str | None, run_attributes: dict | None = None, tool: str = "multiply", runs: int = 1):
    """Ended SDK spans of ``runs`` calculator runs calling ``tool``, under a resource with that version."""
    exporter = InMemorySpanExporter()
    attributes = {"service.name": "calc-app"} | ({} if service_version is None else {"service.version": service_version})
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for _ in range(runs):
        with tracer.start_as_current_span("invoke_agent calculator", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator", **(run_attributes or {}),
        }):
            with tracer.start_as_current_span(f"execute_tool {tool}", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": "{}",
            }):
                pass
    provider.shutdown()
    return exporter.get_finished_spans()


def console_lines(spans) -> bytes:
    return "\n".join(json.dumps(json.loads(span.to_json())) for span in spans).encode()


READERS = {
    "sdk span": lambda spans: [from_readable_span(span) for span in spans],
    "otlp protobuf": lambda spans: decode_bytes(encode_spans(spans).SerializeToString(), "t.pb").spans,
    "otlp json": lambda spans: decode_bytes(json.dumps(export_request(spans)).encode(), "t.json").spans,
    "console json": lambda spans: decode_bytes(console_lines(spans), "t.jsonl").spans,
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    ("service_version", "run_attributes", "expected"),
    [
        ("1.7", None, "1.7"),  # the resource's service.version
        ("1.7", {"gen_ai.agent.version": "2.0"}, "2.0"),  # the run span's own version wins
        (None, {"gen_ai.agent.version": "2.0"}, "2.0"),
        (None, None, None),  # neither says: unknown, null in the JSON
    ],
    ids=["resource", "run-span-wins", "run-span-only", "unknown"],
)
def test_every_reader_carries_the_agent_version_to_the_result(reader, service_version, run_attributes, expected):
    spans = READERS[reader](traced(service_version, run_attributes))
    [result] = judge_spans(Engine([CALC]), spans)
    assert result.agent_version == expected
    assert result.to_json()["agent_version"] == expected
    assert RunResult.from_json(result.to_record()).agent_version == expected


def test_the_span_processor_stores_the_version_its_provider_resource_names(tmp_path):
    store = tmp_path / "results.db"
    provider = TracerProvider(resource=Resource.create({"service.version": "1.8"}))
    provider.add_span_processor(ReliabilitySpanProcessor(SimpleSpanProcessor(InMemorySpanExporter()), store=str(store), expectations=[CALC]))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent calculator", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator"}):
        pass
    provider.shutdown()
    [stored] = open_store(str(store)).query(agent_version="1.8")
    assert (stored.agent, stored.agent_version) == ("calculator", "1.8")


def versioned(trace_id: int, version: str | None, status: str = "PASSED") -> RunResult:
    return RunResult(trace_id, 1, "calc", "math", Verdict(status, "math"), float(trace_id), agent_version=version)


@pytest.mark.parametrize("kind", ["sqlite", "jsonl", "postgres"])
def test_stores_keep_the_version_and_select_by_it(kind, tmp_path, request):
    spec = fresh_schema_url(request.getfixturevalue("postgres_server")) if kind == "postgres" else str(tmp_path / f"r.{'db' if kind == 'sqlite' else 'jsonl'}")
    store = open_store(spec)
    store.add_many([versioned(1, "1.7"), versioned(2, "1.8"), versioned(3, None), versioned(4, "1.8", "FAILED")])
    assert sorted(r.trace_id for r in store.query(agent_version="1.8")) == [2, 4]
    assert [r.trace_id for r in store.query(agent_version="1.8", status="failed")] == [4]
    assert {r.trace_id: r.agent_version for r in store.query(limit=None)} == {1: "1.7", 2: "1.8", 3: None, 4: "1.8"}
    store.close()


OLD_COLUMNS = """(trace_id TEXT NOT NULL, run_span_id TEXT NOT NULL, agent TEXT NOT NULL,
    expectation TEXT NOT NULL, status TEXT NOT NULL, score {real} NOT NULL, evaluated_at {real} NOT NULL,
    verdict TEXT NOT NULL, PRIMARY KEY (trace_id, run_span_id))"""


def old_row() -> tuple:
    record = versioned(1, None).to_record()
    del record["agent_version"]  # as an older writer stored it
    return (record["trace_id"], record["run_span_id"], "calc", "math", "PASSED", 1.0, 1.0, json.dumps(record))


def old_sqlite(tmp_path, request) -> str:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE results " + OLD_COLUMNS.format(real="REAL"))
        old.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", old_row())
    return str(path)


def old_postgres(tmp_path, request) -> str:
    import psycopg

    url = fresh_schema_url(request.getfixturevalue("postgres_server"))
    with psycopg.connect(url, autocommit=True) as old:
        old.execute("CREATE TABLE reliability_results (seq BIGSERIAL NOT NULL, " + OLD_COLUMNS.format(real="DOUBLE PRECISION")[1:])
        old.execute("INSERT INTO reliability_results (trace_id, run_span_id, agent, expectation, status, score, evaluated_at, verdict) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", old_row())
    return url


@pytest.mark.parametrize("make_old", [old_sqlite, old_postgres], ids=["sqlite", "postgres"])
def test_a_store_made_before_the_version_column_gains_it_and_keeps_its_rows(make_old, tmp_path, request):
    store = open_store(make_old(tmp_path, request))
    store.add(versioned(2, "1.8"))
    assert {r.trace_id: r.agent_version for r in store.query(limit=None)} == {1: None, 2: "1.8"}
    assert [r.trace_id for r in store.query(agent_version="1.8")] == [2]
    store.close()


def evaluations_by_version(reader: InMemoryMetricReader) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for resource_metrics in reader.get_metrics_data().resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "agent.reliability.evaluations":
                    for point in metric.data.data_points:
                        version = point.attributes.get("gen_ai.agent.version")
                        counts[version] = counts.get(version, 0) + point.value
    return counts


def test_the_evaluations_metric_is_labelled_by_version_within_the_label_bound():
    reader = InMemoryMetricReader()
    metrics = ReliabilityMetrics(MeterProvider(metric_readers=[reader]), max_label_values=2)
    metrics.record_many([versioned(1, "1.7"), versioned(2, "1.8"), versioned(3, "1.9"), versioned(4, "1.7"), versioned(5, None)])
    assert evaluations_by_version(reader) == {"1.7": 2, "1.8": 1, "_other": 1, None: 1}


@pytest.fixture
def two_versions(tmp_path) -> Path:
    """One store holding 4 passing runs of 1.7 and, of 1.8, 2 passing and 2 calling the wrong tool."""
    path = tmp_path / "results.db"
    store = open_store(str(path))
    for version, tool, runs in (("1.7", "multiply", 4), ("1.8", "multiply", 2), ("1.8", "add", 2)):
        store.add_many(judge_spans(Engine([CALC]), [from_readable_span(s) for s in traced(version, tool=tool, runs=runs)]))
    store.close()
    return path


def compare_json(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["compare", *args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_compare_sets_two_versions_of_one_store_side_by_side(two_versions, capsys):
    code, document, err = compare_json(capsys, "--store", str(two_versions), "--version-a", "1.7", "--version-b", "1.8")
    assert code == 1 and "100% → 50%" in err
    overall = document["overall"]
    assert (overall["baseline"]["runs"], overall["candidate"]["runs"]) == (4, 4)
    assert (overall["baseline"]["pass_rate"], overall["candidate"]["pass_rate"]) == (1.0, 0.5)
    assert len(document["newly_failing"]) == 2
    assert (document["baseline"]["source"], document["candidate"]["source"]) == (f"{two_versions} @ 1.7", f"{two_versions} @ 1.8")


def test_compare_of_a_version_with_itself_exits_0(two_versions, capsys):
    code, document, _ = compare_json(capsys, "--store", str(two_versions), "--version-a", "1.8", "--version-b", "1.8")
    assert code == 0 and document["newly_failing"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--store", "{store}", "--version-a", "1.7"], "give both --version-a and --version-b"),
        (["--store", "{store}", "--version-a", "1.7", "--version-b", " "], "give both --version-a and --version-b"),
        (["--version-a", "1.7", "--version-b", "1.8"], "compare the verdicts of one --store; give --store"),
        (["{store}", "--store", "{store}", "--version-a", "1.7", "--version-b", "1.8"], "--store takes the place of BASELINE"),
        (["{store}"], "give BASELINE and CANDIDATE, or --store"),
        (["--store", "{store}", "--version-a", "1.7", "--version-b", "9.9"],
         "--version-b 9.9: {store} holds no verdicts of that agent version; it holds '1.7', '1.8'"),
        (["--store", "jaeger://localhost:16686", "--version-a", "1.7", "--version-b", "1.8"], "a tracing backend holds no verdicts"),
        (["--store", "{store}.missing", "--version-a", "1.7", "--version-b", "1.8"], "--store {store}.missing: no such file"),
    ],
    ids=["one-version", "blank-version", "versions-without-store", "store-and-sides", "one-side", "unknown-version",
         "backend-store", "missing-store"],
)
def test_bad_version_arguments_exit_2_with_one_line_naming_what_was_wrong(two_versions, capsys, args, message):
    code = main(["compare", *(a.format(store=two_versions) for a in args)])
    err = capsys.readouterr().err
    assert code == 2
    assert message.format(store=two_versions) in err and len(err.strip().splitlines()) == 1


def test_a_run_the_engine_fails_on_keeps_its_version():
    # runs nested deeper than Python's stack: assembly raises RecursionError, the trace gets NOT_EVALUATED
    spans = [
        SpanData(7, i + 1, i, "invoke_agent deep", i, 10_000 - i, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "deep"},
                 service_version="1.9")
        for i in range(3000)
    ]
    [result] = judge_spans(Engine(), spans)
    assert (result.verdict.eval_status, result.agent_version) == ("NOT_EVALUATED", "1.9")
