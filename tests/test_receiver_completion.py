"""Trace completion through the real receiver (SPEC §8).

A trace split across many requests, in any order and over any mix of gRPC, HTTP protobuf
and HTTP JSON, is judged exactly once, after it went quiet for ``decision_wait``; a span
arriving after the verdict (within ``late_window``) gives one superseding verdict, counted
by ``agent.reliability.evaluations.late``; interleaved traces do not disturb each other — with one process and with two worker
processes sharing the traces.

"Exactly once" is read from ``agent.reliability.evaluations`` on ``/metrics``, labelled by
the agent: every scenario uses an agent name of its own. ``agent.reliability.traces.pending``
says when a verdict is final: a trace counts from its run span until its verdict is out,
and again from a late span until the superseding one is.
"""

from __future__ import annotations

from itertools import cycle

import pytest

from .receiver_harness import (
    Receiver,
    agent_spans,
    expected_results,
    module_receivers,  # noqa: F401 - fixture
    new_trace_id,
    paused_and_resumed,
    wait_until,
)

DECISION_WAIT = 0.4  # every scenario sends all of a trace well within this
TRANSPORTS = ("grpc", "http-protobuf", "http-json")
EVALUATIONS = "agent_reliability_evaluations_total"
LATE = "agent_reliability_evaluations_late_total"


@pytest.fixture(scope="module", params=[1, 2], ids=["1 worker", "2 workers"])
def receiver(module_receivers, request) -> Receiver:  # noqa: F811 - the imported fixture
    # With 2 workers the traces of a scenario fall to both processes (trace id mod 2).
    return module_receivers.start(f"completion-{request.param}", decision_wait=DECISION_WAIT, config={"workers": request.param})


def _evaluations(receiver: Receiver, agent: str) -> float:
    return receiver.metric(EVALUATIONS, gen_ai_agent_name=agent)


def _wait_for_verdicts(receiver: Receiver, expected: list[dict], timeout: float = 15.0) -> list[dict]:
    return receiver.wait_verdicts(expected, timeout)


# spans of agent_spans(): 0 run, 1 chat, 2 get_weather, 3 get_news, 4 final chat.
# Each scenario is the list of requests, each request the indexes of the spans it carries.
SPLITS = {
    "run span first, one span per request": [[0], [1], [2], [3], [4]],
    "run span last, one span per request": [[1], [2], [3], [4], [0]],
    "run span in the middle": [[3], [1], [0], [4], [2]],
    "reverse order, two spans per request": [[4, 3], [2, 1], [0]],
    "all children in one request, then the run span": [[1, 2, 3, 4], [0]],
    "the run span alone, then all children": [[0], [4, 3, 2, 1]],
    "retried requests repeat spans": [[0, 1], [1, 2], [0, 2, 3], [3, 4], [4]],
}


@pytest.mark.parametrize("requests", list(SPLITS.values()), ids=list(SPLITS))
def test_a_trace_split_across_requests_in_any_order_gets_exactly_one_verdict(receiver, requests):
    agent = f"split-{abs(hash(str(requests))) % 10**8}"
    late_before = receiver.metric(LATE)
    spans = agent_spans(new_trace_id(), agent)
    transports = cycle(TRANSPORTS)

    for indexes in requests:
        receiver.send([spans[i] for i in indexes], next(transports))

    _wait_for_verdicts(receiver, expected_results(spans))
    assert _evaluations(receiver, agent) == 1
    assert receiver.metric(LATE) == late_before


def test_a_span_after_the_verdict_gives_one_superseding_verdict(receiver):
    agent = "late-tool-error"
    late_before = receiver.metric(LATE)
    spans = agent_spans(new_trace_id(), agent, failed=["get_news"])
    early, late = [s for i, s in enumerate(spans) if i != 3], spans[3]  # get_news (an error) comes late

    receiver.send(early)
    first = _wait_for_verdicts(receiver, expected_results(early))
    # nothing answered get_news yet: pending, which may be refused, so fail_on cannot be told
    assert first[0]["eval_status"] == "NOT_EVALUATED"
    assert [a["outcome"] for a in first[0]["chain"] if a["tool"] == "get_news"] == ["pending"]

    receiver.send([late], "http-protobuf")

    second = _wait_for_verdicts(receiver, expected_results(spans))
    assert second[0]["eval_status"] == "FAILED" and second[0]["run_span_id"] == first[0]["run_span_id"]
    assert len(receiver.results(trace_id=second[0]["trace_id"])["results"]) == 1  # the newer one replaced it
    wait_until(lambda: receiver.metric(LATE) == late_before + 1, 5, "the late evaluation to be counted")
    assert _evaluations(receiver, agent) == 2


