"""Paused runs shared through a PostgreSQL results store (a real server): a run paused in a
trace one receiver judges joins the trace that resumes it at another receiver, whichever
of the two is judged first, and the verdicts equal ``eval``'s of both traces together."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import psycopg
import pytest

from otel_reliability.adapters import to_record
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import Role, SpanRecord, ToolRequest, ToolResponse
from otel_reliability.receiver.config import ReceiverConfig
from otel_reliability.receiver.intake import JSON, Body
from otel_reliability.receiver.service import ReceiverService
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store
from otel_reliability.stores.paused import PostgresPausedRuns, decode_records, encode_records

from .corpus import CORPUS, trace_files
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

PAUSED_AND_RESUMED = CORPUS / "pydantic_ai" / "refused_approval_denied.json"  # trace 1 pauses, trace 2 resumes
LATER = 5.0  # seconds past now: quiet for decision_wait (2 s), still within late_window (30 s)


def test_every_corpus_record_reads_back_as_it_was_written():
    for path in trace_files():
        records = [to_record(span) for span in read_spans(path)]
        assert decode_records(encode_records(records)) == records, path.name


def test_records_an_older_writer_stored_still_read_without_the_fields_added_since():
    record = SpanRecord(1, 2, 0, "autogen process m", 10, 20, Role.MODEL, sent_by="calc",
                        responses=(ToolResponse("c1", "no", names_refusal="unknown tool"),))
    [older] = json.loads(encode_records([record]))
    older = older[:-14]  # before sent_by (and model_call, tokens, names_agent, profile, returned, refusal_possible,
    # agent_version, parameters, tool_definitions, outlived, failure_possible, spans_some_calls, stopped_for_tools)
    older[18] = [answer[:-2] for answer in older[18]]  # before names_refusal and ran
    [read] = decode_records(json.dumps([older]))
    assert (read.sent_by, read.responses) == (None, (ToolResponse("c1", "no"),))


def test_records_keep_array_attributes_as_tuples_and_every_field():
    record = SpanRecord(
        2**127 + 5, 7, 3, "chat", 10, 20, Role.MODEL, "", agent_name="a", run_key="r", output="out",
        attributes={"tags": ("x", "y"), "n": 2**70, "x": float("inf")}, tool_name="t", arguments={"a": [1, None]},
        call_id="c", refusal="no", handoff_to="b", requests=(ToolRequest("t", '{"a": 1}', "c1"),),
        responses=(ToolResponse("c1", "done", refusal=False, error=True, names_refusal="approval denied"),),
        dispatched=ToolRequest("t", None), sent_by="calc",
        evaluations=({"gen_ai.evaluation.name": "judge", "labels": ("ok",)},), policy_denied=True, agent_version="1.8",
        parameters='{"type": "object", "properties": {"a": {"type": "integer"}}}', tool_definitions=('{"name": "t"}',),
        outlived=True, failure_possible=True, spans_some_calls=True, stopped_for_tools=True,
    )
    assert decode_records(encode_records([record])) == [record]


def _record(n: int) -> SpanRecord:
    return SpanRecord(n, n, 0, f"run {n}", n, n + 1, Role.AGENT_RUN, run_key=f"r{n}")


def test_a_receiver_sees_each_run_another_shared_once_and_never_its_own(postgres_server):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    a, b = PostgresPausedRuns(url), PostgresPausedRuns(url)
    try:
        assert b.shared_since_last() == []
        a.share(["call:c1", "run:r1"], [_record(1)])
        a.share(["call:c2"], [_record(2)])
        b.share(["call:c3"], [_record(3)])
        assert b.shared_since_last() == [(["call:c1", "run:r1"], [_record(1)]), (["call:c2"], [_record(2)])]
        assert b.shared_since_last() == []
        assert a.shared_since_last() == [(["call:c3"], [_record(3)])]
    finally:
        a.close()
        b.close()


def test_the_store_keeps_the_newest_runs_up_to_its_capacity(postgres_server):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    writer = PostgresPausedRuns(url, capacity=3)
    for n in range(1, 6):
        writer.share([f"call:c{n}"], [_record(n)])
    latecomer = PostgresPausedRuns(url, capacity=3)
    try:
        assert [keys for keys, _ in latecomer.shared_since_last()] == [["call:c3"], ["call:c4"], ["call:c5"]]
        with psycopg.connect(url) as db:
            assert db.execute("SELECT count(*) FROM reliability_paused_runs").fetchone() == (3,)
    finally:
        writer.close()
        latecomer.close()


def test_sharing_outlives_the_server_dropping_the_connection(postgres_server):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    a, b = PostgresPausedRuns(url + "&application_name=dropped-paused-runs"), PostgresPausedRuns(url)
    try:
        _drop_connections(postgres_server, "dropped-paused-runs")
        a.share(["call:c1"], [_record(1)])
        _drop_connections(postgres_server, "dropped-paused-runs")
        assert b.shared_since_last() == [(["call:c1"], [_record(1)])] and a.shared_since_last() == []
    finally:
        a.close()
        b.close()


def _drop_connections(server: str, application: str) -> None:
    """What a server restart does to one client's connections: the server ends them."""
    with psycopg.connect(server, autocommit=True) as admin:
        (dropped,) = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s", (application,)
        ).fetchone()
    assert dropped == 1


