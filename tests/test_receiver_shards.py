"""A receiver with several worker processes (``workers: N``) behaves as one process does.

Each process takes the traces whose id mod N is its own, so these tests pick trace ids
to put the pieces of a scenario on different processes: a run paused in one process and
resumed by a trace another process owns, corpus traces through real exporters, the
partition of a request's spans, ``/metrics`` adding up what every process counted, and a
request taken by every process or by none when one of them is full.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.metrics_core import Metric

from otel_reliability.receiver.shards import merge_families
from otel_reliability.sources import Shard, decode_request

from .receiver_harness import (
    Receiver,
    agent_spans,
    expected_results,
    export_request,
    otlp_json,
    paused_and_resumed,
    module_receivers,  # noqa: F401 - fixture
    wait_until,
)
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 - fixture
from .test_receiver_exporters import CLIENTS, send_corpus_expecting_eval_verdicts

WORKERS = 2


@pytest.fixture(scope="module")
def receiver(module_receivers) -> Receiver:  # noqa: F811 - the imported fixture
    return module_receivers.start("shards", decision_wait=0.3, config={"workers": WORKERS})


@pytest.fixture(scope="module")
def receiver_on_postgres(module_receivers, postgres_server) -> Receiver:  # noqa: F811 - the imported fixtures
    """Workers whose results store is PostgreSQL: they share paused runs through it."""
    store = fresh_schema_url(postgres_server)
    return module_receivers.start("shards-postgres", decision_wait=0.3, store=store, config={"workers": WORKERS})


# -- which process reads which span ------------------------------------------------------


def test_the_shards_of_a_request_partition_its_spans_and_shard_zero_rejects_malformed_trace_ids():
    spans = [s for trace_id in (10, 11, 12, 13, 14) for s in agent_spans(trace_id, f"agent-{trace_id}")]
    bad = agent_spans(15, "bad-ids")[0]
    bad.trace_id = b"\x01\x02"
    request = export_request([*spans, bad])

    decoded = [decode_request(request, Shard(i, 3)) for i in range(3)]

    read = [(s.trace_id, s.span_id) for d in decoded for s in d.spans]
    assert sorted(read) == sorted((int.from_bytes(s.trace_id, "big"), int.from_bytes(s.span_id, "big")) for s in spans)
    for index, d in enumerate(decoded):
        assert {s.trace_id % 3 for s in d.spans} == {index}
    assert [len(d.rejected) for d in decoded] == [1, 0, 0]
    assert "traceId: expected 16 bytes, got 2 bytes" in decoded[0].rejected[0]


# -- /metrics over all processes -------------------------------------------------------------


def _family(name: str, kind: str, *samples: tuple[str, dict, float]) -> Metric:
    family = Metric(name, f"{name} help", kind)
    for sample_name, labels, value in samples:
        family.add_sample(sample_name, labels, value)
    return family


MERGES = {
    "counters add up per label set": (
        [_family("evals", "counter", ("evals_total", {"agent": "a"}, 2.0))],
        [_family("evals", "counter", ("evals_total", {"agent": "a"}, 3.0), ("evals_total", {"agent": "b"}, 1.0))],
        {("evals_total", (("agent", "a"),)): 5.0, ("evals_total", (("agent", "b"),)): 1.0},
    ),
    "histogram buckets, sums and counts add up": (
        [_family("score", "histogram", ("score_bucket", {"le": "1.0"}, 1.0), ("score_sum", {}, 0.5))],
        [_family("score", "histogram", ("score_bucket", {"le": "1.0"}, 2.0), ("score_sum", {}, 1.5))],
        {("score_bucket", (("le", "1.0"),)): 3.0, ("score_sum", ()): 2.0},
    ),
    "buffered traces add up": (
        [_family("agent_reliability_traces_buffered", "gauge", ("agent_reliability_traces_buffered", {}, 4.0))],
        [_family("agent_reliability_traces_buffered", "gauge", ("agent_reliability_traces_buffered", {}, 6.0))],
        {("agent_reliability_traces_buffered", ()): 10.0},
    ),
    "gauges read from the shared store are the serving process's": (
        [_family("agent_reliability_reputation_grade", "gauge", ("agent_reliability_reputation_grade", {"agent": "a"}, 4.0))],
        [_family("agent_reliability_reputation_grade", "gauge", ("agent_reliability_reputation_grade", {"agent": "a"}, 4.0))],
        {("agent_reliability_reputation_grade", (("agent", "a"),)): 4.0},
    ),
    "a counter only a worker has so far is reported": (
        [],
        [_family("late", "counter", ("late_total", {}, 1.0))],
        {("late_total", ()): 1.0},
    ),
}


@pytest.mark.parametrize("own, others, expected", list(MERGES.values()), ids=list(MERGES))
def test_metrics_of_the_worker_processes_merge_into_one_exposition(own, others, expected):
    merged = merge_families(own, others)
    assert {(s.name, tuple(sorted(s.labels.items()))): s.value for f in merged for s in f.samples} == expected


def test_metrics_count_every_process_s_verdicts(receiver):
    trace_ids = range(0xA000, 0xA006)  # three even, three odd: both processes judge
    for trace_id in trace_ids:
        receiver.send(agent_spans(trace_id, "counted-across-workers"))
    wait_until(
        lambda: receiver.metric("agent_reliability_evaluations_total", gen_ai_agent_name="counted-across-workers") == 6,
        15, "six evaluations on /metrics",
    )
    assert receiver.metric("agent_reliability_spans_received_total") >= 6 * 5
    assert receiver.metric("agent_reliability_traces_buffered") >= 6  # judged traces wait out late_window


# -- a paused run resumed by a trace another process owns ---------------------------------


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
@pytest.mark.parametrize(
    "paused_trace, resuming_trace",
    [(0xB001, 0xB002), (0xB004, 0xB003)],
    ids=["paused in a worker, resumed in the serving process", "paused in the serving process, resumed in a worker"],
)
def test_a_run_resumed_in_another_process_s_trace_carries_the_paused_run_s_calls(
    request, store, paused_trace, resuming_trace
):
    receiver = request.getfixturevalue("receiver" if store == "sqlite" else "receiver_on_postgres")
    paused, resumed = paused_and_resumed(paused_trace, resuming_trace)
    receiver.send(paused)
    receiver.wait_results([paused[0].trace_id.hex()], 1)
    receiver.send(resumed)

    (result,) = receiver.wait_results([resumed[0].trace_id.hex()], 1)

    assert [(c["tool"], c["outcome"]) for c in result["chain"]] == [("get_weather", "ok"), ("approve_booking", "ok")]


# -- real exporters -----------------------------------------------------------------------------

SHARDED_CLIENTS = [c for c in CLIENTS if c.id in ("python-otlp-proto-grpc-exporter", "node-exporter-trace-otlp-http-json")]


@pytest.mark.parametrize("send", SHARDED_CLIENTS)
def test_corpus_through_a_real_exporter_to_two_workers_gets_the_verdicts_eval_gives(receiver, tmp_path: Path, request, send):
    trace_ids = send_corpus_expecting_eval_verdicts(receiver, send, tmp_path / "corpus", f"shards-{request.node.callspec.id}")
    assert {int(t, 16) % WORKERS for t in trace_ids} == set(range(WORKERS))  # both workers judged


# -- a request is taken whole or refused whole --------------------------------------------

PER_WORKER = 10  # max_buffered_spans 20 over two workers
RETRY = 2


@pytest.mark.parametrize("transport", ["grpc", "http-protobuf", "http-json"])
def test_a_request_one_worker_has_no_room_for_is_refused_by_every_worker(module_receivers, transport):  # noqa: F811
    import grpc

    receiver = module_receivers.start(
        f"whole-{transport}", decision_wait=0.2, config={"workers": WORKERS, "max_buffered_spans": 2 * PER_WORKER,
                                                         "retry_after": RETRY, "trace_ttl": 600},
    )
    # 8 spans of a trace of worker 1 with no run span: they stay (trace_ttl), leaving it room for 2.
    receiver.send(agent_spans(0xC001, "filler", [(f"tool_{i}", {}) for i in range(6)])[1:])
    fits, too_big = agent_spans(0xC002, "on-worker-0"), agent_spans(0xC003, "on-worker-1")  # 5 spans each
    received = receiver.metric("agent_reliability_spans_received_total")
    dropped = receiver.metric("agent_reliability_spans_dropped_total", reason="overloaded")
    request = export_request(fits + too_big)

    if transport == "grpc":
        with pytest.raises(grpc.RpcError) as refused:
            receiver.grpc_export(request)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    else:
        body, media = (request.SerializeToString(), "application/x-protobuf") if transport == "http-protobuf" \
            else (otlp_json(request), "application/json")
        reply = receiver.post_traces(body, media)
        assert (reply.status, reply.headers["retry-after"]) == (503, str(RETRY))

    # Nothing of it kept: worker 0 had room for its trace, and judges nothing.
    receiver.send(agent_spans(0xC004, "sentinel"))  # a verdict after the refusal: settled covers it
    receiver.wait_results(["%032x" % 0xC004], 1)
    assert receiver.results_for(["%032x" % 0xC002, "%032x" % 0xC003]) == []
    assert receiver.metric("agent_reliability_spans_received_total") - received == 5  # the sentinel's
    assert receiver.metric("agent_reliability_spans_dropped_total", reason="overloaded") - dropped == 10
    # The same request without the trace that did not fit is taken whole.
    receiver.send(fits, "grpc")
    receiver.wait_verdicts(expected_results(fits))
