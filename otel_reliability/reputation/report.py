"""Reports in the grading article's layout: score, grade, dimension table, evidence list. Pure — no I/O.

``evaluation_markdown`` renders one evaluation exactly as the article's
``EvaluationReport.to_markdown()`` (in English); ``standing_markdown`` renders an
agent's standing the same way, its evidence list drawn from the whole window with
repeated items counted. ``standings_document`` is the JSON of ``reputation --format
json`` and ``GET /api/v1/reputation``.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from otel_reliability.reputation.evidence import DIMENSIONS, Evidence
from otel_reliability.reputation.scoring import Score
from otel_reliability.reputation.standing import Standing, WindowEntry

PASS_MARK = 60.0
"""A dimension at or above this score reads "pass" in the dimension table (the article's rule).
A dimension without evidence reads "no evidence": it counts as 0 in the overall score
unless the config renormalises."""


def evaluation_markdown(agent: str, task_id: str, scored: Score, evidence: Sequence[Evidence]) -> str:
    """One evaluation's report, as the article prints it.

    >>> from otel_reliability.reputation.scoring import evaluate_evidence
    >>> items = [Evidence("isnad", "tool_audit", True, "tool chain: search -> parse -> compute")]
    >>> print(evaluation_markdown("weather-agent-v1", "task-1", evaluate_evidence(items), items))
    ## Evaluation report: weather-agent-v1
    - Task ID: task-1
    - Overall score: 30.0 / 100
    - Grade: Matruk
    <BLANKLINE>
    | Dimension | Score | Verdict |
    | --- | --- | --- |
    | sidq (factual consistency) | — | no evidence |
    | dabt (stability) | — | no evidence |
    | isnad (chain integrity) | 100.0 | pass |
    | adalah (compliance) | — | no evidence |
    <BLANKLINE>
    ### Evidence
    - [PASS] (isnad) tool_audit: tool chain: search -> parse -> compute
    """
    lines = [
        f"## Evaluation report: {agent}",
        f"- Task ID: {task_id}",
        f"- Overall score: {scored.overall:.1f} / 100",
        f"- Grade: {scored.grade.value}",
        "",
        *_dimension_table(scored.dimensions),
        "",
        "### Evidence",
    ]
    lines += [_evidence_line(item) for item in evidence]
    return "\n".join(lines)


def standing_markdown(standing: Standing, window: Iterable[WindowEntry] = (), *, evidence_limit: int = 20) -> str:
    """An agent's standing: the article's layout over its rolling window.

    The evidence list groups identical items (same dimension, source, outcome and
    detail), newest first, failures before passes, ``(×n)`` when repeated.
    """
    lines = [
        f"## Reputation report: {standing.agent}",
        f"- Window: last {standing.evaluations} evaluations (window {standing.window}; "
        f"{standing.total_evaluations} in all, {standing.passed_evaluations} passed)",
        "- Overall score: — (no evidence in the window yet)" if standing.score is None
        else f"- Overall score: {standing.score:.1f} / 100",
        f"- Grade: {standing.grade_label}",
        "",
        *_dimension_table(standing.dimensions),
        "",
        "### Evidence",
    ]
    grouped: dict[tuple[str, str, bool, str], int] = {}
    for entry in window:  # newest first
        for item in entry.evidence:
            key = (item.dimension, item.source, item.passed, item.detail)
            grouped[key] = grouped.get(key, 0) + 1
    ordered = sorted(grouped.items(), key=lambda kv: kv[0][2])  # stable: failures first, newest first within
    for (dimension, source, passed, detail), count in ordered[:evidence_limit]:
        line = _evidence_line(Evidence(dimension, source, passed, detail))
        lines.append(line + (f" (×{count})" if count > 1 else ""))
    if len(ordered) > evidence_limit:
        lines.append(f"- … and {len(ordered) - evidence_limit} more kinds of evidence")
    if not ordered:
        lines.append("- (no evidence in the window)")
    return "\n".join(lines)


def standings_markdown(reports: Iterable[str]) -> str:
    """Several agents' reports, one after the other."""
    return "# Agent reputation\n\n" + "\n\n".join(reports) + "\n"


def standings_document(standings: Iterable[Standing]) -> dict[str, Any]:
    """``{"standings": [...]}``: each agent's standing as ``Standing.to_json()``, by agent name."""
    return {"standings": [s.to_json() for s in sorted(standings, key=lambda s: s.agent)]}


def _dimension_table(dimensions: dict[str, float | None]) -> list[str]:
    lines = ["| Dimension | Score | Verdict |", "| --- | --- | --- |"]
    for dimension, meaning in DIMENSIONS.items():
        value = dimensions.get(dimension)
        if value is None:
            lines.append(f"| {dimension} ({meaning}) | — | no evidence |")
        else:
            lines.append(f"| {dimension} ({meaning}) | {value:.1f} | {'pass' if value >= PASS_MARK else 'fail'} |")
    return lines


def _evidence_line(item: Evidence) -> str:
    detail = item.detail.replace("\n", " ")
    return f"- [{'PASS' if item.passed else 'FAIL'}] ({item.dimension}) {item.source}: {detail}"
