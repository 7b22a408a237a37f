"""A BFCL score as a five-part report: one group per category, one row per sample."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from otel_reliability.bfcl.score import BfclScore, SampleResult
from otel_reliability.reports.model import GroupRow, Report, SampleRow
from otel_reliability.reports.recommend import bfcl_recommendations

__all__ = ["bfcl_report", "scored_what"]


def bfcl_report(score: BfclScore, *, threshold: float = 0.8, title: str | None = None) -> Report:
    """The report of ``score``; categories below ``threshold`` accuracy are called out. Its
    title says what was scored unless ``title`` is given."""
    groups = [
        GroupRow(c.category, c.correct, c.total, dict(c.error_types.most_common()))
        for c in score.categories
    ]
    failures = Counter(s.error_type or "unknown" for s in score.samples if not s.valid)
    return Report(
        title=title or f"BFCL evaluation report: {scored_what(score)}",
        agent=score.agent,
        group_label="Category",
        unit="sample",
        groups=groups,
        samples=[_row(s) for s in score.samples],
        recommendations=bfcl_recommendations(groups, failures, threshold),
        threshold=threshold,
        generated_at=score.generated_at,
        notes=[f"Judged by otel-reliability's BFCL AST judge, compat mode {score.compat}."],
    )


def scored_what(score: BfclScore) -> str:
    """The agent and the categories a score covers, for titles.

    >>> scored_what(BfclScore("gpt-x", "official", []))
    'gpt-x'
    """
    categories = [c.category for c in score.categories]
    return f"{score.agent} on {', '.join(categories)}" if categories else score.agent


def _row(sample: SampleResult) -> SampleRow:
    return SampleRow(
        id=sample.id,
        group=sample.category,
        question=sample.question,
        prediction=calls_text(sample.prediction),
        expected="no function call" if sample.expected is None else calls_text(sample.expected),
        passed=sample.valid,
        verdict="correct" if sample.valid else (sample.error_type or "wrong"),
    )


def calls_text(calls: Any) -> str:
    """Calls as readable call syntax: ``[{"f": {"a": 1}}]`` → ``f(a=1)``; answers show their allowed values.

    >>> calls_text([{"math.hypot": {"x": 4, "y": 5}}]), calls_text([{"f": {"unit": ["", "cm"]}}])
    ('math.hypot(x=4, y=5)', "f(unit=[omitted | 'cm'])")
    >>> calls_text([]), calls_text("Sorry, I cannot help.")
    ('no function call', 'Sorry, I cannot help.')
    """
    if isinstance(calls, str):
        return calls
    if not isinstance(calls, list):
        return json.dumps(calls, ensure_ascii=False, default=str)
    if not calls:
        return "no function call"
    rendered = []
    for call in calls:
        if not isinstance(call, dict):
            rendered.append(json.dumps(call, ensure_ascii=False, default=str))
            continue
        for name, params in call.items():
            if isinstance(params, dict):
                arguments = ", ".join(f"{key}={_value_text(value)}" for key, value in params.items())
                rendered.append(f"{name}({arguments})")
            else:
                rendered.append(f"{name}({params!r})")
        if not call:
            rendered.append("{}")
    return "; ".join(rendered)


def _value_text(value: Any) -> str:
    """A value; a list containing ``""`` is an answer's allowed values and reads as alternatives."""
    if isinstance(value, list) and "" in value:
        return "[" + " | ".join("omitted" if v == "" else repr(v) for v in value) + "]"
    return repr(value)
