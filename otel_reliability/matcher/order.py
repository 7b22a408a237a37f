"""Ordered chains: ``order`` = ``exact`` or ``in_order`` against ``expected_chain``.

Both read the run's chain in start order (members included), because order is
about time, not about Agno's depth-first evidence order. A step is a tool name
or a list of names: an unordered group, for calls made in parallel.

- ``exact``: the named attempts, whatever their outcome, are the chain exactly —
  a group takes the next ``len(group)`` attempts in any order, and nothing may
  follow the last step. An errored try followed by a retry is two attempts.
- ``in_order``: the steps appear, in order, as a subsequence of the clean calls;
  other calls may come between them. A group is located as a whole (its calls
  may interleave with other calls) and the next step must start after its last
  call.

Only the first divergence is reported: once a step is off, the positions of the
steps after it mean nothing.

When two or more named attempts have no start time (``start_ns`` 0: spans or records
that carry none), their order is unknown and the check is not evaluated (SPEC §5.2).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from otel_reliability.expectations import ChainStep, Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
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
    return _in_order([a.tool for a in chain if a.clean], expectation.expected_chain)


def _exact(names: list[str], steps: Sequence[ChainStep]) -> list[str]:
    position = 0
    for number, step in enumerate(steps, start=1):
        group = _group(step)
        taken = names[position : position + len(group)]
        if Counter(taken) != Counter(group):
            got = ", ".join(taken) if taken else "no further call"
            return [f"step {number}: expected {_describe(step)}, got {got}"]
        position += len(group)
    extra = ", ".join(names[position:])
    if not extra:
        return []
    if not steps:
        return [f"expected no tool calls, got {extra}"]
    return [f"after step {len(steps)}: expected no further call, got {extra}"]


def _in_order(clean_names: list[str], steps: Sequence[ChainStep]) -> list[str]:
    start = 0
    for number, step in enumerate(steps, start=1):
        used: set[int] = set()
        not_found: list[str] = []
        for tool in _group(step):
            index = next((i for i in range(start, len(clean_names)) if clean_names[i] == tool and i not in used), None)
            if index is None:
                not_found.append(tool)
            else:
                used.add(index)
        if not_found:
            where = f" after step {number - 1}" if number > 1 else ""
            return [
                f"step {number}: expected {_describe(step)}{where}, "
                f"but found no{' later' if where else ''} clean call to {', '.join(not_found)}"
            ]
        start = max(used) + 1
    return []


def _group(step: ChainStep) -> list[str]:
    return step if isinstance(step, list) else [step]


def _describe(step: ChainStep) -> str:
    if isinstance(step, str):
        return step
    if len(step) == 1:
        return step[0]
    return f"{', '.join(step[:-1])} and {step[-1]} in any order"
