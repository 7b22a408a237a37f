"""Ordered chains: ``order`` = ``exact`` or ``in_order`` against ``expected_chain``.

Both read the run's chain in start order (members included), because order is
about time, not about Agno's depth-first evidence order. A step is a tool name,
a list: an unordered group, for calls made in parallel, or ``{one_of: [...]}``:
alternatives, each a name, a group or another ``one_of`` (``steps``); a group may
hold ``one_of`` items.

- ``exact``: the named attempts, whatever their outcome, are the chain exactly —
  a group takes the next ``len(group)`` attempts in any order, and nothing may
  follow the last step. An errored try followed by a retry is two attempts.
- ``in_order``: the steps appear, in order, as a subsequence of the clean calls;
  other calls may come between them. A group is located as a whole (its calls
  may interleave with other calls) and the next step must start after its last
  call.

Only the first divergence is reported: once a step is off, the positions of the
steps after it mean nothing. With alternatives, the way through the chain that got
furthest is reported, and a ``one_of`` step names the alternative that came closest:
the one with the most of its calls where the step was due, else attempted anywhere in
the run ("step 2: expected one of search_web or search_docs (closest: search_docs), got summarize").

When two or more named attempts have no start time (``start_ns`` 0: spans or records
that carry none), their order is unknown and the check is not evaluated (SPEC §5.2).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

from otel_reliability.expectations import ChainStep, Expectation, OneOf
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.matcher.steps import Expansion, describe, expansions, overlap
from otel_reliability.model import Attempt


UNTIMED = "order not evaluated: the tool calls carry no start times to order them by"


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    """One check when ``order`` is not ``any``; unevaluated when two named attempts have no start time."""
    if expectation.order == "any":
        return CheckResult()
    if expectation.expected_chain is not None and sum(1 for a in attempts.named if a.start_ns == 0) >= 2:
        return CheckResult(unevaluated=[UNTIMED])
    violations = order_violations(attempts.chain, expectation)
    return CheckResult(1, bool(violations), {"order_violations": violations})


def order_violations(chain: Sequence[Attempt], expectation: Expectation) -> list[str]:
    """The order check as readable sentences, e.g. ``"step 2: expected parse, got compute"``; empty when it holds.

    ``chain`` is ``Run.chain()``. With ``order="any"`` there is no order check.
    """
    if expectation.order == "any" or expectation.expected_chain is None:
        return []
    if expectation.order == "exact":
        return _exact([a.tool for a in chain if a.tool], expectation.expected_chain)
    return _in_order([a.tool for a in chain if a.clean], expectation.expected_chain, [a.tool for a in chain if a.tool])


def _exact(names: list[str], steps: Sequence[ChainStep]) -> list[str]:
    """Steps with alternatives may take windows of different lengths: every way through is
    tried, and the one that got furthest is reported (with plain steps there is only one)."""
    options = [expansions(step) for step in steps]
    tried: set[tuple[int, int]] = set()
    furthest = (-1, 0)  # (step index, position) of the deepest divergence

    def through(index: int, position: int) -> bool:
        nonlocal furthest
        if (index, position) in tried:
            return False
        tried.add((index, position))
        if index == len(steps) and position == len(names):
            return True
        if index < len(steps):
            for expansion in options[index]:
                end = position + len(expansion)
                if Counter(names[position:end]) == Counter(expansion) and through(index + 1, end):
                    return True
        if index > furthest[0]:
            furthest = (index, position)
        return False

    if through(0, 0):
        return []
    index, position = furthest
    if index == len(steps):
        extra = ", ".join(names[position:])
        if not steps:
            return [f"expected no tool calls, got {extra}"]
        return [f"after step {len(steps)}: expected no further call, got {extra}"]
    step = steps[index]
    hint, expansion = _closest(step, lambda e: (overlap(names[position : position + len(e)], e), overlap(names, e)))
    taken = names[position : position + len(expansion)]
    got = ", ".join(taken) if taken else "no further call"
    return [f"step {index + 1}: expected {describe(step)}{hint}, got {got}"]


def _in_order(clean_names: list[str], steps: Sequence[ChainStep], attempted: list[str]) -> list[str]:
    """Each step at its earliest end: a later start never lets a later step match more.
    ``attempted`` (every named attempt) only tells which alternative came closest."""
    start = 0
    for number, step in enumerate(steps, start=1):
        ends = [end for end in (_end(clean_names, start, e) for e in expansions(step)) if end is not None]
        if ends:
            start = min(ends) + 1
            continue
        later = clean_names[start:]
        # the lambda runs inside _closest, before this iteration ends (it returns below)
        hint, expansion = _closest(step, lambda e: (overlap(later, e), overlap(attempted, e)))  # noqa: B023
        left = Counter(later)
        not_found = [tool for tool in expansion if not _take(left, tool)]
        where = f" after step {number - 1}" if number > 1 else ""
        return [
            f"step {number}: expected {describe(step)}{where}{hint}, "
            f"but found no{' later' if where else ''} clean call to {', '.join(not_found)}"
        ]
    return []


def _take(counts: Counter[str], tool: str) -> bool:
    if counts[tool] > 0:
        counts[tool] -= 1
        return True
    return False


def _end(names: list[str], start: int, expansion: Expansion) -> int | None:
    """The index of the last call when ``expansion`` is located from ``start`` (each call at
    its earliest unused occurrence), None when a call is missing."""
    used: set[int] = set()
    for tool in expansion:
        index = next((i for i in range(start, len(names)) if names[i] == tool and i not in used), None)
        if index is None:
            return None
        used.add(index)
    return max(used, default=start - 1)


def _closest(step: ChainStep, closeness: Callable[[Expansion], tuple[int, int]]) -> tuple[str, Expansion]:
    """For a ``one_of`` step, ``" (closest: …)"`` naming the alternative with the most of its calls
    made where the step was due, then anywhere (the first on a tie; no hint when none has any),
    and the expansion to report against. Other steps: no hint, and their closest expansion."""
    if not isinstance(step, OneOf) or len(step.one_of) == 1:
        return "", max(expansions(step), key=closeness)  # max keeps the first of equals
    best = max(
        ((closeness(e), -number, alternative, e) for number, alternative in enumerate(step.one_of) for e in expansions(alternative)),
        key=lambda item: (item[0], item[1]),
    )
    (here, anywhere), _, alternative, expansion = best
    return (f" (closest: {describe(alternative)})" if here or anywhere else ""), expansion