def test_a_retried_export_after_the_verdict_does_not_judge_again(receiver):
    agent = "retried-after-verdict"
    late_before = receiver.metric(LATE)
    spans = agent_spans(new_trace_id(), agent)
    receiver.send(spans)
    _wait_for_verdicts(receiver, expected_results(spans))

    receiver.send(spans, "http-protobuf")  # the exporter retries a request that did arrive
    sentinel = agent_spans(new_trace_id(), "sentinel-after-retry")
    receiver.send(sentinel)  # judged a decision_wait after the retry: any re-judging is done by then
    _wait_for_verdicts(receiver, expected_results(sentinel))

    assert _evaluations(receiver, agent) == 1
    assert receiver.metric(LATE) == late_before


@pytest.mark.parametrize(
    "batching",
    ["one span per request, alternating traces", "both traces in every request"],
)
def test_interleaved_traces_do_not_disturb_each_other(receiver, batching):
    suffix = abs(hash(batching)) % 10**8
    passing = agent_spans(new_trace_id(), f"interleaved-ok-{suffix}")
    failing = agent_spans(new_trace_id(), f"interleaved-fails-{suffix}", failed=["get_weather"])
    order = [[0], [1], [2], [3], [4]] if "alternating" in batching else [[4, 0], [1, 3], [2]]
    transports = cycle(TRANSPORTS)

    for indexes in order:
        if "alternating" in batching:
            receiver.send([passing[i] for i in indexes], next(transports))
            receiver.send([failing[i] for i in reversed(indexes)], next(transports))
        else:
            receiver.send([passing[i] for i in indexes] + [failing[i] for i in indexes], next(transports))

    got = _wait_for_verdicts(receiver, expected_results(passing) + expected_results(failing))
    assert sorted(r["eval_status"] for r in got) == ["FAILED", "PASSED"]
    for spans in (passing, failing):
        assert _evaluations(receiver, spans[0].attributes[1].value.string_value) == 1


def test_a_resumed_run_judged_before_its_paused_run_arrived_is_judged_again_when_it_does(receiver):
    paused, resumed = paused_and_resumed(new_trace_id(), new_trace_id())
    receiver.send(resumed)
    (alone,) = receiver.wait_results([resumed[0].trace_id.hex()], 1)
    assert [c["tool"] for c in alone["chain"]] == ["approve_booking"]  # nothing to join yet

    receiver.send(paused)

    _wait_for_verdicts(receiver, expected_results(paused + resumed))
    (joined,) = receiver.results_for([resumed[0].trace_id.hex()])
    assert [(c["tool"], c["outcome"]) for c in joined["chain"]] == [("get_weather", "ok"), ("approve_booking", "ok")]


PENDING = "agent_reliability_traces_pending"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_trace_is_pending_until_its_verdict_and_again_until_a_late_span_is_judged(module_receivers, workers):  # noqa: F811
    # Its own receiver, quiet otherwise, with a decision_wait long enough to be seen waiting.
    receiver = module_receivers.start(f"pending-{workers}", decision_wait=2.0, config={"workers": workers})
    spans = agent_spans(new_trace_id(), "pending-until-judged", failed=["get_news"])
    early, late = [s for i, s in enumerate(spans) if i != 3], spans[3]

    receiver.send(early)
    waiting = receiver.metric(PENDING)
    first = receiver.wait_results([spans[0].trace_id.hex()], 1)
    receiver.send([late])
    waiting_again = receiver.metric(PENDING)
    superseding = receiver.wait_results([spans[0].trace_id.hex()], 1)

    assert (waiting, waiting_again) == (1, 1)
    assert [r["eval_status"] for r in first + superseding] == ["NOT_EVALUATED", "FAILED"]
    assert receiver.metric(PENDING) == 0
