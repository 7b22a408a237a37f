"""Parallel calls whose spans start in the same instant (a millisecond clock, the Vercel AI
SDK's) are in the order the model asked for them, whatever order their spans arrive in:
the span processor sees spans as they end, ``eval`` in file order."""

from __future__ import annotations

import itertools

import pytest

from otel_reliability.assembly import assemble
from otel_reliability.model import Role, SpanRecord, ToolRequest

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
