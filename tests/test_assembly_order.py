"""Parallel calls whose spans start in the same instant (a millisecond clock, the Vercel AI
SDK's) are in the order the model asked for them, whatever order their spans arrive in:
the span processor sees spans as they end, ``eval`` in file order. A call no span records
comes after the calls of its turn asked for before it that ran, whenever it was refused; one
its run's failure refused stays where it was asked."""

from __future__ import annotations

import itertools

import pytest

from otel_reliability.assembly import assemble
from otel_reliability.model import Role, SpanRecord, ToolRequest, ToolResponse

MS = 1_000_000
T0 = 1_796_114_135_000 * MS


def _records(tool_ids: dict[str, int]) -> list[SpanRecord]:
    run = SpanRecord(1, 1, 0, "invoke_agent", T0, T0 + 10 * MS, role=Role.AGENT_RUN, agent_name="calculator")
    model = SpanRecord(
        1, 2, 1, "chat", T0 + MS, T0 + 2 * MS, role=Role.MODEL,
        requests=(ToolRequest("multiply", {"a": 2}, "call_mul"), ToolRequest("add", {"a": 3}, "call_add")),
    )
    tools = [
        SpanRecord(1, span_id, 1, f"execute_tool {name}", T0 + 3 * MS, T0 + 3 * MS + span_id, role=Role.TOOL,
                   tool_name=name, call_id=f"call_{name[:3]}")
        for name, span_id in tool_ids.items()
    ]
    return [run, model, *tools]


@pytest.mark.parametrize("span_ids", [{"multiply": 7, "add": 3}, {"multiply": 3, "add": 7}], ids=["ids-descending", "ids-ascending"])
def test_calls_that_start_together_follow_the_request_order_in_any_arrival_order(span_ids):
    records = _records(span_ids)
    for arrival in itertools.permutations(records):
        [run] = assemble(arrival)
        assert [a.tool for a in run.chain()] == ["multiply", "add"]


def _limited(answers: tuple[str, ...], failed: bool = False) -> list[SpanRecord]:
    """One turn asks for multiply twice; only the first runs. The next model input answers the
    second (a limit's refusal) before or after the first, or nothing answers it and a step of
    the run fails right after the model call."""
    run = SpanRecord(1, 1, 0, "invoke_agent", T0, T0 + 10 * MS, role=Role.AGENT_RUN, agent_name="calculator")
    asked = SpanRecord(
        1, 2, 1, "chat", T0 + MS, T0 + 2 * MS, role=Role.MODEL,
        requests=(ToolRequest("multiply", {"a": 2}, "call_1"), ToolRequest("multiply", {"a": 4}, "call_2")),
    )
    ran = SpanRecord(1, 3, 1, "execute_tool multiply", T0 + 4 * MS, T0 + 5 * MS, role=Role.TOOL, tool_name="multiply", call_id="call_1")
    texts = {"call_1": "8", "call_2": "Tool call limit exceeded."}
    answered = SpanRecord(
        1, 4, 1, "chat", T0 + 6 * MS, T0 + 7 * MS, role=Role.MODEL,
        responses=tuple(ToolResponse(call_id, texts[call_id], refusal=call_id == "call_2") for call_id in answers),
    )
    records = [run, asked, ran, answered]
    if failed:
        records.append(SpanRecord(1, 5, 1, "step", T0 + 2 * MS, T0 + 3 * MS, error="Unknown tool"))
    return records


@pytest.mark.parametrize("answers", [("call_2", "call_1"), ("call_1", "call_2"), ()], ids=["refusal-answered-first", "refusal-answered-last", "unanswered"])
def test_a_call_no_span_records_comes_after_the_calls_asked_before_it_that_ran(answers):
    # a limit checked right after the model call refuses call_2 before call_1 runs: still second
    [run] = assemble(_limited(answers))
    assert [(a.call_id, a.outcome) for a in run.chain()] == [("call_1", "ok"), ("call_2", "refused" if answers else "pending")]


def test_a_call_its_runs_failure_refused_stays_where_it_was_asked():
    [run] = assemble(_limited((), failed=True))
    assert [(a.call_id, a.outcome) for a in run.chain()] == [("call_2", "refused"), ("call_1", "ok")]
