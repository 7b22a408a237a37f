"""Results stores behind one protocol, each on the real thing: SQLite files (WAL), JSON
Lines files and a PostgreSQL server. Every scenario runs against all three."""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from otel_reliability.model import ERROR, OK, Attempt, Verdict
from otel_reliability.results import RunResult
from otel_reliability.stores import StoreSpecError, open_store
from otel_reliability.stores.jsonl import JsonLinesStore
from otel_reliability.stores.postgres import PostgresStore
from otel_reliability.stores.sqlite import SQLiteStore

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {"sqlite": ".db", "jsonl": ".jsonl"}


@pytest.fixture(params=["sqlite", "jsonl", "postgres"])
def new_spec(request, tmp_path):
    """``new_spec()``: the spec of a new, empty store of the parametrised kind."""
    numbers = itertools.count()

    def new() -> str:
        if request.param == "postgres":
            return fresh_schema_url(request.getfixturevalue("postgres_server"))
        return str(tmp_path / "store" / f"results-{next(numbers)}{SUFFIXES[request.param]}")

    return new


@pytest.fixture
def path(new_spec) -> str:
    """One store's spec (a file path, or a PostgreSQL URL with a schema of its own)."""
    return new_spec()


def result(trace_id: int, agent: str = "calc", status: str = "PASSED", at: float = 0.0, span_id: int = 1) -> RunResult:
    chain = [Attempt("add", {"a": 1}, OK, agent, (agent,), "c1", 0x10, None, 5), Attempt("div", {}, ERROR, agent, (agent,))]
    verdict = Verdict(status, "math", passed_tool_calls=["add"], errored_tool_calls=["div"], score=0.5, chain=chain)
    return RunResult(trace_id, span_id, agent, "math", verdict, at)


def filled(path: str | Path):
    store = open_store(path)
    store.add(result(1, "calc", "PASSED", at=100.0))
    store.add(result(2, "calc", "FAILED", at=200.0))
    store.add(result(3, "web", "FAILED", at=300.0))
    store.add(result(3, "web", "PASSED", at=300.0, span_id=2))
    store.add(result(4, "web", "PASSED", at=50.0))
    return store


@pytest.mark.parametrize(
    ("path_name", "kind"),
    [("results.db", SQLiteStore), ("results.sqlite", SQLiteStore), ("results", SQLiteStore), ("r.JSONL", JsonLinesStore)],
    ids=["db", "sqlite", "no-suffix", "jsonl-any-case"],
)
def test_open_store_picks_the_store_by_suffix(tmp_path, path_name, kind):
    store = open_store(str(tmp_path / path_name))
    assert isinstance(store, kind)
    store.close()


def test_a_sqlite_url_and_its_path_open_the_same_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()  # a store's folder must exist (it is created only when asked)
    filled("data/results.db").close()
    for spec in ("sqlite:///data/results.db", f"sqlite:///{tmp_path}/data/results.db"):
        store = open_store(spec)
        assert len(store.query()) == 5, spec
        store.close()


def test_open_store_opens_postgresql_for_either_scheme_spelling(postgres_server):  # noqa: F811 (the fixture)
    for spec in (postgres_server, "postgres://" + postgres_server.split("://", 1)[1]):
        store = open_store(spec)
        assert isinstance(store, PostgresStore)
        store.close()


