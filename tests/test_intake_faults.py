"""The intake log under a full disk and a damaged one (issue 22, scenarios 4, 5 and 6).

A real small filesystem (a tmpfs of 2 MiB, mounted by the test: it runs as root in CI)
holds the intake log of a real receiver. Filled up, it makes the receiver refuse with the
retryable status and ``/readyz`` say why while ``/healthz`` stays 200; freed, it lets intake
resume by itself within 5 s. Whatever was acknowledged before, during and after is judged
after a ``kill -9`` and a restart. Random bytes written into the middle of a segment cost
the record they hit and no other: every intact record after it replays, the damaged segment
is copied aside first, and what was skipped is counted.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .receiver_harness import (
    Receiver,
    agent_spans,
    expected_results,
    new_trace_id,
    receivers,  # noqa: F401 - fixture
    wait_until,
)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, unmounted afterwards."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> Path:
    """Take every free byte of ``directory``'s filesystem with one file."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                out.write(b"\0")
        except OSError:
            pass
    return filler


def _readyz(receiver: Receiver) -> tuple[int, dict]:
    reply = receiver.http("GET", "/readyz", authorize=False)
    return reply.status, reply.json()


def test_a_full_disk_refuses_retryably_says_not_ready_resumes_by_itself_and_loses_no_acknowledged_trace(
    small_disk, receivers, tmp_path  # noqa: F811 - the disk outlives the receivers using it
):
    store = tmp_path / "verdicts.db"
    config = {"intake_dir": str(small_disk / "intake"), "retry_after": 1}
    first = receivers.start("full-disk", store=store, decision_wait=60.0, config=config)  # judged only after the restart
    before = agent_spans(new_trace_id(), "before-the-disk-filled", failed=["get_news"])
    first.send(before)
    assert _readyz(first)[0] == 200

    filler = fill(small_disk)
    refused = agent_spans(new_trace_id(), "while-the-disk-is-full")
    from .receiver_harness import export_request

    body = export_request(refused).SerializeToString()
    # a write may still fit in the segment's last page; the first that does not fails, the next are refused up front
    answers = [first.post_traces(body) for _ in range(4)]
    statuses = [a.status for a in answers]
    assert statuses[-2:] == [503, 503] and set(statuses) <= {200, 503}, [a.body for a in answers]
    assert all("retry-after" in a.headers for a in answers if a.status == 503)
    status, readiness = _readyz(first)
    assert status == 503 and "intake log" in readiness["reasons"][0], readiness
    assert first.http("GET", "/healthz", authorize=False).status == 200
    assert first.metric("agent_reliability_refusals_total", reason="intake_log_unwritable") >= 1

    filler.unlink()
    wait_until(lambda: _readyz(first)[0] == 200, 5, "/readyz ready within 5 s of the disk having room")
    first.send(refused)  # the exporter's retry, now taken
    after = agent_spans(new_trace_id(), "after-the-disk-emptied", failed=["get_weather"])
    first.send(after)

    first.kill()  # nothing of it was judged yet: everything acknowledged is only in the log
    second = receivers.start("full-disk-restarted", store=store, decision_wait=0.2, config=config)
    second.wait_verdicts(expected_results(before) + expected_results(refused) + expected_results(after), 30)
    assert second.metric("agent_reliability_intake_log_corrupt_records_total") == 0


def test_damage_in_the_middle_of_a_segment_costs_the_record_it_hit_and_no_other(receivers, tmp_path):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("damaged", store=store, decision_wait=60.0)
    traces = [agent_spans(new_trace_id(), f"record-{i}", failed=["get_news"] if i % 3 == 0 else ()) for i in range(12)]
    for spans in traces:  # one request, so one record, each
        first.send(spans)
    first.kill()
    intake = store.parent / (store.name + ".intake")
    (segment,) = intake.glob("*.seg")
    original = segment.read_bytes()
    hit = original.index(traces[4][0].trace_id)  # inside the fifth record's request body
    damaged = original[:hit] + os.urandom(16) + original[hit + 16:]
    segment.write_bytes(damaged)

    second = receivers.start("damaged-restarted", store=store, decision_wait=0.2)

    intact = [spans for i, spans in enumerate(traces) if i != 4]
    second.wait_verdicts([r for spans in intact for r in expected_results(spans)], 30)
    assert second.results_for([traces[4][0].trace_id.hex()]) == []
    assert second.metric("agent_reliability_intake_log_corrupt_records_total") == 1
    assert second.metric("agent_reliability_intake_log_torn_records_total") == 0
    assert second.metric("agent_reliability_intake_log_skipped_bytes_total") > 0
    assert second.metric("agent_reliability_intake_log_replayed_total") == 11
    (copy,) = (intake / "damaged").iterdir()
    assert copy.read_bytes() == damaged  # copied aside as found, before replay let it go
