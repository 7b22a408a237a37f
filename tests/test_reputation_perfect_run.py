"""What a perfect run scores when sidq and dabt have no evidence: the figures README.md states."""

from __future__ import annotations

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation
from otel_reliability.reputation import Reputation
from otel_reliability.reputation.config import ReputationConfig
from otel_reliability.sources import read_spans

from .corpus import CORPUS
from .receiver_harness import REPO

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"
NAMED = Expectation(name="calc", expected_tool_calls=["multiply"])


def standings_after(runs: int, expectations: list[Expectation], missing: str = "zero"):
    [result] = judge_spans(Engine(expectations), read_spans(SINGLE_TOOL))
    assert result.passed
    reputation = Reputation(":memory:", config=ReputationConfig(missing_dimension=missing), expectations=expectations)
    try:
        standings = []
        for _ in range(runs):
            result.trace_id += 1  # a new run each time, with the same chain
            standings.append(reputation.record(result))
        return [(s.score, s.grade.value) for s in standings]
    finally:
        reputation.close()


@pytest.mark.parametrize(
    ("expectations", "missing", "scores", "readme"),
    [
        pytest.param([], "zero", [(50.0, "Da'if")] * 3, "**50 (Da'if)**", id="default-expectation"),
        pytest.param([NAMED], "zero", [(50.0, "Da'if"), (70.0, "Saduq Hadith"), (70.0, "Saduq Hadith")],
                     "**70 (Saduq Hadith)**", id="named-expectation-gains-dabt"),
        pytest.param([], "renormalize", [(100.0, "Thiqah")] * 3, "**100 (Thiqah)**", id="renormalize"),
    ],
)
def test_a_perfect_run_scores_what_the_readme_says(expectations, missing, scores, readme):
    assert standings_after(3, expectations, missing) == scores
    assert readme in " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
