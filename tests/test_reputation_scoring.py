"""Scoring and grading as the grading article defines them: scenario tables of evidence → score → grade.

Covers the article's worked example (four passing items → 100, Thiqah; break one
dimension and the grade falls), the grade thresholds, the weights, confidence
weighting, the missing-dimension rule, and the Markdown report layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from pydantic import ValidationError

from otel_reliability.reputation import Evidence, Grade, ReputationConfig, evaluate_evidence, evaluation_markdown, grade_for


def items(dimension: str, passed: int, failed: int = 0, confidence: float = 1.0) -> list[Evidence]:
    return [Evidence(dimension, "test", True, "ok", confidence)] * passed + [
        Evidence(dimension, "test", False, "broken", confidence)
    ] * failed


# -- the article's worked example ----------------------------------------------------


def worked_example(broken: str | None = None) -> list[Evidence]:
    """The weather agent's four items (section 4.5), with one dimension's item failing if asked."""
    return [
        Evidence("sidq", "fact_check", broken != "sidq", "final answer agrees with the external fact source", 0.9),
        Evidence("isnad", "tool_audit", broken != "isnad", "tool chain: search - parse - compute", 1.0),
        Evidence("dabt", "reproducibility", broken != "dabt", "two runs gave the same answer", 0.8),
        Evidence("adalah", "policy_audit", broken != "adalah", "no unauthorised tool, no private data", 1.0),
    ]


@pytest.mark.parametrize(
    ("broken", "overall", "grade"),
    [
        (None, 100.0, Grade.THIQAH),
        ("sidq", 70.0, Grade.SADUQ_HADITH),
        ("isnad", 70.0, Grade.SADUQ_HADITH),
        ("dabt", 80.0, Grade.SADUQ),
        ("adalah", 80.0, Grade.SADUQ),
    ],
    ids=["all_four_pass_is_thiqah", "broken_facts", "broken_chain", "unstable", "non_compliant"],
)
def test_worked_example_breaking_one_dimension_lowers_the_grade(broken, overall, grade):
    scored = evaluate_evidence(worked_example(broken))
    assert (scored.overall, scored.grade) == (overall, grade)
    for dimension, value in scored.dimensions.items():
        assert value == (0.0 if dimension == broken else 100.0)


def test_worked_example_report_has_the_articles_layout():
    evidence = worked_example()
    report = evaluation_markdown("weather-agent-v1", "task-20240614-001", evaluate_evidence(evidence), evidence)
    assert report == "\n".join(
        [
            "## Evaluation report: weather-agent-v1",
            "- Task ID: task-20240614-001",
            "- Overall score: 100.0 / 100",
            "- Grade: Thiqah",
            "",
            "| Dimension | Score | Verdict |",
            "| --- | --- | --- |",
            "| sidq (factual consistency) | 100.0 | pass |",
            "| dabt (stability) | 100.0 | pass |",
            "| isnad (chain integrity) | 100.0 | pass |",
            "| adalah (compliance) | 100.0 | pass |",
            "",
            "### Evidence",
            "- [PASS] (sidq) fact_check: final answer agrees with the external fact source",
            "- [PASS] (isnad) tool_audit: tool chain: search - parse - compute",
            "- [PASS] (dabt) reproducibility: two runs gave the same answer",
            "- [PASS] (adalah) policy_audit: no unauthorised tool, no private data",
        ]
    )


def test_report_marks_a_dimension_below_sixty_as_failing():
    evidence = items("sidq", 1, 1) + items("isnad", 3) + items("dabt", 3, 1) + items("adalah", 1)
    report = evaluation_markdown("a", "t", evaluate_evidence(evidence), evidence)
    assert "| sidq (factual consistency) | 50.0 | fail |" in report
    assert "| dabt (stability) | 75.0 | pass |" in report
    assert "- [FAIL] (sidq) test: broken" in report


# -- thresholds -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "grade"),
    [
        (100.0, Grade.THIQAH),
        (90.0, Grade.THIQAH),
        (89.999, Grade.SADUQ),
        (75.0, Grade.SADUQ),
        (74.999, Grade.SADUQ_HADITH),
        (60.0, Grade.SADUQ_HADITH),
        (59.999, Grade.DAIF),
        (40.0, Grade.DAIF),
        (39.999, Grade.MATRUK),
        (0.0, Grade.MATRUK),
    ],
)
def test_grade_thresholds(score, grade):
    assert grade_for(score) is grade


@dataclass(frozen=True)
class Case:
    id: str
    evidence: list[Evidence]
    overall: float
    grade: Grade
    config: dict = field(default_factory=dict)


FULL = items("sidq", 1) + items("dabt", 1) + items("isnad", 1) + items("adalah", 1)

THRESHOLD_CASES = [
    # Scores that land exactly on a threshold through floating-point weights.
    Case("isnad_two_thirds_lands_on_90", items("sidq", 1) + items("dabt", 1) + items("isnad", 2, 1) + items("adalah", 1), 90.0, Grade.THIQAH),
    Case("no_compliance_and_shaky_stability_lands_on_75", items("sidq", 1) + items("dabt", 3, 1) + items("isnad", 1) + items("adalah", 0, 1), 75.0, Grade.SADUQ),
    Case("no_facts_half_compliant_lands_on_60", items("sidq", 0, 1) + items("dabt", 1) + items("isnad", 1) + items("adalah", 1, 1), 60.0, Grade.SADUQ_HADITH),
    Case("facts_and_chain_broken_lands_on_40", items("sidq", 0, 1) + items("dabt", 1) + items("isnad", 0, 1) + items("adalah", 1), 40.0, Grade.DAIF),
    Case("one_more_lapse_is_matruk", items("sidq", 0, 1) + items("dabt", 1) + items("isnad", 0, 1) + items("adalah", 19, 1), 39.0, Grade.MATRUK),
]


@pytest.mark.parametrize("case", THRESHOLD_CASES, ids=[c.id for c in THRESHOLD_CASES])
def test_evidence_on_a_threshold_earns_the_higher_grade(case: Case):
    scored = evaluate_evidence(case.evidence)
    assert (scored.overall, scored.grade) == (case.overall, case.grade)


# -- weights ------------------------------------------------------------------------------

MIXED = items("sidq", 1) + items("dabt", 0, 1) + items("isnad", 1, 1) + items("adalah", 1)  # 100 / 0 / 50 / 100

WEIGHT_CASES = [
    Case("article_weights", MIXED, 0.3 * 100 + 0.2 * 0 + 0.3 * 50 + 0.2 * 100, Grade.SADUQ_HADITH),
    Case("weights_are_relative", MIXED, 65.0, Grade.SADUQ_HADITH, {"weights": {"sidq": 3, "dabt": 2, "isnad": 3, "adalah": 2}}),
    Case("equal_weights", MIXED, 62.5, Grade.SADUQ_HADITH, {"weights": {"sidq": 1, "dabt": 1, "isnad": 1, "adalah": 1}}),
    Case("only_the_chain_counts", MIXED, 50.0, Grade.DAIF, {"weights": {"isnad": 1}}),
    Case("stability_ignored", MIXED, 81.25, Grade.SADUQ, {"weights": {"sidq": 0.3, "dabt": 0, "isnad": 0.3, "adalah": 0.2}}),
]


@pytest.mark.parametrize("case", WEIGHT_CASES, ids=[c.id for c in WEIGHT_CASES])
def test_weights(case: Case):
    config = ReputationConfig(**case.config)
    scored = evaluate_evidence(case.evidence, config.weights, config.missing_dimension)
    assert scored.overall == pytest.approx(case.overall, abs=1e-9)
    assert scored.grade is case.grade


# -- confidence ---------------------------------------------------------------------------

CONFIDENCE_CASES = [
    # (id, sidq items as (passed, confidence), expected sidq score)
    ("one_item_scores_its_outcome_whatever_its_confidence", [(True, 0.9)], 100.0),
    ("equal_confidence_is_a_plain_pass_rate", [(True, 0.7), (False, 0.7)], 50.0),
    ("database_check_outweighs_llm_judge", [(True, 1.0), (False, 0.7)], 100 / 1.7),
    ("llm_judge_outweighed_by_database_check", [(False, 1.0), (True, 0.7)], 70 / 1.7),
    ("three_judges_against_one_fact", [(True, 1.0), (False, 0.7), (False, 0.7), (False, 0.7)], 100 / 3.1),
]


@pytest.mark.parametrize(("id_", "sidq", "expected"), CONFIDENCE_CASES, ids=[c[0] for c in CONFIDENCE_CASES])
def test_confidence_weights_each_item_within_its_dimension(id_, sidq, expected):
    evidence = [Evidence("sidq", "src", passed, "", confidence) for passed, confidence in sidq]
    scored = evaluate_evidence(evidence + items("dabt", 1) + items("isnad", 1) + items("adalah", 1))
    assert scored.dimensions["sidq"] == pytest.approx(expected, abs=1e-9)
    assert scored.overall == pytest.approx(0.3 * expected + 70, abs=1e-9)


@pytest.mark.parametrize("confidence", [0.0, -0.5, 1.5])
def test_confidence_outside_zero_to_one_is_rejected(confidence):
    with pytest.raises(ValueError, match="confidence must be in"):
        Evidence("sidq", "src", True, "", confidence)


# -- the missing-dimension rule -------------------------------------------------------------

MISSING_CASES = [
    Case("complete_evidence_is_the_same_either_way", FULL, 100.0, Grade.THIQAH),
    Case("complete_evidence_is_the_same_either_way_renormalized", FULL, 100.0, Grade.THIQAH, {"missing_dimension": "renormalize"}),
    Case("no_facts_scores_zero_by_default", items("dabt", 1) + items("isnad", 1) + items("adalah", 1), 70.0, Grade.SADUQ_HADITH),
    Case("no_facts_renormalized", items("dabt", 1) + items("isnad", 1) + items("adalah", 1), 100.0, Grade.THIQAH, {"missing_dimension": "renormalize"}),
    Case("chain_and_compliance_only", items("isnad", 1) + items("adalah", 1), 50.0, Grade.DAIF),
    Case("chain_and_compliance_only_renormalized", items("isnad", 1) + items("adalah", 1), 100.0, Grade.THIQAH, {"missing_dimension": "renormalize"}),
    Case("renormalizing_keeps_failures", items("sidq", 0, 1) + items("isnad", 1), 50.0, Grade.DAIF, {"missing_dimension": "renormalize"}),
    Case("no_evidence_at_all", [], 0.0, Grade.MATRUK),
    Case("no_evidence_at_all_renormalized", [], 0.0, Grade.MATRUK, {"missing_dimension": "renormalize"}),
]


@pytest.mark.parametrize("case", MISSING_CASES, ids=[c.id for c in MISSING_CASES])
def test_missing_dimension_rule(case: Case):
    config = ReputationConfig(**case.config)
    scored = evaluate_evidence(case.evidence, config.weights, config.missing_dimension)
    assert (scored.overall, scored.grade) == (case.overall, case.grade)
    present = {e.dimension for e in case.evidence}
    assert {d for d, v in scored.dimensions.items() if v is not None} == present


# -- configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"weights": {"sidq": -0.1, "isnad": 1}}, "must not be negative"),
        ({"weights": {"sidq": 0, "dabt": 0, "isnad": 0, "adalah": 0}}, "at least one weight must be positive"),
        ({"weights": {"honesty": 1}}, "honesty"),
        ({"window": 0}, "greater than or equal to 1"),
        ({"missing_dimension": "ignore"}, "renormalize"),
        ({"evaluator_confidence": 0}, "greater than 0"),
    ],
)
def test_invalid_config_is_rejected(config, message):
    with pytest.raises(ValidationError, match=message):
        ReputationConfig(**config)


def test_config_file_round_trips_weights_and_rule(tmp_path):
    from otel_reliability.reputation import load_config

    path = tmp_path / "reputation.yaml"
    path.write_text("weights: {sidq: 0.4, dabt: 0.1, isnad: 0.4, adalah: 0.1}\nwindow: 20\nmissing_dimension: renormalize\n")
    config = load_config(path)
    assert (config.window, config.missing_dimension, config.weights["sidq"]) == (20, "renormalize", 0.4)
    scored = evaluate_evidence(items("sidq", 1) + items("isnad", 0, 1), config.weights, config.missing_dimension)
    assert scored.overall == 50.0


@pytest.mark.parametrize(
    ("text", "grade"),
    [("Thiqah", Grade.THIQAH), ("saduq hadith", Grade.SADUQ_HADITH), ("SADUQ_HADITH", Grade.SADUQ_HADITH), ("Da'if", Grade.DAIF), ("daif", Grade.DAIF), ("matruk", Grade.MATRUK)],
)
def test_grade_names_parse_in_any_spelling(text, grade):
    assert Grade.parse(text) is grade


def test_unknown_grade_name_is_rejected():
    with pytest.raises(ValueError, match="unknown grade 'trusted'"):
        Grade.parse("trusted")
