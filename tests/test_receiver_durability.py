"""An acknowledgement is a promise (SPEC §8): what the receiver acked is judged, crash or not.

The real Python OTLP/gRPC exporter (``BatchSpanProcessor`` + ``OTLPSpanExporter``, wrapped
to write down every batch it saw acknowledged: ``tests/acked_export.py``) sends corpus
traces at a few thousand spans per second; the receiver (and its workers) is killed with
SIGKILL mid-stream, the sender too (no retry reaches the next receiver), and a new receiver
opens the same store. Under ``durability: batch`` and ``always`` every trace whose spans were
all acknowledged is judged after the restart, as ``eval`` judges the same files; under
``none`` the acknowledged traces not yet judged are lost, as documented. The intake log's
torn tail and its bound are checked here too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .receiver_harness import (
    REPO,
    Receiver,
    agent_spans,
    by_run,
    eval_json,
    expected_results,
    new_trace_id,
    receivers,  # noqa: F401 - fixture
    remap_corpus,
    wait_until,
)
from .corpus import FIRST_CORPUS
from .test_receiver_restart import _children

SENDER = REPO / "tests" / "acked_export.py"
SPANS_PER_SECOND = 3000
COPIES = 4  # of the corpus (fresh ids each): about 10,000 spans, three seconds of sending


def _corpus_copies(root: Path, copies: int) -> list[Path]:
    return [file for n in range(copies) for file in remap_corpus(root / f"copy-{n}", salt=f"{root.name}-{n}")]


def _spans_by_trace(files: list[Path]) -> dict[str, set[str]]:
    spans: dict[str, set[str]] = {}
    for path in files:
        for resource_spans in json.loads(path.read_text(encoding="utf-8")).get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    spans.setdefault(span["traceId"], set()).add(span["spanId"])
    return spans


def _acknowledged(acked: Path) -> set[tuple[str, str]]:
    pairs = set()
    for line in acked.read_text().splitlines():
        pairs.update(tuple(pair.split(":")) for pair in line.split())
    return pairs


def _kill_everything(receiver: Receiver) -> None:
    """SIGKILL the receiver and its workers at once, as the kernel's OOM killer would the container."""
    for pid in _children(receiver.process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    receiver.kill()


def _send_and_kill(receiver: Receiver, files: list[Path], workdir: Path, fraction: float) -> set[str]:
    """Stream ``files`` through the acknowledging sender; kill it and the receiver once about
    ``fraction`` of the spans were acked. Returns the traces whose every span was acked."""
    acked = workdir / "acked.txt"
    acked.touch()
    sender = subprocess.Popen(
        [sys.executable, str(SENDER), receiver.grpc_endpoint, str(SPANS_PER_SECOND), str(acked), *map(str, files)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )
    spans = _spans_by_trace(files)
    total = sum(map(len, spans.values()))
    try:
        wait_until(lambda: len(_acknowledged(acked)) >= fraction * total or sender.poll() is not None,
                   60, f"{fraction:.0%} of {total} spans acknowledged")
        assert sender.poll() is None, f"the sender finished before the kill:\n{sender.stderr.read().decode()}"
    finally:
        _kill_everything(receiver)
        sender.kill()
        sender.wait(10)
    done = _acknowledged(acked)
    return {trace for trace, ids in spans.items() if all((trace, span) in done for span in ids)}


def _eval_of(roots: list[Path], traces: set[str]) -> list[dict]:
    return by_run(r for r in eval_json(roots)["results"] if r["trace_id"] in traces)


def _final_verdicts(receiver: Receiver, traces: set[str]) -> list[dict]:
    wait_until(receiver.settled, 60, "every replayed trace judged")
    return by_run(receiver.results_for(traces))


@pytest.mark.parametrize(("workers", "durability"), [(1, "batch"), (2, "batch"), (1, "always")])
def test_every_acknowledged_trace_is_judged_after_kill_9_and_a_restart(receivers, tmp_path, workers, durability):  # noqa: F811
    files = _corpus_copies(tmp_path / "corpus", COPIES)
    store = tmp_path / "verdicts.db"
    config = {"workers": workers, "durability": durability}
    first = receivers.start("before-kill", store=store, decision_wait=1.0, config=config)

    acknowledged = _send_and_kill(first, files, tmp_path, fraction=0.5)

    expected = _eval_of([tmp_path / "corpus"], acknowledged)
    assert len(expected) >= 20, "too few traces acknowledged before the kill to show anything"
    second = receivers.start("after-restart", store=store, decision_wait=1.0, config=config)
    assert second.metric("agent_reliability_intake_log_replayed_total") > 0  # not all judged before the kill
    got = _final_verdicts(second, acknowledged)
    assert [r["trace_id"] for r in got] == [r["trace_id"] for r in expected]
    assert got == expected


def test_without_durability_acknowledged_traces_not_yet_judged_are_lost_on_kill_9(receivers, tmp_path):  # noqa: F811
    files = _corpus_copies(tmp_path / "corpus", 2)
    store = tmp_path / "verdicts.db"
    config = {"durability": "none"}
    first = receivers.start("before-kill", store=store, decision_wait=30.0, config=config)  # nothing is judged in time

    acknowledged = _send_and_kill(first, files, tmp_path, fraction=0.3)

    assert acknowledged
    second = receivers.start("after-restart", store=store, decision_wait=1.0, config=config)
    assert second.results_for(acknowledged) == []  # acked, and gone: what the documentation says of none
    assert not (store.parent / (store.name + ".intake")).exists()
    assert second.metric("agent_reliability_intake_log_replayed_total") == 0


def test_a_torn_tail_is_cut_off_and_counted_and_the_rest_replays(receivers, tmp_path):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("before-kill", store=store, decision_wait=60.0)
    traces = [agent_spans(new_trace_id(), f"torn-{i}", failed=["get_news"] if i % 2 else ()) for i in range(4)]
    for spans in traces:  # one request each: the last one is the log's last record
        first.send(spans)
    first.kill()
    segment = max((store.parent / (store.name + ".intake")).glob("*.seg"))
    with open(segment, "r+b") as out:  # as if the crash came in the middle of writing it
        out.truncate(segment.stat().st_size - 7)

    second = receivers.start("after-restart", store=store, decision_wait=0.2)

    assert second.metric("agent_reliability_intake_log_torn_records_total") == 1
    assert second.metric("agent_reliability_intake_log_replayed_total") == 3
    whole = [r for spans in traces[:3] for r in expected_results(spans)]
    second.wait_verdicts(whole, 30)
    assert second.results_for([traces[3][0].trace_id.hex()]) == []


def test_a_full_intake_log_refuses_for_a_while_and_the_real_exporter_retries(receivers, tmp_path):  # noqa: F811
    corpus = tmp_path / "corpus"
    # the frameworks of the first corpus (4 MB of protobuf, 2,500 spans): a load whose refusals the
    # exporter outlasts at this rate; the whole corpus would only make the run longer
    files = remap_corpus(corpus, salt="small-log", frameworks=FIRST_CORPUS)
    # 1 MiB holds a quarter of it, sent at about 0.7 MB/s: the log fills until judged
    # traces leave the buffer (and the traces that never get a run span, after their time to live)
    receiver = receivers.start(
        "small-log", decision_wait=0.2,
        config={"max_intake_log_bytes": 1024 * 1024, "late_window": 0.2, "trace_ttl": 1.0, "retry_after": 1},
    )
    acked = tmp_path / "acked.txt"

    done = subprocess.run(
        [sys.executable, str(SENDER), receiver.grpc_endpoint, "400", str(acked), *map(str, files)],
        capture_output=True, text=True, timeout=180, cwd=REPO,
    )

    assert done.returncode == 0, done.stderr
    assert "RESOURCE_EXHAUSTED" in done.stderr  # the exporter was refused, and said it would retry
    spans = _spans_by_trace(files)
    assert _acknowledged(acked) == {(t, s) for t, ids in spans.items() for s in ids}  # every refusal retried, then taken
    assert receiver.metric("agent_reliability_spans_dropped_total", reason="intake_log_full") > 0
    # Every trace is judged. (Not necessarily as eval judges it: with a late_window this short,
    # a span refused and retried after its trace's verdict and late window comes too late.)
    judged = {r["trace_id"] for r in eval_json([corpus])["results"]}
    wait_until(lambda: receiver.settled() and {r["trace_id"] for r in receiver.results_for(judged)} == judged,
               60, f"verdicts for all {len(judged)} traces")
    wait_until(lambda: receiver.metric("agent_reliability_intake_log_size_bytes") < 1024 * 1024, 30, "the log to shrink")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_trace_still_waiting_for_its_run_span_at_sigterm_is_judged_whole_after_the_restart(receivers, tmp_path, workers):  # noqa: F811
    store = tmp_path / "verdicts.db"
    first = receivers.start("rolling", store=store, decision_wait=0.2, config={"workers": workers})
    judged = agent_spans(new_trace_id(), "judged-before-the-stop", failed=["get_news"])
    split = agent_spans(new_trace_id(), "split-by-the-restart", failed=["get_weather"])
    first.send(judged)
    first.send(split[1:])  # everything but its run span
    first.wait_verdicts(expected_results(judged))
    assert first.stop() == 0

    second = receivers.start("rolling-after", store=store, decision_wait=0.2, config={"workers": workers})
    assert second.metric("agent_reliability_intake_log_replayed_total") == 1  # the judged trace is not replayed
    second.send(split[:1])  # the run span comes to the new receiver

    second.wait_verdicts(expected_results(split) + expected_results(judged))
