"""Agreement with the official checker on cases built from the real, installed ``bfcl-eval`` dataset.

Every entry of every supported category gets two valid answers (the first allowed
values; random allowed values) and eight mutations of one (a name, a parameter, a
value, the calls' order, count or shape). ``compat="official"`` must give the official
checker's verdict and error type on every one of them.
"""

from __future__ import annotations

from collections import Counter

import pytest

from otel_reliability.bfcl.cases import dataset_cases
from otel_reliability.bfcl.dataset import CATEGORIES, load_category
from otel_reliability.matcher.bfcl.judge import judge

pytest.importorskip("bfcl_eval", reason="the official checker: pip install --no-deps bfcl-eval==2026.3.23 (see otel_reliability/bfcl/official.py)")

SEED = 20260323
MUTATIONS = 8


@pytest.fixture(scope="module")
def official():
    from otel_reliability.bfcl.official import official_judge

    return official_judge()


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_verdict_on_dataset_cases_equals_the_official_checker(category, official):
    cases = dataset_cases(load_category(category), seed=SEED, mutations=MUTATIONS)
    disagreements = []
    outcomes: Counter[bool] = Counter()
    for variant, case in cases:
        ours, theirs = judge(case), official(case)
        outcomes[theirs.valid] += 1
        if (ours.valid, ours.error_type) != (theirs.valid, theirs.error_type):
            disagreements.append((case.id, variant, ours.error_type, theirs.error_type))
    assert disagreements == []
    assert outcomes[True] and outcomes[False], "the cases must exercise both verdicts"


@pytest.mark.parametrize("category", [c for c in CATEGORIES if "relevance" not in c])
def test_strict_mode_accepts_every_valid_answer_the_official_checker_accepts(category):
    for variant, case in dataset_cases(load_category(category), seed=SEED, mutations=0):
        if judge(case).valid:
            assert judge(case, "strict").valid, (case.id, variant)


def test_strict_mode_accepts_java_string_arrays_the_official_checker_rejects():
    cases = [case for _, case in dataset_cases(load_category("simple_java"), seed=SEED, mutations=0)]
    rescued = [c.id for c in cases if not judge(c).valid and judge(c, "strict").valid]
    assert rescued and all("String[]" in str(c.candidate) for c in cases if c.id in rescued)
