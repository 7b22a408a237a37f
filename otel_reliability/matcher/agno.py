"""Agno ReliabilityEval (>= 2.8.0) parity: the name and argument lists of SPEC §5.1.

Agno reads two kinds of evidence; here both are attempts of the run:

- **executions** — attempts with outcome ``ok``, ``error`` or ``pending`` (Agno's
  ``ToolExecution``: clean, errored, or paused for a human), one entry each, in
  evidence order (depth-first pre-order over the run and its members);
- **request-only names** — names of ``refused`` attempts (the model asked, the tool
  never ran) that have no execution under that name anywhere in the run.

Beyond Agno (SPEC §5.2, not evaluable): an argument check that no call satisfies while
one of the tool's clean calls has no captured arguments (``Attempt.arguments_captured``)
is neither passed nor failed but unevaluated; Agno always has the arguments, so its
results are unchanged.

Every list, its order and every string equal what Agno would report for the same
evidence; ``corpus/`` and the conformance cases pin this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.arguments import argument_mode, spec_matches
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.model import OK, REFUSED, Attempt

ATTEMPTED_ANNOTATION = "(requested but refused/errored — execution matching, new in 2.8.0)"
"""Appended (after one space) to a missing expected name that was attempted but never ran cleanly."""


@dataclass(slots=True)
class AgnoResult:
    """Agno's six result lists, plus how many attempts were judged against the expected names."""

    failed_tool_calls: list[str] = field(default_factory=list)
    passed_tool_calls: list[str] = field(default_factory=list)
    additional_tool_calls: list[str] = field(default_factory=list)
    missing_tool_calls: list[str] = field(default_factory=list)
    failed_argument_checks: list[str] = field(default_factory=list)
    passed_argument_checks: list[str] = field(default_factory=list)
    judged_attempts: int = 0
    # argument checks no captured call satisfied while some call's arguments were not captured
    unevaluated_argument_checks: list[str] = field(default_factory=list)


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    """Agno's lists as checks: each expected name, each judged attempt, each argument spec."""
    result = judge(attempts.evidence, expectation)
    return CheckResult(
        checks=len(expectation.expected_tool_calls or ())
        + result.judged_attempts
        + len(result.passed_argument_checks)
        + len(result.failed_argument_checks),
        failed=len(result.missing_tool_calls) + len(result.failed_tool_calls) + len(result.failed_argument_checks),
        lists={
            "failed_tool_calls": result.failed_tool_calls,
            "passed_tool_calls": result.passed_tool_calls,
            "additional_tool_calls": result.additional_tool_calls,
            "missing_tool_calls": result.missing_tool_calls,
            "failed_argument_checks": result.failed_argument_checks,
            "passed_argument_checks": result.passed_argument_checks,
        },
        unevaluated=[unevaluated_arguments(tool) for tool in result.unevaluated_argument_checks],
    )


def unevaluated_arguments(tool: str) -> str:
    """Why an argument check of ``tool`` could not be judged.

    >>> unevaluated_arguments("multiply")
    'arguments of multiply not captured: enable content capture'
    """
    return f"arguments of {tool} not captured: enable content capture"


def judge(evidence: Sequence[Attempt], expectation: Expectation) -> AgnoResult:
    """Classify the run's evidence exactly as Agno's ReliabilityEval does.

    ``evidence`` is ``Run.evidence()``: attempts in depth-first pre-order. Argument
    specs are compared in the mode ``arguments.argument_mode`` picks, which is
    Agno's subset rule unless the expectation says otherwise.
    """
    result = AgnoResult()
    expected = expectation.expected_tool_calls
    # Attempt.executed and Attempt.clean, inlined: this runs for every judged run.
    executions = [a for a in evidence if a.tool and a.outcome != REFUSED]
    for execution in executions:
        if expected is not None and execution.tool not in expected:
            _unexpected(result, execution.tool, expectation.allow_additional_tool_calls)
        elif execution.outcome == OK:
            result.passed_tool_calls.append(execution.tool)
    if expected is None and not expectation.expected_tool_call_arguments:
        return result  # nothing is expected: no names or arguments to check

    executed_names = {a.tool for a in executions}
    clean_names = {a.tool for a in executions if a.outcome == OK}
    request_only_names = sorted({a.tool for a in evidence if a.tool and a.outcome == REFUSED} - executed_names)
    attempted_names = executed_names.union(request_only_names)

    if expected is not None:
        result.judged_attempts = len(executions) + len(request_only_names)
        for name in request_only_names:
            if name not in expected:
                _unexpected(result, name, expectation.allow_additional_tool_calls)

    missing_names: set[str] = set()
    for name in expected or ():
        if name not in clean_names:
            missing_names.add(name)
            result.missing_tool_calls.append(f"{name} {ATTEMPTED_ANNOTATION}" if name in attempted_names else name)

    for tool, specs in (expectation.expected_tool_call_arguments or {}).items():
        if tool in missing_names:
            continue
        clean = [a for a in executions if a.outcome == OK and a.tool == tool]
        calls = [a.arguments for a in clean]
        mode = argument_mode(expectation, tool)
        spec_list = specs if isinstance(specs, list) else [specs]
        if calls and all(any(spec_matches(spec, call, mode) for call in calls) for spec in spec_list):
            result.passed_argument_checks.append(tool)
        elif any(not a.arguments_captured for a in clean):
            # A call whose arguments the spans do not carry might have matched: not a failure.
            result.unevaluated_argument_checks.append(tool)
        else:
            result.failed_argument_checks.append(tool)
    return result


def _unexpected(result: AgnoResult, name: str, lenient: bool) -> None:
    (result.additional_tool_calls if lenient else result.failed_tool_calls).append(name)
