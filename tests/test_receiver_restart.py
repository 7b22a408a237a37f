"""Verdicts outlive the receiver process.

SIGKILL gives the receiver no chance to flush anything: every verdict it had stored must
still be there, readable through ``/api/v1/results``, when a new receiver opens the same
store; its worker processes, if any, exit on their own. SIGTERM stops intake and judges every buffered trace that holds its run span, quiet
or not, before exiting 0 (``otel_reliability/receiver/cli.py``).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from otel_reliability.stores import open_store

from .receiver_harness import (
    agent_spans,
    by_run,
    expected_results,
    new_trace_id,
    receivers,  # noqa: F401 - fixture
    wait_until,
)


def _children(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid):
            children.append(int(stat.parent.name))
    return children


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("workers", [1, 2])
def test_every_stored_verdict_survives_sigkill_and_a_restart_on_the_same_store(receivers, tmp_path, workers):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("before-kill", store=store, decision_wait=0.1, config={"workers": workers})
    traces = [
        agent_spans(new_trace_id(), f"durable-{i}", failed=["get_news"] if i % 3 == 0 else ())
        for i in range(9)
    ]
    for i, spans in enumerate(traces):
        first.send(spans, ("grpc", "http-protobuf", "http-json")[i % 3])
    # one verdict superseded by a late span: the store must keep the newer one
    late_trace = agent_spans(new_trace_id(), "durable-superseded", failed=["get_weather"])
    first.send(late_trace[:2] + late_trace[3:])
    first.wait_results([late_trace[0].trace_id.hex()], 1)
    first.send([late_trace[2]])
    traces.append(late_trace)
    expected = by_run([r for spans in traces for r in expected_results(spans)])
    trace_ids = {r["trace_id"] for r in expected}
    first.wait_verdicts(expected)  # every verdict, the superseding one too
    before = first.results()

    children = _children(first.process.pid)
    first.kill()
    assert first.process.returncode == -signal.SIGKILL
    # worker processes see their pipe close and exit rather than linger without a server
    wait_until(lambda: not any(_running(pid) for pid in children), 30, "the worker processes to exit")

    second = receivers.start("after-restart", store=store, decision_wait=0.1)
    after = second.results()
    assert by_run(after["results"]) == by_run(before["results"])
    assert after["summary"] == before["summary"]
    assert by_run(second.results_for(trace_ids)) == expected


def test_sigterm_judges_buffered_traces_before_exiting(receivers, tmp_path):  # noqa: F811
    store = tmp_path / "verdicts.db"
    receiver = receivers.start("sigterm", store=store, decision_wait=60)  # nothing goes quiet in time
    complete = agent_spans(new_trace_id(), "judged-at-shutdown", failed=["get_weather"])
    no_run_span = agent_spans(new_trace_id(), "never-judged")[1:]
    receiver.send(complete)
    receiver.send(no_run_span, "http-protobuf")
    assert receiver.results_for([complete[0].trace_id.hex()]) == []

    assert receiver.stop() == 0

    results = open_store(str(store)).query(limit=None)
    assert by_run(r.to_json() for r in results) == by_run(expected_results(complete))
