"""Scores and grades, exactly as the grading article computes them. Pure — no I/O.

- A dimension's score is the confidence-weighted pass rate of its evidence × 100:
  ``Σ confidence·passed / Σ confidence × 100``.
- The overall score weights the dimensions (default ``sidq`` 0.3, ``dabt`` 0.2,
  ``isnad`` 0.3, ``adalah`` 0.2; weights are relative, divided by their sum).
- A dimension with no evidence scores 0 (the article's rule) unless
  ``missing="renormalize"``: then it is left out and the other weights are scaled up.
- Grades: Thiqah ≥ 90, Saduq ≥ 75, Saduq Hadith ≥ 60, Da'if ≥ 40, Matruk below.

Scores are rounded to 9 decimals before grading, so that 0.3·100 + … lands on the
threshold the arithmetic means rather than a hair below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Literal, Mapping

from otel_reliability.reputation.evidence import DIMENSIONS, Evidence

MissingRule = Literal["zero", "renormalize"]

DEFAULT_WEIGHTS: Mapping[str, float] = {"sidq": 0.3, "dabt": 0.2, "isnad": 0.3, "adalah": 0.2}


class Grade(Enum):
    """The article's five grades, best first; the value is the label metrics and reports use."""

    THIQAH = "Thiqah"
    SADUQ = "Saduq"
    SADUQ_HADITH = "Saduq Hadith"
    DAIF = "Da'if"
    MATRUK = "Matruk"

    @property
    def rank(self) -> int:
        """4 for Thiqah down to 0 for Matruk: higher is more trusted.

        >>> Grade.SADUQ.rank > Grade.DAIF.rank
        True
        """
        return _RANKS[self]

    @property
    def floor(self) -> float:
        """The lowest score that earns this grade (Matruk: 0)."""
        return _FLOORS[self]

    @classmethod
    def parse(cls, text: str) -> Grade:
        """A grade from its label, its enum name, or the label without punctuation, any case.

        >>> Grade.parse("saduq_hadith"), Grade.parse("Daif")
        (<Grade.SADUQ_HADITH: 'Saduq Hadith'>, <Grade.DAIF: "Da'if">)
        """
        key = _key(text)
        for grade in cls:
            if key in (_key(grade.value), _key(grade.name)):
                return grade
        raise ValueError(f"unknown grade {text!r} (use one of {', '.join(g.value for g in cls)})")


THRESHOLDS: tuple[tuple[Grade, float], ...] = (
    (Grade.THIQAH, 90.0),
    (Grade.SADUQ, 75.0),
    (Grade.SADUQ_HADITH, 60.0),
    (Grade.DAIF, 40.0),
    (Grade.MATRUK, 0.0),
)
_FLOORS = dict(THRESHOLDS)
_RANKS = {grade: len(THRESHOLDS) - 1 - i for i, (grade, _) in enumerate(THRESHOLDS)}


def _key(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def grade_for(score: float) -> Grade:
    """The grade a score earns.

    >>> [grade_for(s).value for s in (90, 89.9, 75, 60, 40, 39.9)]
    ['Thiqah', 'Saduq', 'Saduq', 'Saduq Hadith', "Da'if", 'Matruk']
    """
    for grade, floor in THRESHOLDS:
        if score >= floor:
            return grade
    return Grade.MATRUK


@dataclass(slots=True, frozen=True)
class Tally:
    """A dimension's evidence summed: ``Σ confidence``, ``Σ confidence of passed items``, item count."""

    weight: float = 0.0
    passed: float = 0.0
    items: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.weight + other.weight, self.passed + other.passed, self.items + other.items)

    @property
    def score(self) -> float | None:
        """The confidence-weighted pass rate × 100, ``None`` without evidence."""
        if self.items == 0 or self.weight <= 0.0:
            return None
        return round(100.0 * self.passed / self.weight, 9)


EMPTY = Tally()


def tally(evidence: Iterable[Evidence]) -> dict[str, Tally]:
    """Sum evidence per dimension (every dimension present, empty ones as ``Tally()``).

    >>> tally([Evidence("sidq", "fact_check", True, "", 0.9), Evidence("sidq", "judge", False, "", 0.7)])["sidq"]
    Tally(weight=1.6, passed=0.9, items=2)
    """
    sums = {d: [0.0, 0.0, 0] for d in DIMENSIONS}
    for item in evidence:
        entry = sums[item.dimension]
        entry[0] += item.confidence
        if item.passed:
            entry[1] += item.confidence
        entry[2] += 1
    return {d: Tally(w, p, int(n)) for d, (w, p, n) in sums.items()}


@dataclass(slots=True, frozen=True)
class Score:
    """Dimension scores (``None``: no evidence), the weighted overall score, and its grade."""

    dimensions: dict[str, float | None]
    overall: float
    grade: Grade


def score(
    tallies: Mapping[str, Tally],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    missing: MissingRule = "zero",
) -> Score:
    """Score summed evidence.

    >>> s = score(tally([Evidence("isnad", "tool_audit", True, ""), Evidence("adalah", "policy", True, "")]))
    >>> s.overall, s.grade.value
    (50.0, "Da'if")
    >>> score(tally([Evidence("isnad", "tool_audit", True, "")]), missing="renormalize").overall
    100.0
    """
    dimensions = {d: tallies.get(d, EMPTY).score for d in DIMENSIONS}
    total_weight = 0.0
    weighted = 0.0
    for dimension in DIMENSIONS:
        weight = float(weights.get(dimension, 0.0))
        value = dimensions[dimension]
        if value is None and missing == "renormalize":
            continue
        total_weight += weight
        weighted += weight * (value or 0.0)
    overall = round(weighted / total_weight, 9) if total_weight > 0 else 0.0
    return Score(dimensions, overall, grade_for(overall))


def evaluate_evidence(
    evidence: Iterable[Evidence],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    missing: MissingRule = "zero",
) -> Score:
    """The article's ``ReliabilityEvaluator.evaluate()``: evidence in, scores and grade out.

    The article's worked example — four passing items, one per dimension:

    >>> example = [
    ...     Evidence("sidq", "fact_check", True, "final answer agrees with the fact source", 0.9),
    ...     Evidence("isnad", "tool_audit", True, "tool chain: search -> parse -> compute", 1.0),
    ...     Evidence("dabt", "reproducibility", True, "two runs gave the same answer", 0.8),
    ...     Evidence("adalah", "policy_audit", True, "no unauthorised tool, no private data", 1.0),
    ... ]
    >>> s = evaluate_evidence(example)
    >>> s.overall, s.grade.value
    (100.0, 'Thiqah')
    """
    return score(tally(evidence), weights, missing)
