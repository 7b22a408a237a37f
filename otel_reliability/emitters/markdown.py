"""Verdicts as a Markdown table, for CI job summaries and pull-request comments."""

from __future__ import annotations

from typing import Iterable

from ..results import PROBLEM_LISTS, RunResult, trace_hex


def results_markdown(results: Iterable[RunResult]) -> str:
    """One row per run, then the totals.

    >>> print(results_markdown([]).splitlines()[0])
    # Tool-call reliability
    """
    results = list(results)
    passed = sum(r.passed for r in results)
    not_evaluated = sum(not (r.passed or r.failed) for r in results)
    lines = [
        "# Tool-call reliability",
        "",
        f"{passed} of {len(results)} runs passed." + (f" {not_evaluated} not evaluated." if not_evaluated else ""),
        "",
        "| trace | agent | expectation | status | score | tool calls | problems |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        verdict = result.verdict
        problems = "; ".join(
            [f"{label}: {', '.join(getattr(verdict, field))}" for label, field in PROBLEM_LISTS if getattr(verdict, field)]
            + [f"not evaluated: {reason}" for reason in verdict.unevaluated_checks]
        )
        calls = ", ".join(f"{a.tool} ({a.outcome})" for a in verdict.chain)
        cells = [trace_hex(result.trace_id), result.agent, result.expectation, verdict.eval_status, f"{verdict.score:.2f}", calls, problems]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or " "