def _traces(path: Path, workdir: Path) -> list[Path]:
    """The OTLP/JSON document at ``path`` split into one file per trace, oldest trace first."""
    document = json.loads(path.read_bytes())
    starts: dict[str, int] = {}
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                starts[span["traceId"]] = min(starts.get(span["traceId"], 2**64), int(span["startTimeUnixNano"]))
    files = []
    for n, trace_id in enumerate(sorted(starts, key=starts.__getitem__)):
        part = copy.deepcopy(document)
        for resource in part["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                scope["spans"] = [s for s in scope["spans"] if s["traceId"] == trace_id]
        files.append(workdir / f"trace-{n}.json")
        files[-1].write_text(json.dumps(part), encoding="utf-8")
    return files


def _comparable(results) -> list[dict]:
    records = [{k: v for k, v in r.to_record().items() if k != "evaluated_at"} for r in results]
    return sorted(records, key=lambda r: (r["trace_id"], r["run_span_id"]))


@pytest.mark.parametrize("first", ["paused", "resuming"], ids=["paused-judged-first", "resuming-judged-first"])
def test_a_run_resumed_at_another_receiver_joins_its_paused_run(postgres_server, first, tmp_path):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    expected = _comparable(judge_spans(Engine(), read_spans(PAUSED_AND_RESUMED)))
    paused_trace, resuming_trace = _traces(PAUSED_AND_RESUMED, tmp_path)
    alone = _comparable(judge_spans(Engine(), read_spans(resuming_trace)))
    assert alone != [r for r in expected if r["trace_id"] == alone[0]["trace_id"]], "judged alone it differs"

    config = ReceiverConfig(store=url, grpc_endpoint=None, http_endpoint=None)
    receivers = {"paused": ReceiverService(config), "resuming": ReceiverService(config)}
    receivers["paused"].accept(Body(paused_trace.read_bytes(), JSON))
    receivers["resuming"].accept(Body(resuming_trace.read_bytes(), JSON))
    second = "resuming" if first == "paused" else "paused"
    try:
        for name in (first, second, first, second):  # each learns on its tick what the other shared
            receivers[name].pipeline.tick(time.monotonic() + LATER)
        store = open_store(url)
        assert _comparable(store.query(limit=None)) == expected
        store.close()
    finally:
        for receiver in receivers.values():
            receiver.stop()


def test_a_receiver_whose_shared_paused_runs_fail_still_judges_and_stores(postgres_server, tmp_path, caplog):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    paused_trace, _ = _traces(PAUSED_AND_RESUMED, tmp_path)
    receiver = ReceiverService(ReceiverConfig(store=url, grpc_endpoint=None, http_endpoint=None))
    try:
        receiver.shared_paused.close()  # every read and write of the shared paused runs now raises
        receiver.accept(Body(paused_trace.read_bytes(), JSON))
        receiver.pipeline.tick(time.monotonic() + LATER)
        store = open_store(url)
        assert _comparable(store.query(limit=None)) == _comparable(judge_spans(Engine(), read_spans(paused_trace)))
        store.close()
    finally:
        receiver.stop()
    assert "could not read the shared paused runs" in caplog.text
    assert "could not share a paused run" in caplog.text
