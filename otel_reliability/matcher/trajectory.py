"""Partial credit (SPEC §5.2): how close the run's clean calls came, beside the verdict.

- ``precision``, ``recall``, ``f1``: the clean calls' tool names (members' included)
  against ``expected_tool_calls``, both as multisets. Matching is one to one: two
  expected ``search`` are met by two clean ``search`` calls, not one counted twice, and
  a third call is one too many. With names only, the multiset intersection *is* the
  best one-to-one assignment, so no matching search is needed. Arguments take no part:
  ``passed_argument_checks``/``failed_argument_checks`` judge them, and partial credit
  measures the trajectory's shape only.
- ``lcs_f1``: the longest common subsequence of the clean calls' names, in start order,
  and ``expected_chain``, as F1 (2·LCS / (calls + expected calls)). A group matches the
  calls of one stretch of the run in any order (its calls count as a multiset there); a
  ``one_of`` takes the alternative that matches the most calls — the shortest of those,
  so the fewest expected calls, on a tie — and that alternative's length is what the
  expected side counts. With plain names this is the textbook LCS.

Empty sides: with nothing expected and no clean call every value is 1.0; with only
one side empty, precision, recall and F1 are 0.0. ``trajectory`` is None when the
expectation sets neither list, and a value is None when its list is not set.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from otel_reliability.expectations import ChainStep, Expectation
from otel_reliability.matcher.steps import expansions
from otel_reliability.model import Attempt, Trajectory


def trajectory(chain: Sequence[Attempt], expectation: Expectation) -> Trajectory | None:
    """Partial credit of a run's chain (start order) against ``expectation``.

    >>> from otel_reliability.model import OK, Attempt
    >>> calls = [Attempt(tool, {}, OK, "a", ("a",)) for tool in ("search", "summarize", "summarize")]
    >>> trajectory(calls, Expectation(name="e", expected_tool_calls=["search", "search", "summarize"]))
    Trajectory(precision=0.6666666666666666, recall=0.6666666666666666, f1=0.6666666666666666, lcs_f1=None)
    """
    if expectation.expected_tool_calls is None and expectation.expected_chain is None:
        return None
    clean = [a.tool for a in chain if a.clean]
    result = Trajectory()
    if expectation.expected_tool_calls is not None:
        expected = expectation.expected_tool_calls
        common = sum((Counter(clean) & Counter(expected)).values())
        result.precision, result.recall, result.f1 = _scores(common, len(clean), len(expected))
    if expectation.expected_chain is not None:
        common, expected_length = lcs(clean, expectation.expected_chain)
        result.lcs_f1 = _scores(common, len(clean), expected_length)[2]
    return result


def lcs(names: Sequence[str], steps: Sequence[ChainStep]) -> tuple[int, int]:
    """(common calls, expected calls) of the best alignment of ``names`` with ``steps``.

    Each step is given one stretch of ``names`` (stretches in order, possibly empty) and
    scores the most calls one of its expansions shares with it; ``best[i]`` is the best
    (common, -expected) over the steps so far with ``names[:i]`` given out.

    >>> from otel_reliability.expectations import OneOf
    >>> lcs(["plan", "news", "weather", "write"], ["plan", ["weather", "news"], OneOf(one_of=["write", "draft"])])
    (4, 4)
    """
    count = len(names)
    best = [(0, 0)] * (count + 1)
    for step in steps:
        options = [Counter(expansion) for expansion in expansions(step)]
        shortest = min(len(e) for e in expansions(step))
        after = [(common, expected - shortest) for common, expected in best]  # the step given an empty stretch
        sizes = [sum(o.values()) for o in options]
        for begin in range(count):
            seen: Counter[str] = Counter()
            shared = [0] * len(options)  # per option, kept as the stretch grows: |seen ∩ option|
            for end in range(begin + 1, count + 1):
                name = names[end - 1]
                seen[name] += 1
                for k, option in enumerate(options):
                    if seen[name] <= option[name]:
                        shared[k] += 1
                    candidate = (best[begin][0] + shared[k], best[begin][1] - sizes[k])
                    if candidate > after[end]:
                        after[end] = candidate
        for i in range(1, count + 1):  # calls left out before the end count for no step
            if after[i - 1] > after[i]:
                after[i] = after[i - 1]
        best = after
    common, negative_expected = best[count]
    return common, -negative_expected


def _scores(common: int, actual: int, expected: int) -> tuple[float, float, float]:
    if actual == 0 and expected == 0:
        return 1.0, 1.0, 1.0
    precision = common / actual if actual else 0.0
    recall = common / expected if expected else 0.0
    f1 = 2 * common / (actual + expected)
    return precision, recall, f1
