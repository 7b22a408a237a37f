"""Verdicts from the processor or the receiver as a five-part report: one group per expectation."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.steps import describe
from otel_reliability.model import Verdict
from otel_reliability.results import PROBLEM_LISTS, RunResult, span_hex, trace_hex
from otel_reliability.reports.model import GroupRow, Report, SampleRow, partial_credit_text
from otel_reliability.reports.recommend import verdict_recommendations

__all__ = ["verdict_report"]


def verdict_report(
    results: Iterable[RunResult],
    *,
    agent: str | None = None,
    expectations: Iterable[Expectation] = (),
    threshold: float = 0.8,
    title: str = "Tool-call reliability report",
) -> Report:
    """The report of a set of run verdicts; ``agent`` defaults to the agents the runs name.

    With the ``expectations`` that judged them, the "expected" column shows each
    one's expected tool calls and arguments; without, the tools the verdict names.
    """
    results = list(results)
    by_name = {e.name: e for e in expectations}
    groups: dict[str, GroupRow] = {}
    problems: Counter[tuple[str, str]] = Counter()  # (label, tool or sentence) → runs
    outcomes: Counter[str] = Counter()
    for result in results:
        group = groups.setdefault(result.expectation, GroupRow(result.expectation, 0, 0))
        group.total += 1
        if result.passed:
            group.correct += 1
        explained = False
        for label, field_name in PROBLEM_LISTS:
            entries = getattr(result.verdict, field_name)
            if entries:
                explained = True
                group.failures[label] = group.failures.get(label, 0) + 1
            for entry in dict.fromkeys(entries):
                problems[label, entry] += 1
        if result.verdict.unevaluated_checks and not result.failed:
            explained = True
            group.failures["not evaluated"] = group.failures.get("not evaluated", 0) + 1
        if not result.passed and not explained:  # e.g. read from eval JSON, which leaves policy_violations out
            group.failures["reason not recorded"] = group.failures.get("reason not recorded", 0) + 1
        for attempt in result.verdict.chain:
            outcomes[attempt.outcome] += 1
    credit: dict[str, dict[str, list[float]]] = {}  # expectation → measure → the runs' values
    for result in results:
        for name, value in _partial_credit(result.verdict).items():
            credit.setdefault(result.expectation, {}).setdefault(name, []).append(value)
    for group in groups.values():
        group.failures = dict(sorted(group.failures.items(), key=lambda kv: -kv[1]))
        group.partial_credit = {name: sum(v) / len(v) for name, v in credit.get(group.name, {}).items()}
    agents = sorted({r.agent for r in results})
    return Report(
        title=title,
        agent=agent or (", ".join(agents) if agents else "unknown"),
        group_label="Expectation",
        unit="run",
        groups=list(groups.values()),
        samples=[_row(r, by_name.get(r.expectation)) for r in results],
        recommendations=verdict_recommendations(list(groups.values()), problems, outcomes, threshold),
        threshold=threshold,
        notes=[f"Tool calls judged: {sum(outcomes.values())} ({', '.join(f'{n} {o}' for o, n in outcomes.most_common())})."]
        if outcomes else [],
    )


def _row(result: RunResult, expectation: Expectation | None) -> SampleRow:
    verdict = result.verdict
    calls = "; ".join(
        f"{a.tool}({', '.join(f'{k}={v!r}' for k, v in a.arguments.items())})" + ("" if a.outcome == "ok" else f" [{a.outcome}]")
        for a in verdict.chain
    )
    if expectation is not None:
        expected_text = _expected_text(expectation)
    else:
        named = sorted(set(verdict.passed_tool_calls) | {m.split(" ", 1)[0] for m in verdict.missing_tool_calls})
        expected_text = ", ".join(named) if named else "no specific tool"
    reasons = [
        f"{label}: {', '.join(dict.fromkeys(getattr(verdict, field_name)))}"
        for label, field_name in PROBLEM_LISTS
        if getattr(verdict, field_name)
    ]
    return SampleRow(
        id=f"{trace_hex(result.trace_id)}/{span_hex(result.run_span_id)}",
        group=result.expectation,
        question=f"run of {result.agent}",
        prediction=calls or "no tool call",
        expected=expected_text,
        passed=result.passed,
        verdict="passed" if result.passed else "; ".join(reasons) or _unjudged(verdict) or "failed",
        partial_credit=partial_credit_text(measures) if (measures := _partial_credit(verdict)) else "",
    )


def _partial_credit(verdict: Verdict) -> dict[str, float]:
    """The run's trajectory measures the report shows: F1 and LCS-F1, those measured."""
    trajectory = verdict.trajectory
    if trajectory is None:
        return {}
    measures = {"F1": trajectory.f1, "LCS-F1": trajectory.lcs_f1}
    return {name: value for name, value in measures.items() if value is not None}


def _unjudged(verdict: Verdict) -> str:
    """A ``NOT_EVALUATED`` run's reasons; empty for the others."""
    return f"not evaluated: {'; '.join(verdict.unevaluated_checks)}" if not verdict.failed and verdict.unevaluated_checks else ""


def _expected_text(expectation: Expectation) -> str:
    parts = []
    if expectation.expected_tool_calls is not None:
        parts.append(", ".join(expectation.expected_tool_calls) or "no tool call")
    for tool, specs in (expectation.expected_tool_call_arguments or {}).items():
        for spec in specs if isinstance(specs, list) else [specs]:
            parts.append(f"{tool}({', '.join(f'{k}={v!r}' for k, v in spec.items())})")
    if expectation.expected_chain is not None:
        parts.append(f"order {expectation.order}: {' → '.join(map(describe, expectation.expected_chain)) or 'no call'}")
    for label, value in (("allowed", expectation.allowed_tools), ("forbidden", expectation.forbidden_tools)):
        if value is not None:
            parts.append(f"{label}: {', '.join(value) or 'none'}")
    for label, limit in (
        ("max_tool_calls", expectation.max_tool_calls),
        ("max_errors", expectation.max_errors),
        ("max_model_calls", expectation.max_model_calls),
        ("max_total_tokens", expectation.max_total_tokens),
        ("max_duration_ms", expectation.max_duration_ms),
        ("max_repeated_calls", expectation.max_repeated_calls),
    ):
        if limit is not None:
            parts.append(f"{label} {limit}")
    if expectation.fail_on:
        parts.append(f"fail on {', '.join(expectation.fail_on)}")
    return "; ".join(parts) or "no specific checks"
