"""Which run owns a tool call whose span sticks out of its parent run's interval.

A parent that does not contain its child in time is skipped (agno leaks an ended span
as the current context). Clocks that record start times in whole milliseconds (the
Vercel AI SDK's) let a real child end under 1 ms after its parent: it stays the
parent's. Nothing else moves.
"""

from __future__ import annotations

import pytest

from otel_reliability.assembly import assemble
from otel_reliability.model import Role, SpanRecord

MS = 1_000_000
OUTER_START, INNER_START, INNER_END = 1_796_114_135_000 * MS, 1_796_114_135_010 * MS, 1_796_114_135_020 * MS


def _owner_of_call(tool_start: int, tool_end: int, inner_start: int = INNER_START) -> tuple[str, ...]:
    """The agent path of the one call: ("outer", "inner") when the inner run owns it, ("outer",) when it was skipped."""
    records = [
        SpanRecord(1, 1, 0, "outer", OUTER_START, OUTER_START + 100 * MS, role=Role.AGENT_RUN, agent_name="outer"),
        SpanRecord(1, 2, 1, "inner", inner_start, INNER_END, role=Role.AGENT_RUN, agent_name="inner"),
        SpanRecord(1, 3, 2, "execute_tool lookup", tool_start, tool_end, role=Role.TOOL, tool_name="lookup"),
    ]
    [run] = assemble(records)
    [attempt] = run.chain()
    return attempt.agent_path


@pytest.mark.parametrize(
    ("case", "tool_start", "tool_end", "inner_start", "owner"),
    [
        ("inside its parent", INNER_START + 2 * MS, INNER_END - MS, INNER_START, ("outer", "inner")),
        ("ms clock: ends 0.84 ms after its parent", INNER_START + 9 * MS, INNER_END + 840_000, INNER_START, ("outer", "inner")),
        ("ms clock: ends 1 ms after its parent", INNER_START + 9 * MS, INNER_END + MS, INNER_START, ("outer",)),
        ("ms clock: starts as its parent ends", INNER_END, INNER_END + 100_000, INNER_START, ("outer", "inner")),
        ("ms clock: started 1 ms after its parent ended", INNER_END + MS, INNER_END + MS + 100_000, INNER_START, ("outer",)),
        ("ms clock: starts before its parent", INNER_START - MS, INNER_END - MS, INNER_START, ("outer",)),
        ("ns clock: ends 0.1 ms after its parent", INNER_START + 2 * MS + 7, INNER_END + 100_000, INNER_START, ("outer",)),
        ("parent on a ns clock", INNER_START + 2 * MS, INNER_END + 100_000, INNER_START + 7, ("outer",)),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_child_sticking_out_of_its_parent_by_millisecond_rounding_stays_the_parent_s(case, tool_start, tool_end, inner_start, owner):
    assert _owner_of_call(tool_start, tool_end, inner_start) == owner
