"""A store outage costs no acknowledged trace its verdict (issue 22, scenario 1).

A real PostgreSQL server holds a real receiver's verdicts and standings; the test stops it
(``pg_ctl -m immediate``: every connection cut) while traces arrive and are judged. Their
verdicts are held, ``/readyz`` says which sink holds how many, the traces leave the buffer
but not the intake log; once the server is back every verdict is published — the results
store and the standings store reconnect by themselves — and a receiver killed during the
outage replays the held traces at its next start and publishes them then.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .receiver_harness import (
    REPO,
    Receiver,
    agent_spans,
    expected_results,
    new_trace_id,
    receivers,  # noqa: F401 - fixture
    wait_until,
)
from .reputation_postgres import fresh_schema_url, postgres_bin, restartable_postgres
from .test_intake_faults import fill, small_disk  # noqa: F401 - fixture
from .test_receiver_durability import SENDER, _acknowledged, _corpus_copies, _eval_of, _spans_by_trace


@pytest.fixture
def postgres():
    pytest.importorskip("psycopg")
    if postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    with restartable_postgres(durable=True) as server:  # an immediate stop loses no commit, as a crash would not
        yield server


def _held(receiver: Receiver, sink: str = "store") -> float:
    return receiver.metric("agent_reliability_verdicts_held", reliability_sink=sink)


def _traces(prefix: str, count: int) -> list[list]:
    return [agent_spans(new_trace_id(), f"{prefix}-{i}", failed=["get_news"] if i % 2 else ()) for i in range(count)]


def _judged_during_an_outage(receivers, postgres, tmp_path, name):  # noqa: F811
    """A receiver that stored some verdicts, then judged more while the server was down."""
    url = fresh_schema_url(postgres.url)
    # a short late window: the judged traces leave the buffer during the outage
    config = {"intake_dir": str(tmp_path / "intake"), "late_window": 0.3, "retry_after": 1}
    receiver = receivers.start(name, store=url, decision_wait=0.3, config=config)
    before = _traces("before", 3)
    for spans in before:
        receiver.send(spans)
    receiver.wait_verdicts([r for spans in before for r in expected_results(spans)])

    postgres.stop()
    during = _traces("during", 4)
    for spans in during:
        receiver.send(spans)  # acknowledged: the intake log has them
    wait_until(lambda: _held(receiver) == len(during) == _held(receiver, "reputation"), 30,
               "every verdict judged during the outage held, for the results and the standings")
    wait_until(lambda: receiver.metric("agent_reliability_traces_buffered") == 0, 30, "the judged traces to leave the buffer")
    reply = receiver.http("GET", "/readyz", authorize=False)
    assert reply.status == 503 and any("sink store" in r for r in reply.json()["reasons"]), reply.body
    assert receiver.metric("agent_reliability_intake_log_size_bytes") > 0  # their segments are kept
    wait_until(lambda: receiver.metric("agent_reliability_sink_retries_total", reason="unreachable",
                                       reliability_sink="store") >= 2, 30, "the store retried, and refused again, twice")
    return url, config, before, during


def test_verdicts_judged_while_the_store_is_down_are_published_once_it_is_back(receivers, postgres, tmp_path):  # noqa: F811
    url, _, before, during = _judged_during_an_outage(receivers, postgres, tmp_path, "outage")
    receiver = receivers.started[-1]

    postgres.start()

    expected = [r for spans in before + during for r in expected_results(spans)]
    wait_until(lambda: _held(receiver) == 0 == _held(receiver, "reputation"), 30, "the held verdicts published")
    receiver.wait_verdicts(expected, 30)
    assert receiver.http("GET", "/readyz", authorize=False).status == 200
    standings = {s["agent"]: s for s in receiver.http("GET", "/api/v1/reputation").json()["standings"]}
    assert set(standings) == {r["agent"] for r in expected}  # the standings store reconnected too
    assert receiver.stop() == 0
    assert not list((tmp_path / "intake").glob("*.seg"))  # every verdict published: nothing is left to replay


def test_a_receiver_killed_while_it_holds_verdicts_publishes_them_after_its_restart(receivers, postgres, tmp_path):  # noqa: F811
    url, config, before, during = _judged_during_an_outage(receivers, postgres, tmp_path, "outage-killed")
    receivers.started[-1].kill()

    postgres.start()
    second = receivers.start("outage-restarted", store=url, decision_wait=0.3, config=config)

    second.wait_verdicts([r for spans in before + during for r in expected_results(spans)], 30)
    assert second.metric("agent_reliability_intake_log_replayed_total") >= len(during)  # and what shares their segment


def test_verdicts_a_full_disk_kept_from_sqlite_are_published_once_it_has_room(small_disk, receivers, tmp_path):  # noqa: F811
    store = small_disk / "verdicts.db"  # results and standings; the intake log on another disk
    config = {"intake_dir": str(tmp_path / "intake"), "late_window": 0.3}
    receiver = receivers.start("sqlite-full", store=store, decision_wait=0.3, config=config)
    before = _traces("before", 2)
    for spans in before:
        receiver.send(spans)
    receiver.wait_verdicts([r for spans in before for r in expected_results(spans)])

    filler = fill(small_disk)
    during = _traces("during", 30)  # more than the pages SQLite may still have free
    for spans in during:
        receiver.send(spans)
    wait_until(lambda: _held(receiver) > 0, 30, "verdicts held while the disk is full")
    assert receiver.metric("agent_reliability_sink_failures_total", reliability_sink="store") > 0

    filler.unlink()

    receiver.wait_verdicts([r for spans in before + during for r in expected_results(spans)], 30)
    wait_until(lambda: _held(receiver) == 0 == _held(receiver, "reputation"), 30, "the held verdicts published")


def test_a_store_outage_under_the_real_exporter_s_stream_costs_no_acknowledged_trace_its_verdict(
    receivers, postgres, tmp_path  # noqa: F811
):
    """The issue's scenario: the corpus streamed by the real OTLP/gRPC exporter, PostgreSQL
    stopped while a part of it is acknowledged and judged, started again; every trace whose
    spans were all acknowledged ends with the verdict ``eval`` gives it."""
    files = _corpus_copies(tmp_path / "corpus", 1)
    spans = _spans_by_trace(files)
    total = sum(map(len, spans.values()))
    url = fresh_schema_url(postgres.url)
    receiver = receivers.start("stream-outage", store=url, decision_wait=0.5,
                               config={"intake_dir": str(tmp_path / "intake"), "late_window": 1.0})
    acked = tmp_path / "acked.txt"
    acked.touch()
    sender = subprocess.Popen([sys.executable, str(SENDER), receiver.grpc_endpoint, "1000", str(acked), *map(str, files)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    try:
        wait_until(lambda: len(_acknowledged(acked)) >= 0.25 * total, 60, "a quarter of the spans acknowledged")
        postgres.stop()
        wait_until(lambda: _held(receiver) > 0, 60, "verdicts held while the store is down")
        wait_until(lambda: len(_acknowledged(acked)) >= 0.6 * total or sender.poll() is not None, 60,
                   "more spans acknowledged during the outage")
        postgres.start()
        assert sender.wait(120) == 0, sender.stderr.read().decode()
    finally:
        if sender.poll() is None:
            sender.kill()
    done = _acknowledged(acked)
    acknowledged = {trace for trace, ids in spans.items() if all((trace, span) in done for span in ids)}

    expected = _eval_of([tmp_path / "corpus"], acknowledged)
    assert len(expected) >= 20
    wait_until(lambda: _held(receiver) == 0 == _held(receiver, "reputation"), 60, "every held verdict published")
    got = receiver.wait_verdicts(expected, 60)
    assert len(got) == len(expected)
