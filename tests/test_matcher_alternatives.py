"""``{one_of: [...]}`` steps in ``expected_chain`` (SPEC §5.2): any one alternative satisfies
the step; an alternative may be a name, a group or another ``one_of``, and a group may hold
``one_of`` items. A broken step names the alternative that came closest."""

from __future__ import annotations

import pytest

from otel_reliability.expectations import Expectation, ExpectationError, load_expectations
from otel_reliability.matcher import evaluate

from .test_matcher_beyond_agno import chain_of

SEARCH = {"one_of": ["search_web", "search_docs"]}


def judged(calls: str, order: str, chain: list) -> list[str]:
    verdict = evaluate(chain_of(calls), Expectation(name="case", order=order, expected_chain=chain))
    assert verdict.failed == bool(verdict.order_violations)
    return verdict.order_violations


EXACT = [
    pytest.param("plan search_docs summarize", ["plan", SEARCH, "summarize"], [], id="second-alternative"),
    pytest.param("plan search_web summarize", ["plan", SEARCH, "summarize"], [], id="first-alternative"),
    pytest.param("plan summarize search_docs", ["plan", SEARCH, "summarize"],
                 ["step 2: expected one of search_web or search_docs (closest: search_docs), got summarize"],
                 id="alternative-made-elsewhere-is-closest"),
    pytest.param("plan summarize", ["plan", SEARCH, "summarize"],
                 ["step 2: expected one of search_web or search_docs, got summarize"], id="no-alternative-made-no-hint"),
    # Alternatives of different lengths: the way through that fits the rest of the chain is found.
    pytest.param("plan fetch parse summarize", ["plan", {"one_of": ["fetch", ["fetch", "parse"]]}, "summarize"], [],
                 id="longer-alternative-when-the-shorter-leaves-a-call"),
    pytest.param("plan fetch summarize", ["plan", {"one_of": [["fetch", "parse"], "fetch"]}, "summarize"], [],
                 id="shorter-alternative-when-the-longer-does-not-fit"),
    pytest.param("plan parse fetch summarize", ["plan", {"one_of": ["search_web", ["fetch", "parse"]]}, "summarize"], [],
                 id="group-alternative-in-any-order"),
    pytest.param("plan fetch summarize", ["plan", {"one_of": ["search_web", ["fetch", "parse"]]}, "summarize"],
                 ["step 2: expected one of search_web or (fetch and parse in any order) "
                  "(closest: fetch and parse in any order), got fetch, summarize"], id="group-alternative-half-made"),
    pytest.param("news search_docs summarize", [["news", SEARCH], "summarize"], [], id="group-holding-a-one-of"),
    pytest.param("search_web news summarize", [["news", SEARCH], "summarize"], [], id="group-holding-a-one-of-reordered"),
    pytest.param("news fetch summarize", [["news", SEARCH], "summarize"],
                 ["step 1: expected news and (one of search_web or search_docs) in any order, got news, fetch"],
                 id="group-holding-a-one-of-broken"),
    pytest.param("a b", [{"one_of": [{"one_of": ["x", "a"]}, "y"]}, "b"], [], id="one-of-inside-one-of"),
    pytest.param("plan search_web summarize extra", ["plan", SEARCH, "summarize"],
                 ["after step 3: expected no further call, got extra"], id="extra-call-after-an-alternative"),
    pytest.param("plan search_web:error search_docs summarize", ["plan", SEARCH, "summarize"],
                 ["step 3: expected summarize, got search_docs"], id="errored-try-is-an-attempt"),
]


@pytest.mark.parametrize(("calls", "chain", "violations"), EXACT)
def test_exact_order_with_alternatives(calls, chain, violations):
    assert judged(calls, "exact", chain) == violations


IN_ORDER = [
    pytest.param("plan note search_docs summarize", ["plan", SEARCH, "summarize"], [], id="alternative-among-others"),
    pytest.param("search_docs plan summarize", ["plan", SEARCH, "summarize"],
                 ["step 2: expected one of search_web or search_docs after step 1 (closest: search_docs), "
                  "but found no later clean call to search_docs"], id="alternative-made-too-early"),
    pytest.param("plan summarize", ["plan", SEARCH, "summarize"],
                 ["step 2: expected one of search_web or search_docs after step 1, "
                  "but found no later clean call to search_web"], id="no-alternative-made"),
    # The earliest-ending alternative leaves the most room for the steps after it.
    pytest.param("plan search_web summarize search_docs summarize", ["plan", SEARCH, "summarize", "summarize"], [],
                 id="earliest-alternative-wins"),
    pytest.param("plan fetch parse summarize", ["plan", {"one_of": ["search_web", ["parse", "fetch"]]}, "summarize"], [],
                 id="group-alternative"),
    pytest.param("plan fetch summarize", ["plan", {"one_of": ["search_web", ["parse", "fetch"]]}, "summarize"],
                 ["step 2: expected one of search_web or (parse and fetch in any order) after step 1 "
                  "(closest: parse and fetch in any order), but found no later clean call to parse"],
                 id="group-alternative-half-made"),
    pytest.param("news search_web summarize", [["news", SEARCH], "summarize"], [], id="group-holding-a-one-of"),
    pytest.param("plan search_docs:error summarize", ["plan", SEARCH, "summarize"],
                 ["step 2: expected one of search_web or search_docs after step 1 (closest: search_docs), "
                  "but found no later clean call to search_docs"], id="errored-alternative-is-not-clean"),
]


@pytest.mark.parametrize(("calls", "chain", "violations"), IN_ORDER)
def test_in_order_with_alternatives(calls, chain, violations):
    assert judged(calls, "in_order", chain) == violations


def test_plain_chains_keep_their_sentences():
    assert judged("search compute summarize", "exact", ["search", "parse", "summarize"]) == [
        "step 2: expected parse, got compute"
    ]
    assert judged("search weather fetch summarize", "exact", ["search", ["weather", "news"], "summarize"]) == [
        "step 2: expected weather and news in any order, got weather, fetch"
    ]


@pytest.mark.parametrize(
    ("chain", "message"),
    [
        pytest.param([{"one_of": []}], r"expected_chain\[0\]\.one_of: must not be empty$", id="empty-one-of"),
        pytest.param([{"one_of": ["a", []]}], "step 1 is or holds an empty group", id="empty-group-in-one-of"),
        pytest.param([["a", []]], "expected_chain", id="group-in-a-group"),
        pytest.param([{"one_of": ["a"], "extra": 1}], "extra", id="unknown-key"),
    ],
)
def test_malformed_alternatives_are_refused_naming_where(tmp_path, chain, message):
    import json

    path = tmp_path / "e.json"
    path.write_text(json.dumps({"expectations": [{"name": "x", "order": "exact", "expected_chain": chain}]}))
    with pytest.raises(ExpectationError, match=message):
        load_expectations([path])


def test_yaml_alternatives_load(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(
        "expectations:\n"
        "  - name: research\n"
        "    order: exact\n"
        "    expected_chain: [plan, {one_of: [search_web, [fetch, parse]]}, summarize]\n"
    )
    [expectation] = load_expectations([path])
    assert evaluate(chain_of("plan parse fetch summarize"), expectation).passed