@pytest.mark.parametrize("url", ["s3://bucket/x", "redis://cache/0", "mysql://h/db"])
def test_open_store_names_an_unsupported_scheme(url):
    scheme = url.split(":")[0]
    with pytest.raises(StoreSpecError, match=f"results store '{url}': scheme '{scheme}' is not supported"):
        open_store(url)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, [(3, 2), (3, 1), (2, 1), (1, 1), (4, 1)]),
        ({"agent": "web"}, [(3, 2), (3, 1), (4, 1)]),
        ({"status": "FAILED"}, [(3, 1), (2, 1)]),
        ({"status": "passed"}, [(3, 2), (1, 1), (4, 1)]),
        ({"trace_id": 3}, [(3, 2), (3, 1)]),
        ({"trace_id": "00000000000000000000000000000003"}, [(3, 2), (3, 1)]),
        ({"since": 200.0}, [(3, 2), (3, 1), (2, 1)]),
        ({"agent": "web", "status": "PASSED", "since": 100.0}, [(3, 2)]),
        ({"limit": 2}, [(3, 2), (3, 1)]),
        ({"limit": None}, [(3, 2), (3, 1), (2, 1), (1, 1), (4, 1)]),
        ({"agent": "nobody"}, []),
    ],
    ids=[
        "all-newest-first-equal-times-later-write-first",
        "by-agent",
        "by-status",
        "status-any-case",
        "by-trace-int",
        "by-trace-hex",
        "since-inclusive",
        "filters-combine",
        "limit",
        "no-limit",
        "no-match",
    ],
)
def test_query_filters_orders_newest_first_and_limits(path, filters, expected):
    store = filled(path)
    found = store.query(**filters)
    assert [(r.trace_id, r.run_span_id) for r in found] == expected
    store.close()


def test_query_returns_the_whole_result(path):
    store = open_store(path)
    store.add(result(9, at=1.5))
    assert store.query() == [result(9, at=1.5)]
    store.close()


@pytest.mark.parametrize(
    ("writes", "expected_status"),
    [
        ([("PASSED", 1.0), ("FAILED", 2.0)], "FAILED"),
        ([("FAILED", 2.0), ("PASSED", 2.0)], "PASSED"),
        ([("FAILED", 2.0), ("PASSED", 1.0)], "FAILED"),
    ],
    ids=["later-verdict-supersedes", "tie-goes-to-the-later-write", "older-verdict-written-late-does-not"],
)
def test_a_superseding_verdict_replaces_the_earlier_one(path, writes, expected_status):
    store = open_store(path)
    for status, at in writes:
        store.add(result(7, status=status, at=at))
    (only,) = store.query()
    assert only.verdict.eval_status == expected_status
    store.close()


@pytest.mark.parametrize(
    ("arguments", "read_back"),
    [
        ({"city": "Zürich", "n": 3, "ratio": 0.25}, {"city": "Zürich", "n": 3, "ratio": 0.25}),
        ({"id": 2**70, "neg": -(2**64)}, {"id": 2**70, "neg": -(2**64)}),  # beyond 64 bits: kept exactly
        ({"x": float("nan"), "y": [float("inf"), 1.0]}, {"x": None, "y": [None, 1.0]}),  # strict JSON: null
        ({"big": 2**70, "x": float("-inf")}, {"big": 2**70, "x": None}),
        ({"nested": {"t": (1, "a")}}, {"nested": {"t": [1, "a"]}}),
        ({"text": "lone \ud800 surrogate"}, {"text": "lone \ud800 surrogate"}),
        ({"raw": b"\x00\xff"}, {"raw": "b'\\x00\\xff'"}),  # what JSON cannot hold is kept as its str()
    ],
    ids=["plain", "big-integers", "non-finite-numbers", "big-and-non-finite", "tuples", "lone-surrogate", "bytes"],
)
def test_stored_arguments_read_back_as_strict_json_values(path, arguments, read_back):
    store = open_store(path)
    stored = result(11)
    stored.verdict.chain[0].arguments = arguments
    store.add(stored)
    (found,) = store.query()
    assert found.verdict.chain[0].arguments == read_back
    store.close()


def test_data_survives_reopening(path):
    filled(path).close()
    store = open_store(path)
    assert len(store.query()) == 5
    store.add(result(5, at=400.0))
    assert store.query(limit=1)[0].trace_id == 5
    store.close()


def test_postgres_table_has_the_expected_columns(postgres_server):  # noqa: F811 (the fixture)
    import psycopg

    url = fresh_schema_url(postgres_server)
    filled(url).close()
    with psycopg.connect(url) as db:
        row = db.execute("SELECT trace_id, run_span_id, agent, expectation, status, score FROM reliability_results "
                         "WHERE agent='calc' ORDER BY evaluated_at").fetchone()
    assert row == ("00000000000000000000000000000001", "0000000000000001", "calc", "math", "PASSED", 0.5)


