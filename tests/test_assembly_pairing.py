"""A requested call pairs with the execution that carried it out, never with two, and a call
that ran is never also reported as refused or pending (SPEC §3 "Never fabricate", §4).

The scenario table builds one run from hand-made records: a model call that asks for tools,
the executions that follow, and sometimes the model's next turn. Each row names how the
request should be paired (call id / name+arguments / relaxed / unpaired) and the chain the
run must show. The property tests hold for every trace in ``tests/fixtures/corpus``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.assembly.attempts import UNPAIRED
from otel_reliability.assembly.ownership import enclosing_run
from otel_reliability.model import PENDING, REFUSED, Role, SpanRecord, ToolRequest
from otel_reliability.sources import read_spans

from .corpus import scenario_id, trace_files

TRACE = 0xABC
RUN = 1


def run_span(end_ns: int = 1000) -> SpanRecord:
    return SpanRecord(TRACE, RUN, 0, "invoke_agent calc", 0, end_ns, Role.AGENT_RUN, agent_name="calc")


def model(span_id: int, start_ns: int, end_ns: int, *requests: ToolRequest) -> SpanRecord:
    return SpanRecord(TRACE, span_id, RUN, "chat", start_ns, end_ns, Role.MODEL, requests=requests)


def tool(span_id: int, start_ns: int, name: str, arguments=None, call_id: str | None = None, error: str | None = None):
    return SpanRecord(
        TRACE, span_id, RUN, f"execute_tool {name}", start_ns, start_ns + 5, Role.TOOL,
        tool_name=name, arguments=arguments, call_id=call_id, error=error,
    )


def chain_of(records: list[SpanRecord]) -> list[tuple[str, str, str]]:
    """(tool, outcome, how it was paired) for each attempt of the one run, in start order."""
    [run] = assemble(records)
    return [(a.tool, a.outcome, a.witnesses.joined_by) for a in run.chain()]


ASK_MUL = ToolRequest("multiply", '{"a": 10, "b": 5}', "call_1")
ASK_MUL_NO_ID = ToolRequest("multiply", '{"a": 10, "b": 5}', None)
WRAPPED = '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"a": 10, "b": 5}}'

SCENARIOS = {
    "call_id_pairs_whatever_the_arguments": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "multiply", WRAPPED, "call_1")],
        [("multiply", "ok", "call id")],
    ),
    "name_and_equal_arguments_pair_when_the_execution_has_no_call_id": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "multiply", '{"a": 10, "b": 5}')],
        [("multiply", "ok", "name+arguments")],
    ),
    "wrapped_arguments_pair_relaxed_in_the_window": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "multiply", WRAPPED), model(4, 50, 60)],
        [("multiply", "ok", "relaxed")],
    ),
    "uncaptured_arguments_pair_relaxed": (
        [run_span(), model(2, 10, 20, ASK_MUL_NO_ID), tool(3, 30, "multiply")],
        [("multiply", "ok", "relaxed")],
    ),
    "execution_starting_as_the_model_call_ends_is_in_the_window": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 20, "multiply", WRAPPED), model(4, 50, 60)],
        [("multiply", "ok", "relaxed")],
    ),
    "execution_before_the_request_ended_is_not_its_execution": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 19, "multiply", WRAPPED)],
        [("multiply", "ok", "unpaired"), ("multiply", "pending", "unpaired")],
    ),
    "execution_run_wholly_inside_a_streaming_model_call_is_in_the_window": (
        # ADK's generate_content stays open while the calls it asked for run
        [run_span(), model(2, 10, 30, ASK_MUL), tool(3, 19, "multiply", WRAPPED), model(4, 50, 60)],
        [("multiply", "ok", "relaxed")],
    ),
    "execution_starting_with_the_next_model_call_belongs_to_the_next_turn": (
        [run_span(), model(2, 10, 20, ASK_MUL), model(4, 50, 60), tool(3, 50, "multiply", WRAPPED)],
        [("multiply", "pending", "unpaired"), ("multiply", "ok", "unpaired")],
    ),
    "no_next_model_call_leaves_the_window_open_to_the_run_end": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 900, "multiply", WRAPPED)],
        [("multiply", "ok", "relaxed")],
    ),
    "another_tool_in_the_window_does_not_pair": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "add", '{"a": 10, "b": 5}'), model(4, 50, 60)],
        [("multiply", "pending", "unpaired"), ("add", "ok", "unpaired")],
    ),
    "different_call_ids_are_different_calls": (
        [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "multiply", WRAPPED, "call_9"), model(4, 50, 60)],
        [("multiply", "pending", "unpaired"), ("multiply", "ok", "unpaired")],
    ),
    "parallel_requests_pair_in_order_with_their_executions": (
        [
            run_span(),
            model(2, 10, 20, ToolRequest("get_weather", '{"city": "Paris"}', "c1"), ToolRequest("get_weather", '{"city": "Rome"}', "c2")),
            tool(3, 30, "get_weather", '{"kwargs": {"city": "Paris"}}'),
            tool(4, 31, "get_weather", '{"kwargs": {"city": "Rome"}}'),
            model(5, 50, 60),
        ],
        [("get_weather", "ok", "relaxed"), ("get_weather", "ok", "relaxed")],
    ),
    "one_execution_for_two_requests_leaves_one_request_unexecuted": (
        [
            run_span(),
            model(2, 10, 20, ToolRequest("get_weather", '{"city": "Paris"}', "c1"), ToolRequest("get_weather", '{"city": "Rome"}', "c2")),
            tool(3, 30, "get_weather", '{"kwargs": {"city": "Paris"}}'),
            model(5, 50, 60),
        ],
        # the request left over comes after the one asked for before it, which ran
        [("get_weather", "ok", "relaxed"), ("get_weather", "pending", "unpaired")],
    ),
    "a_failed_execution_in_the_window_is_the_request_s_not_a_refusal": (
        [
            run_span(),
            model(2, 10, 20, ToolRequest("divide", '{"a": 1, "b": 0}', "c1")),
            tool(3, 30, "divide", WRAPPED, error="ZeroDivisionError"),
            model(4, 50, 60),
        ],
        [("divide", "error", "relaxed")],
    ),
    "an_execution_of_the_next_turn_is_not_an_earlier_request_s": (
        [
            run_span(),
            model(2, 10, 20, ToolRequest("multiply", '{"a": "x"}', "c1")),
            model(4, 50, 60, ToolRequest("multiply", '{"a": 10}', "c2")),
            tool(5, 70, "multiply", '{"kwargs": {"a": 10}}'),
        ],
        [("multiply", "pending", "unpaired"), ("multiply", "ok", "relaxed")],
    ),
    "an_execution_nobody_asked_for_keeps_its_own_outcome": (
        [run_span(), tool(3, 30, "multiply", WRAPPED)],
        [("multiply", "ok", "unpaired")],
    ),
}


@pytest.mark.parametrize("records, expected", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_requests_pair_by_call_id_then_name_and_arguments_then_within_their_window(records, expected):
    assert chain_of(records) == expected


def test_relaxed_pairing_keeps_the_request_s_call_id_and_arguments_where_the_span_has_none():
    records = [run_span(), model(2, 10, 20, ASK_MUL), tool(3, 30, "multiply")]
    [run] = assemble(records)
    [attempt] = run.chain()
    assert (attempt.call_id, attempt.arguments, attempt.span_id) == ("call_1", {"a": 10, "b": 5}, 3)


def test_two_requests_of_one_tool_in_one_turn_lend_no_arguments_to_an_execution_without_its_own():
    """Which of the two ran is a guess: the attempt's arguments count as not captured, not as Paris's."""
    asks = (ToolRequest("get_weather", '{"city": "Paris"}', "c1"), ToolRequest("get_weather", '{"city": "Rome"}', "c2"))
    records = [run_span(), model(2, 10, 20, *asks), tool(3, 30, "get_weather"), model(5, 50, 60)]
    [run] = assemble(records)
    ran = next(a for a in run.chain() if a.span_id == 3)
    assert (ran.outcome, ran.arguments, ran.arguments_captured) == ("ok", {}, False)
    assert sorted(a.outcome for a in run.chain()) == ["ok", "pending"]


def _judged(path):
    return assemble(to_record(s) for s in read_spans(path))


ALL_TRACES = trace_files()


@pytest.mark.parametrize("path", ALL_TRACES, ids=scenario_id)
def test_no_chain_holds_the_same_execution_twice(path):
    for run in _judged(path):
        spans = Counter(a.span_id for a in run.chain() if a.span_id is not None)
        assert [span for span, n in spans.items() if n > 1] == [], run.agent


@pytest.mark.parametrize("path", ALL_TRACES, ids=scenario_id)
def test_no_request_whose_tool_ran_before_the_next_model_call_is_reported_unexecuted(path):
    """No refused or pending request has, between it and its run's next model call, an execution
    of its tool that no request claimed (unless both carry call ids, and so are other calls)."""
    records = [to_record(s) for s in read_spans(path)]
    spans = {r.span_id: r for r in records}
    for run in assemble(records):
        for member in run.walk():
            models = sorted(
                r.start_ns for r in records
                if r.role is Role.MODEL and (owner := enclosing_run(r, spans)) is not None and owner.span_id == member.span_id
            )
            unclaimed = [a for a in member.own_attempts if a.span_id is not None and a.witnesses.joined_by == UNPAIRED]
            for request in member.own_attempts:
                if request.outcome not in (REFUSED, PENDING) or request.span_id is not None:
                    continue
                window_end = next((start for start in models if start >= request.start_ns), 2**63)
                ran = [
                    a.span_id for a in unclaimed
                    if a.tool == request.tool
                    and request.start_ns <= a.start_ns < window_end
                    and (a.call_id is None or request.call_id is None)
                ]
                assert ran == [], f"{request.tool} ({request.outcome}) ran as span(s) {ran}"
