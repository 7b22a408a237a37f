"""A call no execution span records comes in the chain in the order the model asked for the calls
of its turn (``assembly.attempts``): after those it asked for before it that ran, whatever instant
the framework refused it in. On real traces, read cold (conventions only) and with the
framework's knowledge:

* LangGraph's tool-call limit refuses the second of two calls in one turn right after the model
  call, before the first runs, and answers it first: the chain is still the first call, then the
  refused one, under OpenInference and OpenLLMetry alike;
* a limit whose answer no span records (OpenLIT over LangGraph, OpenLLMetry over agno) leaves the
  call open (pending or refused), in its place after the call asked for before it;
* a call refused because its run failed, with no answer of its own, stays where it was asked
  (smolagents fails the whole step on an unknown tool among parallel calls).
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from otel_reliability.adapters import knowledge
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import FAILED, NOT_EVALUATED, OK, PENDING, REFUSED
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS, logs_of


def judged(trace: str, cold: bool) -> list:
    path = CORPUS / f"{trace}.json"
    logs = logs_of(path)
    with knowledge.removed() if cold else nullcontext():
        results = judge_spans(Engine(), read_telemetry(path).spans, read_telemetry(logs).logs if logs else ())
    return [r.verdict for r in results]


# (trace, verdict, chain as (call id, tool, outcome, could be)): read the same cold and warm
IN_TURN_ORDER = [
    (
        "langgraph_subagents/blocked_tool_call_limit", FAILED,
        [("call_mul_1", "multiply", OK, None), ("call_mul_2", "multiply", REFUSED, None)],
    ),
    (
        "traceloop_langgraph/blocked_tool_call_limit", FAILED,
        [("call_mul_1", "multiply", OK, None), ("call_mul_2", "multiply", REFUSED, None)],
    ),
    (
        "openlit_langgraph/blocked_tool_call_limit", NOT_EVALUATED,
        [
            ("call_olg_blocked_tool_call_limit_multiply_1", "multiply", OK, None),
            ("call_olg_blocked_tool_call_limit_multiply_2", "multiply", PENDING, REFUSED),
        ],
    ),
    (
        "agno_traceloop/blocked_tool_call_limit", NOT_EVALUATED,
        [
            ("call_agnotl_blocked_tool_call_limit_multiply_1", "multiply", OK, None),
            ("call_agnotl_blocked_tool_call_limit_multiply_2", "multiply", PENDING, REFUSED),
            ("call_agnotl_blocked_tool_call_limit_add_1", "add", PENDING, REFUSED),
        ],
    ),
    (
        "smolagents/parallel_one_unknown", FAILED,
        [
            ("call_smol_parallel_one_unknown_forecast_1", "get_forecast", REFUSED, None),
            ("call_smol_parallel_one_unknown_w_paris", "get_weather", OK, None),
        ],
    ),
]


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "warm"])
@pytest.mark.parametrize(("trace", "verdict", "chain"), IN_TURN_ORDER, ids=[t for t, _, _ in IN_TURN_ORDER])
def test_a_call_no_span_records_comes_in_its_turns_request_order(trace, verdict, chain, cold):
    [read] = judged(trace, cold)
    assert read.eval_status == verdict
    # smolagents' closing final_answer, read cold as maybe no call, is no step of this order
    assert [(a.call_id, a.tool, a.outcome, a.could_be) for a in read.chain if a.tool != "final_answer"] == chain


def test_the_refusal_keeps_the_frameworks_answer_as_its_reason():
    [read] = judged("langgraph_subagents/blocked_tool_call_limit", cold=True)
    assert (read.passed_tool_calls, read.refused_tool_calls) == (["multiply"], ["multiply"])
    assert read.chain[1].error == "Tool call limit exceeded. Do not call 'multiply' again."
