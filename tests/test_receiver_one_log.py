"""With workers, one intake log in the serving process (``receiver.shards``).

- Its bound does not depend on the number of workers: the same log holds the same number
  of requests before it refuses with ``intake_log_full``, for 1, 2 and 4 workers, since each
  request is written once.
- A shard killed with SIGKILL while the real exporter streams the corpus is started again
  and given its traces back from the log: every acknowledged trace gets the verdict ``eval``
  gives on the same files, and the receiver is ready again.
- The log replays to however many workers the next start has.
- A run judged paused, whose trace the log has long released, is still found by the trace
  that resumes it after the receiver and its shards were killed (paused runs are kept
  beside the SQLite results).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from .receiver_harness import (
    REPO,
    agent_spans,
    expected_results,
    export_request,
    paused_and_resumed,
    receivers,  # noqa: F401 - fixture
    wait_until,
)
from .test_receiver_durability import (
    SENDER,
    _acknowledged,
    _corpus_copies,
    _eval_of,
    _final_verdicts,
    _kill_everything,
    _spans_by_trace,
)

LOG_BYTES = 1024 * 1024  # the least allowed: eight segments of 128 KiB
PAD = 12_000  # bytes of attribute value per request: about 80 requests fill the log


def _shards(receiver_pid: int) -> list[int]:
    """The receiver's shard processes (spawned children; not multiprocessing's resource tracker)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if fields[1] == str(receiver_pid) and b"spawn_main" in cmdline:
            pids.append(int(stat.parent.name))
    return sorted(pids)


def _padded_request(number: int, whole: bool = False) -> bytes:
    """One trace, about ``PAD`` bytes; with no run span (it stays buffered) unless ``whole``;
    trace ids in turn on every shard."""
    spans = agent_spans(0x5EED0000 + number, "filler")[0 if whole else 1:]
    spans[-1].attributes.add(key="pad").value.string_value = "x" * PAD
    return export_request(spans).SerializeToString()


def _requests_until_full(receiver) -> int:
    for number in range(10 * LOG_BYTES // PAD):
        try:
            receiver.grpc_export(_padded_request(number))
        except grpc.RpcError as refused:
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused
            assert receiver.metric("agent_reliability_refusals_total", reason="intake_log_full") == 1
            return number
    raise AssertionError("the intake log never refused")


def test_the_intake_log_holds_as_many_requests_whatever_the_number_of_workers(receivers):  # noqa: F811
    held = {}
    for workers in (1, 2, 4):
        receiver = receivers.start(
            f"log-{workers}", decision_wait=600.0,
            config={"workers": workers, "max_intake_log_bytes": LOG_BYTES, "trace_ttl": 600},
        )
        held[workers] = _requests_until_full(receiver)
        assert receiver.metric("agent_reliability_intake_log_size_bytes") <= LOG_BYTES
        assert receiver.stop() == 0
    assert held[1] >= LOG_BYTES // (PAD + 2000) // 2, held  # the log held a good part of its bound
    assert held[2] == held[1] and held[4] == held[1], held


def test_a_shard_killed_mid_stream_comes_back_and_every_acknowledged_trace_gets_eval_s_verdict(receivers, tmp_path):  # noqa: F811
    files = _corpus_copies(tmp_path / "corpus", 3)
    receiver = receivers.start("one-shard-killed", store=tmp_path / "verdicts.db", decision_wait=1.0,
                               config={"workers": 2, "retry_after": 1})
    before = _shards(receiver.process.pid)
    assert len(before) == 2, before
    acked = tmp_path / "acked.txt"
    acked.touch()
    sender = subprocess.Popen(
        [sys.executable, str(SENDER), receiver.grpc_endpoint, "3000", str(acked), *map(str, files)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )
    spans = _spans_by_trace(files)
    total = sum(map(len, spans.values()))
    try:
        wait_until(lambda: len(_acknowledged(acked)) >= 0.4 * total or sender.poll() is not None, 60,
                   f"40% of {total} spans acknowledged")
        assert sender.poll() is None, "the sender finished before the kill"
        os.kill(before[1], signal.SIGKILL)
        _, errors = sender.communicate(timeout=180)
    finally:
        sender.kill()
    assert sender.returncode == 0, errors.decode()

    after = _shards(receiver.process.pid)
    assert len(after) == 2 and before[1] not in after, (before, after)
    done = _acknowledged(acked)
    assert done == {(t, s) for t, ids in spans.items() for s in ids}  # refusals while it restarted were retried
    expected = _eval_of([tmp_path / "corpus"], set(spans))
    assert _final_verdicts(receiver, set(spans)) == expected
    wait_until(lambda: receiver.http("GET", "/readyz").status == 200, 30, "the receiver ready again")



@pytest.mark.parametrize("killed", ["the receiver and its shards", "the shard that judged it"])
def test_a_paused_run_is_found_after_kill_9(receivers, tmp_path, killed):  # noqa: F811
    store = tmp_path / "verdicts.db"
    config = {"workers": 2, "max_intake_log_bytes": LOG_BYTES, "late_window": 0.2}
    first = receivers.start("paused-before-kill", store=store, decision_wait=0.2, config=config)
    whole = killed == "the receiver and its shards"
    # paused on shard 0; resumed on shard 1 after a restart of all, on shard 0 itself after its own
    paused, resumed = paused_and_resumed(0xD002, 0xD001 if whole else 0xD004)
    first.send(paused)
    first.wait_results([paused[0].trace_id.hex()], 1)
    # Judged traces behind it fill segments until the one that holds the paused trace is released.
    for number in range(3 * LOG_BYTES // PAD // 8):
        first.grpc_export(_padded_request(number, whole=True))
    wait_until(lambda: first.settled() and first.metric("agent_reliability_intake_log_size_bytes") < LOG_BYTES / 4,
               60, "the log released what was judged")
    if whole:
        _kill_everything(first)
        second = receivers.start("paused-after-kill", store=store, decision_wait=0.2, config=config)
        # (the judged fillers of the last segment are replayed; the paused trace's segment is gone)
    else:
        shards = _shards(first.process.pid)
        os.kill(shards[0], signal.SIGKILL)  # spawned in order: shard 0 first
        wait_until(lambda: len(_shards(first.process.pid)) == 2 and shards[0] not in _shards(first.process.pid)
                   and first.http("GET", "/readyz").status == 200, 60, "shard 0 started again")
        second = first
    second.send(resumed)

    (result,) = second.wait_results([resumed[0].trace_id.hex()], 1)
    assert [(c["tool"], c["outcome"]) for c in result["chain"]] == [("get_weather", "ok"), ("approve_booking", "ok")]


@pytest.mark.parametrize(("before", "after"), [(2, 1), (1, 2), (2, 4)])
def test_the_log_replays_to_as_many_workers_as_the_next_start_has(receivers, tmp_path, before, after):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("workers-before", store=store, decision_wait=600.0, config={"workers": before})
    traces = [agent_spans(0xE000 + i, f"kept-{i}", failed=["get_news"] if i % 3 == 0 else ()) for i in range(8)]
    for spans in traces:
        first.send(spans)
    _kill_everything(first)

    second = receivers.start("workers-after", store=store, decision_wait=0.2, config={"workers": after})

    second.wait_verdicts([r for spans in traces for r in expected_results(spans)])
