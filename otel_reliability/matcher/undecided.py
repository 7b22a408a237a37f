"""A run whose spans leave some attempt's outcome open (``Attempt.could_be``) is judged every
way it could have gone: a check that passes every way, or fails every way, stands (counted
as the spans record it); one that passes one way and fails another cannot be evaluated,
and says on which calls it depends.

So a call that nothing answered (held for an approval, or cut off by a limit) still passes
``max_tool_calls``, but ``fail_on: [refused]`` is not evaluated on it; and an error span whose
arguments did not parse fails ``fail_on: [error, refused]`` either way. A call that may be no
call at all (``NOT_A_CALL``: a tool that ends runs, called last) is read with it and without it.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product
from typing import Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, Check, CheckResult
from otel_reliability.model import NOT_A_CALL, Attempt

# Each open attempt doubles the readings: past this many, every check that counts is undecided.
MAX_OPEN = 6

_WHAT = {
    "agno": "the expected tool calls",
    "agents": "the expected calls by agent",
    "order": "the expected order",
    "policies": "the policies",
    "budgets": "the budgets",
}


def settle(checks: Sequence[Check], results: list[CheckResult], attempts: Attempts, expectation: Expectation) -> list[CheckResult]:
    """``results`` (one per check, read on the outcomes the spans record), with each check that
    another reading of the open outcomes would turn from passed to failed, or back, made
    unevaluated."""
    open_attempts = [a for a in attempts.chain if a.could_be is not None]
    if not open_attempts:
        return results
    undecided = [False] * len(results)
    if len(open_attempts) > MAX_OPEN:
        undecided = [r.checks > 0 for r in results]
    else:
        for reading in product((False, True), repeat=len(open_attempts)):
            if not any(reading):
                continue
            other = _read_as(attempts, {id(a) for a, flip in zip(open_attempts, reading, strict=True) if flip})
            for index, check in enumerate(checks):
                if undecided[index] or results[index].checks == 0:
                    continue
                undecided[index] = check(other, expectation).passed != results[index].passed
    if not any(undecided):
        return results
    calls = ", ".join(dict.fromkeys(map(_open_call, open_attempts)))
    settled = []
    for check, result, open_ in zip(checks, results, undecided, strict=True):
        if open_:
            what = _WHAT.get(check.__module__.rsplit(".", 1)[-1], "a check")
            result = CheckResult(lists=result.lists, unevaluated=[*result.unevaluated, f"{what} depend on whether {calls}: the spans cannot tell"])
        settled.append(result)
    return settled


def _open_call(attempt: Attempt) -> str:
    """An open call as a reason names it: the outcomes it may have had, and, where its witnesses
    disagree, the call and what they say."""
    if attempt.could_be == NOT_A_CALL:
        said = f"{attempt.tool} was a call of the agent's or the framework's own ending of the run"
    else:
        said = f"{attempt.tool} was {attempt.outcome} or {attempt.could_be}"
    doubt = attempt.witnesses.doubt if attempt.witnesses is not None else None
    if doubt is None:
        return said
    return f"{said} ({attempt.call_id or 'no call id'}: {doubt})"


def _read_as(attempts: Attempts, flipped: set[int]) -> Attempts:
    """``attempts`` with the attempts whose ids are in ``flipped`` given their other outcome, or
    left out where that reading is that they were no call (``NOT_A_CALL``)."""
    other: dict[int, Attempt] = {}
    dropped = {id(a) for a in attempts.chain if id(a) in flipped and a.could_be == NOT_A_CALL}

    def read(attempt: Attempt) -> Attempt:
        if id(attempt) not in flipped:
            return attempt
        if id(attempt) not in other:
            # only attempts with another reading are flipped: could_be is set
            other[id(attempt)] = replace(attempt, outcome=attempt.could_be or attempt.outcome, could_be=None)
        return other[id(attempt)]

    def kept(these: list[Attempt]) -> list[Attempt]:
        return [read(a) for a in these if id(a) not in dropped]

    return replace(attempts, evidence=kept(attempts.evidence), chain=kept(attempts.chain), named=kept(attempts.named))
