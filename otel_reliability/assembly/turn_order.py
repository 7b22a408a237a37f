"""Where a call no execution span records comes in its run's chain (``assembly.attempts``).

Such a call has no start of its own: only the model call that asked for it, and perhaps an
answer in a later model input. The framework deals with the calls of one turn in the order the
model asked for them, whatever instant it refuses one in (LangGraph's tool-call limit, checked
right after the model call, refuses the second of two calls before the first runs, and answers
it first). So the call comes after the calls of its turn that the model asked for before it and
that ran, and after those answered before it in the same model input.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Sequence

from ..model import REFUSED, Attempt, SpanRecord, ToolResponse

_start = attrgetter("start_ns")


def answers(owned: Sequence[SpanRecord]) -> tuple[dict[str, ToolResponse], dict[str, tuple[str, ...]]]:
    """Each call id's first answer, and the call ids answered before it in the same model input
    (the framework hands the results back in the order it dealt with the calls)."""
    first: dict[str, ToolResponse] = {}
    before: dict[str, tuple[str, ...]] = {}
    for record in sorted(owned, key=_start):
        for index, response in enumerate(record.responses):
            if response.call_id not in first:
                first[response.call_id] = response
                before[response.call_id] = tuple(r.call_id for r in record.responses[:index])
    return first, before


def ran_asked_before(requests: list[tuple[int, int]], started: dict[int, int]) -> dict[int, int]:
    """For each request (its key and the index of the model call that asked for it, in request
    order), the latest start of the executions of the calls its model call asked for before it;
    absent when none of them ran. ``started``: request key → its execution's start.

    >>> ran_asked_before([(1, 0), (2, 0), (3, 1)], {1: 40})
    {2: 40}
    """
    latest: dict[int, int] = {}
    turn, last = -1, None
    for key, asked_in in requests:
        if asked_in != turn:
            turn, last = asked_in, None
        if last is not None:
            latest[key] = last
        start = started.get(key)
        if start is not None:
            last = start if last is None else max(last, start)
    return latest


def in_turn_order(
    attempt: Attempt,
    answered: bool,
    answered_after: dict[str, tuple[str, ...]],
    ran: dict[str, int],
    ran_asked_before: int | None,
) -> int:
    """When a call no execution span records comes in the chain: after the calls of its turn that
    ran and that the model asked for before it (``ran_asked_before``: the latest start among
    them) or that were answered before it in the same model input (``answered_after``, ``ran``:
    call id → start); else when it was asked for. A call refused because its run failed, with no
    answer of its own, stays where it was asked: the failure came before it could run."""
    if attempt.outcome == REFUSED and not answered:
        return attempt.start_ns
    start = attempt.start_ns if ran_asked_before is None else max(attempt.start_ns, ran_asked_before)
    for earlier in reversed(answered_after.get(attempt.call_id, ()) if attempt.call_id is not None else ()):
        if earlier in ran:
            return max(start, ran[earlier])
    return start
