"""Several receivers behind the OpenTelemetry Collector of ``collector-config/`` (SPEC §8,
horizontal scale): the whole corpus sent to the Collector, every trace split across export
calls, gets exactly the verdicts ``otel-reliability eval`` gives, each trace judged whole
by one receiver, and the results and standings the receivers share through PostgreSQL
count every run once. A run paused in a trace routed to one receiver and resumed in a
trace routed to the other is judged with its paused run: the receivers share paused runs
through the results store.

The Collector is the real one: built by ``.ci/setup`` from ``collector-config/builder.yaml``
and run with ``collector-config/loadbalancing.yaml`` as it ships. The client is the real
Python OTLP/gRPC exporter. A trace's spans travel in several export calls, each carrying
pieces of many traces, so only routing by trace id brings a trace's spans together: split
any other way, a receiver judges part of a run and the verdict differs from ``eval``'s.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from otel_reliability.engine.buffer import VERDICT_LOST

from .receiver_harness import (
    Collector,
    Receiver,
    by_run,
    collector_binary,
    eval_json,
    export_split,
    receivers,  # noqa: F401 - fixture
    remap_corpus,
    start_collector,
    wait_until,
)
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 - fixture

COLLECTOR = collector_binary()
COLLECTOR_MISSING = (
    None if COLLECTOR.is_file()
    else f"{COLLECTOR} is missing: run .ci/setup, which builds it from collector-config/builder.yaml with Go"
)
EXPORT_CALLS = 3


@pytest.fixture
def collector_for(tmp_path: Path):
    """``collector_for(receivers)`` starts a Collector in front of them; stopped afterwards
    (before the receivers), and it must exit 0 on SIGTERM."""
    started: list[Collector] = []

    def start(receivers: list[Receiver]) -> Collector:
        started.append(start_collector(tmp_path / f"collector-{len(started)}", receivers))
        return started[-1]

    yield start
    problems = [f"the Collector exited {code} on SIGTERM:\n{c.log_text()}" for c in started if (code := c.stop()) != 0]
    assert not problems, "\n".join(problems)


def test_the_collector_routes_each_trace_whole_to_one_receiver_which_gives_eval_s_verdict(
    receivers, collector_for, postgres_server, tmp_path  # noqa: F811 - the imported fixtures
):
    if COLLECTOR_MISSING:
        pytest.fail(COLLECTOR_MISSING)
    shared = fresh_schema_url(postgres_server)  # results, paused runs and standings
    pair = [receivers.start(name, decision_wait=1.0, store=shared) for name in ("receiver-a", "receiver-b")]
    collector = collector_for(pair)
    files = remap_corpus(tmp_path / "corpus", salt="loadbalancing")
    expected = by_run(eval_json(files)["results"])
    assert len(expected) >= 35 and any(r["eval_status"] == "FAILED" for r in expected)
    trace_ids = {r["trace_id"] for r in expected}

    sent = export_split(collector.grpc_endpoint, files, EXPORT_CALLS)

    assert sent["exported"] == sent["replayed"] > 0 and not sent["failed"], sent

    # Final verdicts only: every span through the Collector (its queue may still hold some
    # after the exporter is done), and nothing pending a verdict at either receiver.
    try:
        wait_until(
            lambda: sum(r.metric("agent_reliability_spans_received_total") for r in pair) == sent["replayed"]
            and all(r.settled() for r in pair) and by_run(pair[0].results_for(trace_ids)) == expected,
            30, "the final eval verdicts in the shared store",
        )
    except AssertionError:
        pass  # the comparisons below show what is wrong
    assert all(r.settled() for r in pair), "verdicts still pending"
    for receiver in pair:  # every run judged once, as eval judges it, and each API reads the shared store
        assert by_run(receiver.results_for(trace_ids)) == expected
    # Re-judgements (late spans, a paused run learnt later) are counted apart: the first
    # judgements add up to one per run only if no run was judged by both receivers.
    first_judgements = [
        r.metric("agent_reliability_evaluations_total") - r.metric("agent_reliability_evaluations_late_total") for r in pair
    ]
    assert sum(first_judgements) == len(expected), f"a run was judged by both receivers: {first_judgements}"
    assert all(first_judgements), f"one receiver judged every trace: {first_judgements}"

    wait_until(
        lambda: sum(r.metric("agent_reliability_spans_received_total") for r in pair) == sent["replayed"],
        15, "every span sent to reach one receiver",
    )
    for receiver in pair:
        assert receiver.metric("agent_reliability_spans_dropped_total") == 0
        lost = {r: receiver.metric("agent_reliability_traces_dropped_total", reason=r) for r in VERDICT_LOST}
        assert sum(lost.values()) == 0, lost

    runs_per_agent = Counter(r["agent"] for r in expected)
    for receiver in pair:
        wait_until(
            lambda receiver=receiver: _evaluations_per_agent(receiver) == runs_per_agent, 15,
            f"{receiver.log.name}'s shared standings to count every run once",
        )


def _evaluations_per_agent(receiver: Receiver) -> Counter:
    standings = receiver.http("GET", "/api/v1/reputation").json()["standings"]
    return Counter({s["agent"]: s["total_evaluations"] for s in standings})


def test_a_conversation_whose_traces_reach_both_receivers_gives_one_session_result_equal_to_eval_s(
    receivers, collector_for, postgres_server, tmp_path  # noqa: F811 - the imported fixtures
):
    """Sessions stay whole behind the Collector routing by trace id: the receivers share the
    turns they judged through PostgreSQL, judge a session once it is idle everywhere, and the
    one that claims it first judges it."""
    if COLLECTOR_MISSING:
        pytest.fail(COLLECTOR_MISSING)
    from .test_sessions import CONVERSATION, TURNS, conversation_spans, eval_cli, rules_file, sessions_in, write_traces

    rules = rules_file(tmp_path)
    shared = fresh_schema_url(postgres_server)
    config = {"session_idle": 2.0, "expectations": [str(rules)]}
    pair = [receivers.start(name, decision_wait=0.3, store=shared, config=config) for name in ("receiver-a", "receiver-b")]
    collector = collector_for(pair)
    trace_ids = _split_over(collector, pair)
    traces = conversation_spans(turns=[(trace_id, start, calls) for trace_id, (_, start, calls) in zip(trace_ids, TURNS)])
    [expected] = sessions_in(eval_cli(write_traces(tmp_path / "traces", traces), rules)[1])

    for spans in traces:
        _export(collector, spans)

    document = wait_until(
        lambda: (found := pair[0].results(session_id=CONVERSATION)) and found["results"] and found,
        30, "the session's result in the shared store",
    )
    assert sorted(r.metric("agent_reliability_evaluations_total") for r in pair) == [1, 2]
    [got] = document["results"]
    assert {k: v for k, v in got.items() if k != "source"} == {k: v for k, v in expected.items() if k != "source"}
    # judged once: both found it idle with the same turns, and only the first claim judges
    wait_until(lambda: all(r.settled() for r in pair), 15, "both receivers to settle")
    assert sum(r.metric("agent_reliability_session_evaluations_total") for r in pair) == 1


def _split_over(collector: Collector, pair: list[Receiver]) -> list[int]:
    """Three trace ids the Collector sends two to one receiver and one to the other. Its hash
    ring depends on the receivers' (free, so changing) ports: each candidate is learnt by
    sending one plain span of it (no run: it changes no verdict) and seeing where it lands."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    from .receiver_harness import new_trace_id

    landed: dict[int, list[int]] = {0: [], 1: []}
    while not (len(landed[0]) >= 2 and landed[1] or len(landed[1]) >= 2 and landed[0]):
        trace_id = new_trace_id()
        before = [r.metric("agent_reliability_spans_received_total") for r in pair]
        _export(collector, [Span(trace_id=trace_id.to_bytes(16, "big"), span_id=(trace_id & 0xFFFF).to_bytes(8, "big"),
                                 name="probe", start_time_unix_nano=1, end_time_unix_nano=2)])
        after = wait_until(
            lambda: (now := [r.metric("agent_reliability_spans_received_total") for r in pair]) != before and now,
            15, "the probe span to reach a receiver",
        )
        landed[0 if after[0] > before[0] else 1].append(trace_id)
    many, few = (landed[0], landed[1]) if len(landed[0]) >= 2 else (landed[1], landed[0])
    return [many[0], few[0], many[1]]


def _export(collector: Collector, spans: list) -> None:
    import grpc

    from .receiver_harness import EXPORT_METHOD, export_request

    with grpc.insecure_channel(collector.grpc_endpoint) as channel:
        channel.unary_unary(EXPORT_METHOD)(export_request(spans).SerializeToString(), timeout=30)