def test_a_postgres_store_outlives_the_server_dropping_its_connection(postgres_server):  # noqa: F811 (the fixture)
    import psycopg

    store = open_store(fresh_schema_url(postgres_server) + "&application_name=dropped-results")
    store.add(result(1, at=1.0))
    for write in (lambda: store.add(result(2, at=2.0)), lambda: store.add_many([result(3, at=3.0), result(4, at=4.0)])):
        with psycopg.connect(postgres_server, autocommit=True) as admin:  # as a server restart would
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'dropped-results'")
        write()
    assert [r.trace_id for r in store.query()] == [4, 3, 2, 1]
    store.close()


def test_sqlite_file_is_in_wal_mode_with_the_expected_columns(tmp_path):
    filled(tmp_path / "results.db").close()
    db = sqlite3.connect(tmp_path / "results.db")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    row = db.execute("SELECT trace_id, run_span_id, agent, expectation, status, score FROM results WHERE agent='calc' "
                     "ORDER BY evaluated_at").fetchone()
    assert row == ("00000000000000000000000000000001", "0000000000000001", "calc", "math", "PASSED", 0.5)
    db.close()


def test_jsonl_skips_a_line_cut_short(tmp_path):
    path = tmp_path / "results.jsonl"
    store = open_store(path)
    store.add(result(1, at=1.0))
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"trace_id": "00')
    assert [r.trace_id for r in store.query()] == [1]
    store.close()


def test_concurrent_writes_from_threads_lose_nothing(path):
    store = open_store(path)
    per_thread = 200

    def write(offset: int) -> None:
        for i in range(per_thread):
            store.add(result(offset + i, at=float(i)))

    threads = [threading.Thread(target=write, args=(n * 10_000,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.query(limit=None)) == 2 * per_thread
    store.close()


WRITER = """
import sys
from otel_reliability.model import Verdict
from otel_reliability.results import RunResult
from otel_reliability.stores import open_store
store = open_store(sys.argv[1])
print("ready", flush=True)
for i in range(int(sys.argv[2])):
    store.add(RunResult(1_000_000 + i, 1, "other", "e", Verdict("PASSED", "e"), float(i)))
store.close()
"""


def test_a_second_process_writing_the_same_file_loses_nothing(path):
    count = 500
    store = open_store(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    other = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(count)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert other.stdout.readline() == b"ready\n"  # both write at once from here
    for i in range(count):
        store.add(result(i, at=float(i)))
    _, stderr = other.communicate(timeout=60)
    assert other.returncode == 0, stderr.decode()
    assert len(store.query(limit=None)) == 2 * count
    assert len(store.query(agent="other", limit=None)) == count
    store.close()


def test_a_batch_keeps_the_same_results_as_adding_one_by_one(path, new_spec):
    batch = [result(1, at=1.0), result(2, status="FAILED", at=2.0), result(1, status="FAILED", at=3.0)]
    one_by_one = open_store(new_spec())
    for item in batch:
        one_by_one.add(item)
    batched = open_store(path)
    batched.add_many(batch)
    assert batched.query() == one_by_one.query()
    assert [r.verdict.eval_status for r in batched.query(trace_id=1)] == ["FAILED"]
    batched.close()
    one_by_one.close()


def test_a_superseded_run_loses_its_verdict_unless_it_was_stored_later(path):
    from otel_reliability.stores import Superseded

    store = open_store(path)
    store.add_many([result(1, "researcher", at=10.0, span_id=4), result(2, "other", at=10.0, span_id=4)])
    # trace 1 re-judged at 20: its run 4 is now a member of run 1; a mark older than trace 2's verdict voids nothing
    store.add_many([result(1, "router", at=20.0, span_id=1)], superseded=[Superseded(1, 4, 20.0), Superseded(2, 4, 5.0)])
    assert sorted((r.trace_id, r.run_span_id, r.agent) for r in store.query(limit=None)) == [(1, 1, "router"), (2, 4, "other")]
    store.close()
    reopened = open_store(path)  # what was voided stays voided for the next reader
    assert [r.agent for r in reopened.query(trace_id=1, limit=None)] == ["router"]
    reopened.close()
