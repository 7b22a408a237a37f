"""Partial credit beside the verdict (SPEC §5.2): ``trajectory`` = precision, recall and F1 of
the clean calls' names against ``expected_tool_calls`` as multisets, and ``lcs_f1`` against
``expected_chain`` (groups and ``one_of`` alternatives included) — while Agno's lists and
``eval_status`` stay exactly what they were."""

from __future__ import annotations

import random

import pytest

from otel_reliability.expectations import Expectation, OneOf
from otel_reliability.matcher import evaluate
from otel_reliability.matcher.trajectory import lcs
from otel_reliability.model import Trajectory

from .test_matcher_beyond_agno import AGNO_FIELDS, chain_of


def expect(**fields) -> Expectation:
    return Expectation(name="case", **fields)


def near(value: float | None):
    return None if value is None else pytest.approx(value)


MULTISET = [
    # (calls, expected_tool_calls, precision, recall, f1)
    pytest.param("search summarize", ["search", "summarize"], 1.0, 1.0, 1.0, id="exact-match"),
    # Greedy double counting would let the one search meet both expected ones (recall 1.0):
    # one call meets one expectation, so only two of three are met, and one summarize is spare.
    pytest.param("search summarize summarize", ["search", "search", "summarize"], 2 / 3, 2 / 3, 2 / 3,
                 id="repeated-tools-one-to-one"),
    pytest.param("search search search", ["search"], 1 / 3, 1.0, 0.5, id="one-expected-three-made"),
    pytest.param("search:error search", ["search"], 1.0, 1.0, 1.0, id="errored-try-then-clean-retry"),
    pytest.param("search:error", ["search"], 0.0, 0.0, 0.0, id="only-an-errored-call-earns-nothing"),
    pytest.param("search delete:refused", ["search"], 1.0, 1.0, 1.0, id="refused-attempt-is-not-a-clean-call"),
    pytest.param("", ["search"], 0.0, 0.0, 0.0, id="no-call-when-one-was-expected"),
    pytest.param("search", [], 0.0, 0.0, 0.0, id="a-call-when-none-was-expected"),
    pytest.param("", [], 1.0, 1.0, 1.0, id="nothing-expected-nothing-made"),
    pytest.param("fetch parse", ["fetch", "summarize"], 0.5, 0.5, 0.5, id="one-of-two-right"),
]


@pytest.mark.parametrize(("calls", "expected", "precision", "recall", "f1"), MULTISET)
def test_trajectory_scores_the_clean_calls_against_the_expected_multiset(calls, expected, precision, recall, f1):
    verdict = evaluate(chain_of(calls), expect(expected_tool_calls=expected))
    assert verdict.trajectory == Trajectory(near(precision), near(recall), near(f1), None)


def test_member_runs_clean_calls_count():
    from .test_matcher_beyond_agno import run_of

    team = run_of("plan", members=(run_of("search", agent="researcher"),), agent="lead")
    verdict = evaluate(team, expect(expected_tool_calls=["plan", "search"]))
    assert (verdict.trajectory.precision, verdict.trajectory.recall) == (1.0, 1.0)


LCS = [
    # (calls, expected_chain, lcs_f1)
    pytest.param("search parse summarize", ["search", "parse", "summarize"], 1.0, id="same-sequence"),
    pytest.param("search summarize parse", ["search", "parse", "summarize"], 2 / 3, id="two-in-order-of-three"),
    pytest.param("summarize parse search", ["search", "parse", "summarize"], 1 / 3, id="reversed"),
    pytest.param("plan news weather write", ["plan", ["weather", "news"], "write"], 1.0, id="group-in-any-order"),
    pytest.param("plan weather write news", ["plan", ["weather", "news"], "write"], 0.75,
                 id="group-member-after-the-next-step"),
    pytest.param("plan search_docs write", ["plan", OneOf(one_of=["search_web", "search_docs"]), "write"], 1.0,
                 id="one-of-takes-the-alternative-made"),
    # The longer alternative matches more calls, so it is the one taken (4 of 4 expected).
    pytest.param("plan fetch parse write",
                 ["plan", OneOf(one_of=["search_web", ["fetch", "parse"]]), "write"], 1.0, id="one-of-a-group"),
    # Nothing of the alternatives was made: the shorter one (1 expected call) is counted.
    pytest.param("plan write", ["plan", OneOf(one_of=[["fetch", "parse"], "search_web"]), "write"], 0.8,
                 id="one-of-nothing-made-counts-the-shortest"),
    pytest.param("fetch ocr", [["fetch", OneOf(one_of=["parse", "ocr"])]], 1.0, id="group-holding-a-one-of"),
    pytest.param("search:error parse", ["search", "parse"], 2 / 3, id="errored-call-is-not-clean"),
    pytest.param("", [], 1.0, id="empty-chain-no-calls"),
    pytest.param("search", [], 0.0, id="empty-chain-a-call"),
]


@pytest.mark.parametrize(("calls", "chain", "lcs_f1"), LCS)
def test_lcs_f1_aligns_clean_calls_with_the_chain(calls, chain, lcs_f1):
    verdict = evaluate(chain_of(calls), expect(expected_chain=chain))
    assert verdict.trajectory == Trajectory(None, None, None, pytest.approx(lcs_f1))


def test_with_plain_names_lcs_is_the_textbook_longest_common_subsequence():
    def textbook(a, b):
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
        return table[-1][-1]

    rng = random.Random(15)
    for _ in range(300):
        calls = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        chain = [rng.choice("abcd") for _ in range(rng.randint(0, 6))]
        assert lcs(calls, chain) == (textbook(calls, chain), len(chain)), (calls, chain)


def test_no_trajectory_without_expected_calls_or_chain():
    verdict = evaluate(chain_of("search"), expect(fail_on=["error"]))
    assert verdict.trajectory is None


def test_both_lists_give_all_four_values():
    verdict = evaluate(chain_of("search parse"), expect(expected_tool_calls=["search"], expected_chain=["search", "parse"]))
    assert verdict.trajectory == Trajectory(0.5, 1.0, pytest.approx(2 / 3), 1.0)


@pytest.mark.parametrize("calls", ["search summarize summarize", "search:error", "", "fetch parse extra"])
def test_partial_credit_leaves_agno_fields_and_status_unchanged(calls):
    # The same run judged with and without a chain: only trajectory.lcs_f1 may differ.
    names = ["search", "search", "summarize"]
    plain = evaluate(chain_of(calls), expect(expected_tool_calls=names))
    with_chain = evaluate(chain_of(calls), expect(expected_tool_calls=names, expected_chain=names))
    assert [getattr(with_chain, f) for f in AGNO_FIELDS] == [getattr(plain, f) for f in AGNO_FIELDS]
    assert plain.eval_status in ("PASSED", "FAILED")
