"""A failed verdict as expected-against-got, one field at a time (the pytest plugin's assertion text).

One line per differing field, so that pytest's failure report (each line prefixed ``E``)
reads like its own assertion diffs rather than one long repr: which tools were
expected and which ran, and for each failed argument check, which key differed.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.arguments import argument_mode, spec_matches
from otel_reliability.model import OK, Attempt
from otel_reliability.results import RunResult, span_hex, trace_hex

_ABSENT = object()


def verdict_diff(result: RunResult, expectation: Expectation | None = None) -> str:
    """Why a run failed, field by field; ``expectation`` (when known) supplies the expected side.

    >>> from otel_reliability.model import Attempt, Verdict
    >>> got = Attempt("multiply", {"a": 10, "b": 6}, OK, "calc", ("calc",))
    >>> verdict = Verdict("FAILED", "calc", failed_argument_checks=["multiply"], score=0.5, chain=[got])
    >>> expected = Expectation(name="calc", expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}})
    >>> print(verdict_diff(RunResult(1, 2, "calc", "calc", verdict, 0.0), expected))
    ReliabilityEval failed: agent 'calc', expectation 'calc', score 0.50 (trace 00000000000000000000000000000001, run span 0000000000000002)
    arguments of multiply (subset):
      b: expected 5, got 6
    """
    verdict = result.verdict
    lines = [
        f"ReliabilityEval failed: agent {result.agent!r}, expectation {result.expectation!r}, "
        f"score {verdict.score:.2f} (trace {trace_hex(result.trace_id)}, run span {span_hex(result.run_span_id)})"
    ]
    chain = verdict.chain
    if verdict.missing_tool_calls or verdict.failed_tool_calls:
        lines.append("tool calls:")
        if expectation is not None and expectation.expected_tool_calls is not None:
            others = ", others allowed" if expectation.allow_additional_tool_calls else ""
            lines.append(f"  expected:   {expectation.expected_tool_calls!r}{others}")
        lines.append(f"  got:        {_called(chain)!r}")
        if verdict.missing_tool_calls:
            lines.append(f"  missing:    {verdict.missing_tool_calls!r}")
        if verdict.failed_tool_calls:
            lines.append(f"  unexpected: {verdict.failed_tool_calls!r}")
    for tool in verdict.failed_argument_checks:
        lines += _argument_lines(tool, chain, expectation)
    if verdict.order_violations:
        heading = f"order ({expectation.order})" if expectation is not None else "order"
        lines.append(f"{heading}:")
        if expectation is not None and expectation.expected_chain is not None:
            lines.append(f"  expected: {expectation.expected_chain!r}")
        lines.append(f"  got:      {[a.tool for a in chain if a.tool]!r}")
        lines += [f"  - {violation}" for violation in verdict.order_violations]
    if verdict.policy_violations:
        lines.append("policies:")
        lines += [f"  - {violation}" for violation in verdict.policy_violations]
    if verdict.unevaluated_checks:
        lines.append("not evaluated:")
        lines += [f"  - {reason}" for reason in verdict.unevaluated_checks]
    for label, names in (
        ("errored", verdict.errored_tool_calls),
        ("refused", verdict.refused_tool_calls),
        ("pending", verdict.pending_tool_calls),
    ):
        if names:
            lines.append(f"{label}: {names!r}")
    return "\n".join(lines)


def _called(chain: Sequence[Attempt]) -> list[str]:
    """The run's calls in start order, outcome noted where it was not ``ok``."""
    return [a.tool if a.outcome == OK else f"{a.tool} ({a.outcome})" for a in chain if a.tool]


def argument_summary(tool: str, chain: Sequence[Attempt], expectation: Expectation | None, limit: int = 40) -> str:
    """A failed argument check in one line, each value's repr cut to ``limit`` characters
    (the ``eval`` table's reason).

    >>> got = Attempt("multiply", {"a": 10, "b": 6, "note": "x" * 60}, OK, "calc", ("calc",))
    >>> expected = Expectation(name="calc", expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}})
    >>> argument_summary("multiply", [got], expected)
    'multiply (subset): b: expected 5, got 6'
    >>> argument_summary("multiply", [got], None, limit=20)
    "multiply: got: [{'a': 10, 'b': 6, …"
    """
    heading, *details = _argument_lines(tool, chain, expectation, lambda value: _cut(repr(value), limit))
    return heading.removeprefix("arguments of ").removesuffix(":") + ": " + "; ".join(line.strip() for line in details)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _argument_lines(
    tool: str, chain: Sequence[Attempt], expectation: Expectation | None, show: Callable[[Any], str] = repr
) -> list[str]:
    calls = [a.arguments for a in chain if a.tool == tool and a.outcome == OK]
    specs = (expectation.expected_tool_call_arguments or {}).get(tool) if expectation is not None else None
    if expectation is None or specs is None:
        return [f"arguments of {tool}:", f"  got: {show(calls)}"]
    mode = argument_mode(expectation, tool)
    lines = [f"arguments of {tool} ({mode}):"]
    if not calls:
        return lines + [f"  expected: {show(specs)}", "  got:      no clean call"]
    for spec in specs if isinstance(specs, list) else [specs]:
        if any(spec_matches(spec, call, mode) for call in calls):
            continue  # of several specs, only those no call satisfies
        for number, call in enumerate(calls, start=1):
            where = f"call {number} of {len(calls)}: " if len(calls) > 1 else ""
            if mode == "bfcl":  # each value is a list of allowed values: key diffs would mislead
                lines += [f"  {where}expected: {show(spec)}", f"  {where}got:      {show(call)}"]
            else:
                lines += [f"  {where}{line}" for line in _key_diff(spec, call, exact=mode == "exact", show=show)]
    return lines


def _key_diff(
    spec: Mapping[str, Any], call: Mapping[str, Any], *, exact: bool, show: Callable[[Any], str] = repr
) -> list[str]:
    lines = []
    for key, wanted in spec.items():
        value = call.get(key, _ABSENT)
        if value is _ABSENT:
            lines.append(f"{key}: expected {show(wanted)}, got nothing")
        elif value != wanted:
            lines.append(f"{key}: expected {show(wanted)}, got {show(value)}")
    if exact:
        lines += [f"{key}: not expected, got {show(value)}" for key, value in call.items() if key not in spec]
    return lines
