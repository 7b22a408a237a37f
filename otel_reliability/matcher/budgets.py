"""Budgets (SPEC §5.2): what a run may consume, measured from its spans.

``measure`` gives every verdict its ``usage`` (the values a dashboard shows with no
budget set); ``check`` judges the budgets an expectation sets, one check each, and
writes a broken one into ``policy_violations`` ("used 12,400 tokens; the budget
(max_total_tokens) is 10,000"). Everything covers the run and its member runs.

- ``max_model_calls``: model calls (a model-call span inside another is the same call).
  A run whose spans record no model call is not evaluated: the model spans are likely
  not instrumented, and 0 would be a guess.
- ``max_total_tokens``: input plus output tokens of those calls, as each convention
  records them (the adapters read them; agent-run spans that repeat the total are not
  counted again). Over budget on the calls that carry usage is a failure whatever the
  others used; within budget while some calls carry none, not evaluated.
- ``max_duration_ms``: the run span's duration (from the first run span of a continued
  run to the last).
- ``max_repeated_calls``: the most attempts, whatever their outcome, of one tool with
  equal arguments (Python ``==``: ``10 == 10.0``). Attempts whose arguments were not
  captured are not compared (the measure is None when no attempt's were); when they
  might hide a repeat, not evaluated.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.model import Attempt, Run, Usage


def measure(run: Run, named: Sequence[Attempt]) -> Usage:
    """The run's usage, members included; ``named`` are its attempts that have a tool name.

    >>> measure(Run(1, 2, "a", "run", 1_000_000, 3_500_000, model_calls=2, tokens=40), []).duration_ms
    2.5
    """
    calls, tokens, untokened = run.model_calls, run.tokens, run.untokened_model_calls
    for member in run.members:  # most runs have none: no generator is made for them
        for part in member.walk():
            calls += part.model_calls
            tokens += part.tokens
            untokened += part.untokened_model_calls
    known = run.start_ns > 0 and run.end_ns >= run.start_ns
    repeats = _repeats(named)
    return Usage(
        model_calls=calls,
        total_tokens=tokens if calls > untokened else None,
        duration_ms=(run.end_ns - run.start_ns) / 1e6 if known else None,
        # unknown when calls were made but none recorded its arguments
        max_repeated_calls=max(repeats.values()) if repeats else (None if named else 0),
        untokened_model_calls=untokened,
    )


# What judging one budget gives: ("broken", sentence), ("held", None) or ("unevaluated", reason).
Judged = tuple[str, str | None]
_HELD: Judged = ("held", None)


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    """One check per budget the expectation sets."""
    judged = [
        judge(attempts, limit)
        for judge, limit in (
            (_model_calls, expectation.max_model_calls),
            (_total_tokens, expectation.max_total_tokens),
            (_duration, expectation.max_duration_ms),
            (_repeated, expectation.max_repeated_calls),
        )
        if limit is not None
    ]
    if not judged:
        return CheckResult()
    broken = [text for state, text in judged if state == "broken" and text is not None]
    return CheckResult(
        checks=sum(state != "unevaluated" for state, _ in judged),
        failed=len(broken),
        lists={"policy_violations": broken},
        unevaluated=[text for state, text in judged if state == "unevaluated" and text is not None],
    )


def _model_calls(attempts: Attempts, limit: float) -> Judged:
    calls = attempts.usage.model_calls
    if calls == 0:
        return ("unevaluated", "max_model_calls not evaluated: the spans record no model calls")
    if calls > limit:
        return ("broken", f"made {_calls(calls)}; the budget (max_model_calls) is {limit:,}")
    return _HELD


def _total_tokens(attempts: Attempts, limit: float) -> Judged:
    usage = attempts.usage
    used = usage.total_tokens
    if used is not None and used > limit:  # over on the calls that carry usage: over, whatever the others used
        return ("broken", f"used {used:,} tokens; the budget (max_total_tokens) is {limit:,}")
    if usage.model_calls == 0:
        return ("unevaluated", "max_total_tokens not evaluated: the spans record no model calls")
    if usage.untokened_model_calls:
        return (
            "unevaluated",
            f"max_total_tokens not evaluated: {usage.untokened_model_calls} of {_calls(usage.model_calls)} "
            "carry no token usage",
        )
    return _HELD


def _duration(attempts: Attempts, limit: float) -> Judged:
    duration = attempts.usage.duration_ms
    if duration is None:
        return ("unevaluated", "max_duration_ms not evaluated: the run span carries no times")
    if duration > limit:
        return ("broken", f"ran for {_ms(duration)} ms; the budget (max_duration_ms) is {_ms(limit)} ms")
    return _HELD


def _repeated(attempts: Attempts, limit: float) -> Judged:
    most = attempts.usage.max_repeated_calls
    if most is not None and most > limit:
        worst = next(tool for (tool, _), n in _repeats(attempts.named).items() if n == most)
        return ("broken", f"called {worst} {most} times with the same arguments; the budget (max_repeated_calls) is {limit:,}")
    # attempts that recorded no arguments may repeat one another, or the others
    blind = Counter(a.tool for a in attempts.named if not a.arguments_captured)
    whole = Counter(a.tool for a in attempts.named)
    hidden = [tool for tool in blind if whole[tool] > limit]
    if hidden:
        return (
            "unevaluated",
            f"max_repeated_calls not evaluated: arguments of {', '.join(hidden)} not captured: enable content capture",
        )
    return _HELD


def _repeats(named: Sequence[Attempt]) -> dict[tuple[str, Hashable], int]:
    """Attempts by (tool, arguments), those whose arguments were captured; a plain dict: this runs for every verdict."""
    counts: dict[tuple[str, Hashable], int] = {}
    for attempt in named:
        if attempt.arguments_captured:
            arguments = attempt.arguments
            try:  # flat arguments, the common case: hashing their items is the test
                frozen: Hashable = frozenset(arguments.items()) if type(arguments) is dict else _frozen(arguments)
            except TypeError:
                frozen = _frozen(arguments)
            key = (attempt.tool, frozen)
            counts[key] = counts.get(key, 0) + 1
    return counts


def _calls(count: int) -> str:
    return f"{count:,} model call" + ("" if count == 1 else "s")


def _ms(value: float) -> str:
    """Milliseconds as written: thousands separated, one decimal only when there is one."""
    text = f"{value:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def _frozen(value: Any) -> Hashable:
    """A hashable stand-in equal exactly when the values are (``==``, so 10 and 10.0 alike)."""
    if isinstance(value, dict):
        try:
            return frozenset(value.items())  # flat arguments, the common case: hashing them is the test
        except TypeError:
            return frozenset((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
