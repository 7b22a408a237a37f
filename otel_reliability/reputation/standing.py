"""An agent's standing over its rolling window, and the entry one evaluation appends. Pure data.

The standing is the article's ``evaluate()`` applied to all the evidence of the
agent's last N evaluations (its "reputation file"): per-dimension sums of the window's
evidence, scored with the configured weights and missing-dimension rule. Besides the
window it counts every evaluation ever applied and how many of their verdicts passed
(the article's ``total_tasks`` and ``pass_tasks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from otel_reliability.reputation.evidence import DIMENSIONS, Evidence
from otel_reliability.reputation.scoring import EMPTY, Grade, MissingRule, Tally, score
from otel_reliability.results import span_hex, trace_hex


@dataclass(slots=True)
class Entry:
    """One evaluation to append to an agent's window.

    ``case`` and ``signature`` ask the store for a stability (``dabt``) item: it compares
    ``signature`` with the one the previous entry of the same agent and case left, inside
    the same transaction, so concurrent writers see each other's signatures in order.
    """

    agent: str
    evidence: tuple[Evidence, ...]
    evaluated_at: float
    trace_id: int | None = None
    run_span_id: int | None = None
    expectation: str | None = None
    passed: bool | None = None  # the verdict's status; None for evidence that came without one
    case: str | None = None
    signature: str | None = None
    # A re-judged run (a late span arrived): replace the entry of the same agent, trace
    # and run span instead of adding one, so that a run counts once.
    supersedes: bool = False


UNRATED = "unrated"
"""The grade label of an agent with no evidence yet (``Standing.grade`` is None)."""


@dataclass(slots=True, frozen=True)
class Standing:
    """Where an agent stands now: score, grade, dimension scores and the window behind them.
    ``score`` and ``grade`` are None while the window holds no evidence (unrated)."""

    agent: str
    score: float | None
    grade: Grade | None
    dimensions: dict[str, float | None]
    tallies: dict[str, Tally]
    evaluations: int  # in the window
    window: int
    total_evaluations: int
    passed_evaluations: int
    updated_at: float
    last_seq: int  # the store's sequence number of the newest evaluation in the window

    @property
    def grade_label(self) -> str:
        """The grade's label, ``unrated`` without evidence.

        >>> standing_from("new", {}, evaluations=1, window=100).grade_label
        'unrated'
        """
        return UNRATED if self.grade is None else self.grade.value

    def to_json(self) -> dict[str, Any]:
        """The standing as ``reputation --format json`` and ``GET /api/v1/reputation`` give it.

        >>> s = standing_from("calc", {"isnad": Tally(1.0, 1.0, 1)}, evaluations=1, window=100)
        >>> s.to_json()["dimensions"]["isnad"], s.to_json()["grade"]
        ({'score': 100.0, 'evidence': 1, 'confidence': 1.0}, 'Matruk')
        """
        return {
            "agent": self.agent,
            "score": self.score,
            "grade": self.grade_label,
            "dimensions": {
                d: {
                    "score": self.dimensions[d],
                    "evidence": self.tallies[d].items,
                    "confidence": round(self.tallies[d].weight, 9),
                }
                for d in DIMENSIONS
            },
            "evaluations": self.evaluations,
            "window": self.window,
            "total_evaluations": self.total_evaluations,
            "passed_evaluations": self.passed_evaluations,
            "updated_at": self.updated_at,
        }


def standing_from(
    agent: str,
    tallies: Mapping[str, Tally],
    *,
    evaluations: int,
    window: int,
    total_evaluations: int = 0,
    passed_evaluations: int = 0,
    updated_at: float = 0.0,
    last_seq: int = 0,
    weights: Mapping[str, float] | None = None,
    missing: MissingRule = "zero",
) -> Standing:
    """Score a window's summed evidence into a ``Standing``."""
    full = {d: tallies.get(d, EMPTY) for d in DIMENSIONS}
    scored = score(full, weights, missing) if weights is not None else score(full, missing=missing)
    rated = any(value is not None for value in scored.dimensions.values())
    return Standing(
        agent=agent,
        score=scored.overall if rated else None,
        grade=scored.grade if rated else None,
        dimensions=scored.dimensions,
        tallies=full,
        evaluations=evaluations,
        window=window,
        total_evaluations=total_evaluations,
        passed_evaluations=passed_evaluations,
        updated_at=updated_at,
        last_seq=last_seq,
    )


@dataclass(slots=True)
class WindowEntry:
    """An evaluation as the store keeps it in the window (for reports)."""

    seq: int
    agent: str
    evaluated_at: float
    evidence: list[Evidence] = field(default_factory=list)
    trace_id: int | None = None
    run_span_id: int | None = None
    expectation: str | None = None
    passed: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "agent": self.agent,
            "evaluated_at": self.evaluated_at,
            "trace_id": None if self.trace_id is None else trace_hex(self.trace_id),
            "run_span_id": None if self.run_span_id is None else span_hex(self.run_span_id),
            "expectation": self.expectation,
            "passed": self.passed,
            "evidence": [e.to_json() for e in self.evidence],
        }
