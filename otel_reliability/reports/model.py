"""What a report says, independent of how it is rendered.

The five parts of the BFCL report article (SPEC §9): overview (agent, groups,
accuracy, correct/total), per-group metrics, per-sample details (id, question,
prediction, expected, verdict), a visualisation, and recommendations. A *group* is
a BFCL category, or an expectation when the report covers verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from otel_reliability.reports.compare import Comparison

__all__ = ["COMPARISON_PART", "GroupRow", "Report", "SampleRow", "PARTS", "partial_credit_text", "plural_label"]

PARTS = (
    ("overview", "Overview"),
    ("metrics", "Metrics"),
    ("samples", "Sample details"),
    ("chart", "Accuracy chart"),
    ("recommendations", "Recommendations"),
)
"""(anchor, heading) of the five parts, in order: both renderers use them."""

COMPARISON_PART = ("comparison", "Compared with the baseline")
"""(anchor, heading) of the part a report has after the five when it has a ``comparison``."""


@dataclass(slots=True)
class GroupRow:
    """One category (or expectation): how many passed, and why the others failed."""

    name: str
    correct: int
    total: int
    failures: dict[str, int] = field(default_factory=dict)  # reason → count, most frequent first
    # runs' partial credit, mean per measure ("F1", "LCS-F1"); empty when no run has any
    partial_credit: dict[str, float] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


@dataclass(slots=True)
class SampleRow:
    """One sample (or run): its id, the request, what the agent did, what was expected, the verdict."""

    id: str
    group: str
    question: str
    prediction: str
    expected: str
    passed: bool
    verdict: str  # "correct", or the reason it failed
    partial_credit: str = ""  # e.g. "F1 0.67, LCS-F1 0.80"; empty when not measured


@dataclass(slots=True)
class Report:
    title: str
    agent: str
    group_label: str  # "Category" or "Expectation"
    unit: str  # "sample" or "run"
    groups: list[GroupRow]
    samples: list[SampleRow]
    recommendations: list[str]
    threshold: float = 0.8
    generated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    notes: list[str] = field(default_factory=list)  # extra overview lines, e.g. the judge mode
    comparison: Comparison | None = None  # against a baseline (``report --baseline``): a sixth part

    @property
    def correct(self) -> int:
        return sum(g.correct for g in self.groups)

    @property
    def total(self) -> int:
        return sum(g.total for g in self.groups)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def plural_label(report: Report) -> str:
    """The group label as the overview writes it: "Category", or "Categories" for several.

    >>> plural_label(Report("t", "a", "Category", "sample", [], [], []))
    'Categories'
    """
    label = report.group_label
    if len(report.groups) == 1:
        return label
    return label[:-1] + "ies" if label.endswith("y") else label + "s"


def partial_credit_text(measures: dict[str, float]) -> str:
    """Partial-credit measures as a cell, ``"—"`` when there are none.

    >>> partial_credit_text({"F1": 2 / 3, "LCS-F1": 0.8}), partial_credit_text({})
    ('F1 0.67, LCS-F1 0.80', '—')
    """
    return ", ".join(f"{name} {value:.2f}" for name, value in measures.items()) or "—"
