"""The intake log under a full disk, a read-only directory and a damaged one (issue 22,
scenarios 4, 5 and 6; issue 33).

A real small filesystem (a tmpfs of 2 MiB, mounted by the test: it runs as root in CI)
holds the intake log of a real receiver. Filled up, it makes the receiver refuse with the
retryable status and ``/readyz`` say why while ``/healthz`` stays 200; freed, it lets intake
resume by itself within 5 s. Whatever was acknowledged before, during and after is judged
after a ``kill -9`` and a restart. Random bytes written into the middle of a segment cost
the record they hit and no other: every intact record after it replays, the damaged segment
is copied aside first, and what was skipped is counted: damage to acknowledged records apart
from a record torn by a crash before its acknowledgement.

A read-only directory (a read-only bind mount over it: root ignores permission bits) keeps
the segments it refuses to delete counted in the log's size, with no traceback; they go once
the directory is writable, and a restart after a crash in between judges no trace twice.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .receiver_harness import (
    Receiver,
    agent_spans,
    assert_judges_a_new_trace,
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


@pytest.fixture
def read_only():
    """``read_only(directory)`` makes it read-only (a read-only bind mount over it) until
    ``read_only.undo()``; undone afterwards in any case."""
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    mounted: list[Path] = []

    def make(directory: Path) -> None:
        for args in (["--bind", str(directory), str(directory)], ["-o", "remount,ro,bind", str(directory)]):
            done = subprocess.run(["mount", *args], capture_output=True, text=True)
            if done.returncode != 0:
                pytest.skip(f"cannot bind-mount read-only here: {done.stderr.strip()}")
            if not mounted or mounted[-1] != directory:
                mounted.append(directory)

    def undo() -> None:
        while mounted:
            subprocess.run(["umount", str(mounted.pop())], check=True)

    make.undo = undo  # type: ignore[attr-defined]
    try:
        yield make
    finally:
        undo()


def _segments_on_disk(intake: Path) -> int:
    return sum(path.stat().st_size for path in intake.glob("*.seg"))


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
    os.truncate(filler, filler.stat().st_size - 8192)  # room for a segment's header, not for the request
    refused = agent_spans(new_trace_id(), "while-the-disk-is-full", calls=[("store", {"document": "d" * 20_000})])
    from .receiver_harness import export_request

    body = export_request(refused).SerializeToString()
    # a write may still fit in the segment's last page; the first that does not fails, the next are refused up front
    answers = [first.post_traces(body) for _ in range(4)]
    statuses = [a.status for a in answers]
    assert statuses[-2:] == [503, 503] and set(statuses) <= {200, 503}, [a.body for a in answers]
    assert all("retry-after" in a.headers for a in answers if a.status == 503)
    # one state while the disk stays full: every request refused, not ready at every look, no segment started
    for _ in range(10):
        assert first.post_traces(body).status == 503
        status, readiness = _readyz(first)
        assert status == 503 and "intake log" in readiness["reasons"][0], readiness
    assert "writable again" not in first.log_text()
    assert all(segment.stat().st_size > 8 for segment in (small_disk / "intake").glob("*.seg"))  # none header-only
    assert first.http("GET", "/healthz", authorize=False).status == 200
    assert first.metric("agent_reliability_refusals_total", reason="intake_log_unwritable") >= 10

    filler.unlink()
    wait_until(lambda: _readyz(first)[0] == 200, 5, "/readyz ready within 5 s of the disk having room")
    assert first.log_text().count("writable again") == 1
    first.send(refused)  # the exporter's retry, now taken
    after = agent_spans(new_trace_id(), "after-the-disk-emptied", failed=["get_weather"])
    first.send(after)

    assert all(segment.stat().st_size > 8 for segment in (small_disk / "intake").glob("*.seg"))
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


@pytest.mark.parametrize("then", ["writable again", "crash, writable, restart"])
def test_a_read_only_directory_keeps_released_segments_counted_and_judges_no_trace_twice(
    receivers, read_only, tmp_path, then  # noqa: F811
):
    store = tmp_path / "verdicts.db"
    intake = store.parent / (store.name + ".intake")
    # segments of 128 KiB; a judged trace leaves the buffer (and its segments may go) 0.5 s after its verdict
    config = {"max_intake_log_bytes": 1024 * 1024, "late_window": 0.5}
    first = receivers.start("read-only", store=store, decision_wait=0.3, config=config)
    holder = agent_spans(new_trace_id(), "holds-the-first-segment")
    first.send(holder[1:])  # no run span yet: unjudged, it holds every segment from the first on
    document = {"document": "d" * 8000}
    judged = [agent_spans(new_trace_id(), f"judged-{i}", calls=[("store", document)]) for i in range(40)]
    for spans in judged:
        first.send(spans)
    first.wait_verdicts([r for spans in judged for r in expected_results(spans)], 30)
    assert len(list(intake.glob("*.seg"))) >= 3

    read_only(intake)
    first.send(holder[:1])  # its run span: judged, it leaves, and every closed segment is released
    everything = [holder] + judged
    first.wait_verdicts([r for spans in everything for r in expected_results(spans)], 30)
    wait_until(lambda: first.metric("agent_reliability_traces_dropped_total", reason="late_window_expired") == 41,
               10, "every trace to leave the buffer")
    assert len(list(intake.glob("*.seg"))) >= 3  # refused deletion: still on disk ...
    assert first.metric("agent_reliability_intake_log_size_bytes") == _segments_on_disk(intake)  # ... and counted
    assert "cannot delete" in first.log_text()

    if then == "writable again":
        read_only.undo()
        wait_until(lambda: len(list(intake.glob("*.seg"))) == 1, 10, "the released segments deleted")
        assert first.metric("agent_reliability_intake_log_size_bytes") == _segments_on_disk(intake)
        assert_judges_a_new_trace(first)
        return
    first.kill()
    read_only.undo()
    second = receivers.start("read-only-restarted", store=store, decision_wait=0.3, config=config)
    assert second.metric("agent_reliability_intake_log_replayed_total") == 0  # no judged trace judged again
    assert second.metric("agent_reliability_intake_log_size_bytes") == _segments_on_disk(intake) == 0
    second.wait_verdicts([r for spans in everything for r in expected_results(spans)], 5)


def test_an_acknowledged_record_damaged_at_the_end_is_damaged_and_a_cut_one_is_torn(receivers, tmp_path):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("damaged-end", store=store, decision_wait=60.0)
    traces = [agent_spans(new_trace_id(), f"record-{i}") for i in range(3)]
    for spans in traces:
        first.send(spans)
    first.kill()
    intake = store.parent / (store.name + ".intake")
    (segment,) = intake.glob("*.seg")
    original = segment.read_bytes()
    hit = original.index(traces[2][0].trace_id)  # inside the last record, acknowledged
    segment.write_bytes(original[:hit] + bytes(b ^ 0xFF for b in original[hit:hit + 8]) + original[hit + 8:])
    # a crash while writing the next record: its header and a part of its body reached the disk
    second_segment = intake / "0000000000000099.seg"
    second_segment.write_bytes(original[:8] + original[8:8 + 40])

    second = receivers.start("damaged-end-restarted", store=store, decision_wait=0.2)
    second.wait_verdicts([r for spans in traces[:2] for r in expected_results(spans)], 30)
    assert second.metric("agent_reliability_intake_log_corrupt_records_total") == 1
    assert second.metric("agent_reliability_intake_log_torn_records_total") == 1
