"""The matcher beyond Agno (SPEC §5.2): order, argument modes, per-agent expectations,
policies, outcome lists, score and explanation — and that none of it disturbs Agno
parity while left at its defaults."""

from __future__ import annotations

import ast
from itertools import count
from pathlib import Path

import pytest

from otel_reliability.expectations import DEFAULT_EXPECTATION, Expectation
from otel_reliability.matcher import evaluate, explain
from otel_reliability.matcher.policies import check_policies
from otel_reliability.model import OK, Attempt, Run

_clock = count(1)
ANNOTATION = "(requested but refused/errored — execution matching, new in 2.8.0)"


def attempt(token: str, agent: str = "solo", **arguments) -> Attempt:
    """``"search"`` is a clean call; ``"search:error"`` an attempt with that outcome. Each starts after the last."""
    tool, _, outcome = token.partition(":")
    return Attempt(tool, arguments, outcome or OK, agent, (agent,), start_ns=next(_clock))


def run_of(*attempts: Attempt | str, agent: str = "solo", members: tuple[Run, ...] = ()) -> Run:
    own = [a if isinstance(a, Attempt) else attempt(a, agent) for a in attempts]
    return Run(trace_id=1, span_id=2, agent=agent, span_name=f"invoke_agent {agent}", start_ns=0, end_ns=0,
               own_attempts=own, members=list(members))


def chain_of(tokens: str) -> Run:
    return run_of(*tokens.split())


def expect(**fields) -> Expectation:
    return Expectation(name="case", **fields)


# --- order -----------------------------------------------------------------------

EXACT = [
    pytest.param("search parse summarize", ["search", "parse", "summarize"], [], id="same-sequence"),
    pytest.param("search compute summarize", ["search", "parse", "summarize"],
                 ["step 2: expected parse, got compute"], id="substitution"),
    pytest.param("search news weather summarize", ["search", ["weather", "news"], "summarize"], [], id="group-in-either-order"),
    pytest.param("search weather fetch summarize", ["search", ["weather", "news"], "summarize"],
                 ["step 2: expected weather and news in any order, got weather, fetch"], id="group-with-a-stranger"),
    pytest.param("search", ["search", "parse"], ["step 2: expected parse, got no further call"], id="run-ends-early"),
    pytest.param("search parse delete_db", ["search", "parse"],
                 ["after step 2: expected no further call, got delete_db"], id="extra-call-after-chain"),
    pytest.param("search", [], ["expected no tool calls, got search"], id="empty-chain-expects-nothing"),
    pytest.param("", [], [], id="empty-chain-and-no-calls"),
    pytest.param("search:error search parse", ["search", "parse"],
                 ["step 2: expected parse, got search"], id="errored-retry-is-an-attempt"),
    pytest.param("search delete_db:refused parse", ["search", "parse"],
                 ["step 2: expected parse, got delete_db"], id="refused-call-is-an-attempt"),
    pytest.param("fetch fetch", [["fetch", "fetch"]], [], id="group-with-repeated-tool"),
]


@pytest.mark.parametrize("tokens, expected_chain, violations", EXACT)
def test_exact_order_compares_every_attempt_in_start_order(tokens, expected_chain, violations):
    verdict = evaluate(chain_of(tokens), expect(order="exact", expected_chain=expected_chain))
    assert verdict.order_violations == violations
    assert verdict.passed == (not violations)


IN_ORDER = [
    pytest.param("search log parse", ["search", "parse"], [], id="other-calls-between-steps"),
    pytest.param("parse search", ["search", "parse"],
                 ["step 2: expected parse after step 1, but found no later clean call to parse"], id="steps-reversed"),
    pytest.param("search:error parse", ["search", "parse"],
                 ["step 1: expected search, but found no clean call to search"], id="errored-call-does-not-count"),
    pytest.param("search news log weather summarize", ["search", ["weather", "news"], "summarize"], [],
                 id="group-interleaved-with-others"),
    pytest.param("search weather summarize news", ["search", ["weather", "news"], "summarize"],
                 ["step 3: expected summarize after step 2, but found no later clean call to summarize"],
                 id="next-step-must-follow-whole-group"),
    pytest.param("search weather", ["search", ["weather", "news"]],
                 ["step 2: expected weather and news in any order after step 1, but found no later clean call to news"],
                 id="group-member-missing"),
    pytest.param("fetch", [["fetch", "fetch"]],
                 ["step 1: expected fetch and fetch in any order, but found no clean call to fetch"],
                 id="repeated-tool-needs-two-calls"),
    pytest.param("search fetch search parse", ["search", "search", "parse"], [], id="repeated-step-uses-later-call"),
]


@pytest.mark.parametrize("tokens, expected_chain, violations", IN_ORDER)
def test_in_order_finds_the_chain_as_a_subsequence_of_clean_calls(tokens, expected_chain, violations):
    verdict = evaluate(chain_of(tokens), expect(order="in_order", expected_chain=expected_chain))
    assert verdict.order_violations == violations


def test_order_follows_start_times_not_evidence_order():
    delegate = Attempt("delegate_task_to_member", {}, OK, "leader", ("leader",), start_ns=1)
    summarize = Attempt("summarize", {}, OK, "leader", ("leader",), start_ns=9)
    search = Attempt("search", {}, OK, "researcher", ("leader", "researcher"), start_ns=5)
    run = run_of(delegate, summarize, agent="leader", members=(run_of(search, agent="researcher"),))
    verdict = evaluate(run, expect(order="exact", expected_chain=["delegate_task_to_member", "search", "summarize"]))
    assert verdict.order_violations == []
    assert [a.tool for a in verdict.chain] == ["delegate_task_to_member", "search", "summarize"]


# --- argument modes -----------------------------------------------------------------

ARGUMENT_MODES = [
    pytest.param("subset", {}, {"q": "paris"}, {"q": "paris", "limit": 5}, True, id="subset-extra-keys-pass"),
    pytest.param("exact", {}, {"q": "paris"}, {"q": "paris", "limit": 5}, False, id="exact-extra-keys-fail"),
    pytest.param("exact", {}, {"q": "paris", "limit": 5}, {"limit": 5.0, "q": "paris"}, True,
                 id="exact-same-keys-python-equality"),
    pytest.param("exact", {}, {"q": "paris", "limit": 5}, {"q": "paris"}, False, id="exact-missing-key-fails"),
    pytest.param("ignore", {}, {"q": "paris"}, {"q": "rome"}, True, id="ignore-any-values-pass"),
    pytest.param("exact", {"search": "subset"}, {"q": "paris"}, {"q": "paris", "limit": 5}, True,
                 id="per-tool-subset-overrides-exact"),
    pytest.param("subset", {"search": "exact"}, {"q": "paris"}, {"q": "paris", "limit": 5}, False,
                 id="per-tool-exact-overrides-subset"),
    pytest.param("subset", {"search": "ignore"}, {"q": "paris"}, {"q": "rome"}, True, id="per-tool-ignore-overrides-subset"),
    pytest.param("exact", {"other": "subset"}, {"q": "paris"}, {"q": "paris", "limit": 5}, False,
                 id="override-for-another-tool-leaves-mode"),
    pytest.param("subset", {}, {"q": "paris"}, {"_raw": "q=paris"}, False, id="raw-unparsed-arguments-do-not-match-keys"),
    pytest.param("exact", {}, {"_raw": "q=paris"}, {"_raw": "q=paris"}, True, id="raw-unparsed-arguments-match-as-raw"),
]


@pytest.mark.parametrize("mode, by_tool, spec, arguments, matches", ARGUMENT_MODES)
def test_argument_mode_decides_whether_a_call_matches_the_spec(mode, by_tool, spec, arguments, matches):
    run = run_of(attempt("search", **arguments))
    verdict = evaluate(run, expect(expected_tool_calls=["search"], expected_tool_call_arguments={"search": spec},
                                   argument_match=mode, argument_match_by_tool=by_tool))
    outcome = (verdict.passed_argument_checks, verdict.failed_argument_checks)
    assert outcome == ((["search"], []) if matches else ([], ["search"]))


@pytest.mark.parametrize("mode", ["subset", "exact", "ignore"])
def test_every_argument_mode_needs_a_clean_call(mode):
    run = run_of(attempt("search:error", q="paris"))
    verdict = evaluate(run, expect(expected_tool_call_arguments={"search": {"q": "paris"}}, argument_match=mode))
    assert verdict.failed_argument_checks == ["search"]


# --- per-agent expectations -------------------------------------------------------------

def team(leader: str, **members: str) -> Run:
    """A leader run with one member run per keyword; the leader's calls start first."""
    own = [attempt(t, "leader") for t in leader.split()]
    runs = tuple(run_of(*[attempt(t, name) for t in tokens.split()], agent=name) for name, tokens in members.items())
    return run_of(*own, agent="leader", members=runs)


BY_AGENT = [
    pytest.param(team("delegate", researcher="search"), {"researcher": ["search"]}, [], id="member-called-it"),
    pytest.param(team("delegate search", researcher=""), {"researcher": ["search"]}, ["search (by researcher)"],
                 id="leader-did-members-work"),
    pytest.param(team("delegate", researcher="search:error"), {"researcher": ["search"]},
                 ["search (by researcher; attempted, never clean)"], id="member-call-errored"),
    pytest.param(team("delegate", researcher="search:error search"), {"researcher": ["search"]}, [],
                 id="member-retry-succeeded"),
    pytest.param(team("delegate", writer="search"), {"researcher": ["search"]}, ["search (by researcher)"],
                 id="another-member-called-it"),
    pytest.param(team("delegate", researcher="search", writer="draft"),
                 {"researcher": ["search", "fetch"], "writer": ["draft"], "leader": ["delegate"]},
                 ["fetch (by researcher)"], id="several-agents-one-gap"),
]


@pytest.mark.parametrize("run, by_agent, missing", BY_AGENT)
def test_per_agent_expectation_needs_a_clean_call_by_that_agent(run, by_agent, missing):
    verdict = evaluate(run, expect(expected_tool_calls_by_agent=by_agent))
    assert verdict.missing_tool_calls == missing
    assert verdict.passed == (not missing)


def test_per_agent_entries_follow_agno_missing_entries_and_leave_name_checks_alone():
    run = team("delegate", researcher="search")
    by_agent = {"writer": ["draft"]}
    verdict = evaluate(run, expect(expected_tool_calls=["delegate", "summarize"], expected_tool_calls_by_agent=by_agent))
    assert verdict.missing_tool_calls == ["summarize", "draft (by writer)"]
    assert verdict.failed_tool_calls == ["search"]


# --- policies ----------------------------------------------------------------------

POLICIES = [
    pytest.param("search fetch", {"allowed_tools": ["search", "fetch"]}, [], id="allowed-all-listed"),
    pytest.param("search pay pay:refused", {"allowed_tools": ["search"]},
                 ["pay is not in allowed_tools (attempted 2 times)"], id="allowed-outsider"),
    pytest.param("search", {"forbidden_tools": ["delete_db"]}, [], id="forbidden-not-touched"),
    pytest.param("search delete_db:refused", {"forbidden_tools": ["delete_db"]},
                 ["forbidden tool delete_db was attempted 1 time"], id="forbidden-even-when-refused"),
    pytest.param("a b c", {"max_tool_calls": 3}, [], id="max-calls-at-limit"),
    pytest.param("a b c d:refused", {"max_tool_calls": 3},
                 ["max_tool_calls 3 exceeded: 4 tool calls made"], id="max-calls-over-limit"),
    pytest.param("a:error b", {"max_errors": 1}, [], id="max-errors-at-limit"),
    pytest.param("a:error b:error c", {"max_errors": 1},
                 ["max_errors 1 exceeded: 2 tool calls errored (a, b)"], id="max-errors-over-limit"),
    pytest.param("search:error search", {"fail_on": ["error"]},
                 ["fail_on error: 1 tool call errored (search)"], id="fail-on-error-despite-retry"),
    pytest.param("search delete_db:refused", {"fail_on": ["refused"]},
                 ["fail_on refused: 1 tool call refused (delete_db)"], id="fail-on-refused"),
    pytest.param("approve:pending pay:pending", {"fail_on": ["pending"]},
                 ["fail_on pending: 2 tool calls pending (approve, pay)"], id="fail-on-pending"),
    pytest.param("search:error", {"fail_on": ["refused", "pending"]}, [], id="fail-on-other-outcomes-only"),
    pytest.param("a:error b:refused c:error", {"fail_on": ["refused", "error"]},
                 ["fail_on refused: 1 tool call refused (b)", "fail_on error: 2 tool calls errored (a, c)"],
                 id="fail-on-outcomes-in-listed-order-tools-in-chain-order"),
]


@pytest.mark.parametrize("tokens, fields, violations", POLICIES)
def test_policy_violations_are_sentences(tokens, fields, violations):
    verdict = evaluate(chain_of(tokens), expect(**fields))
    assert verdict.policy_violations == violations
    assert verdict.passed == (not violations)


def test_each_configured_policy_is_one_check_in_a_fixed_order():
    expectation = expect(fail_on=["pending", "error", "error"], max_errors=0, max_tool_calls=9,
                         forbidden_tools=[], allowed_tools=["a", "b"])
    results = check_policies(chain_of("a b").chain(), expectation)
    assert [r.policy for r in results] == [
        "allowed_tools", "forbidden_tools", "max_tool_calls", "max_errors", "fail_on pending", "fail_on error",
    ]


def test_default_expectation_fails_errored_and_refused_runs():
    verdict = evaluate(chain_of("search:error fetch:refused"), DEFAULT_EXPECTATION)
    assert verdict.eval_status == "FAILED"
    assert verdict.policy_violations == [
        "fail_on error: 1 tool call errored (search)",
        "fail_on refused: 1 tool call refused (fetch)",
    ]


# --- outcome lists, chain, expectation name -------------------------------------------

def test_verdict_lists_outcomes_in_chain_order_and_carries_the_chain():
    run = team("delegate plan:pending", researcher="search:error search fetch:refused", writer="fetch:error")
    verdict = evaluate(run, Expectation(name="team"))
    assert verdict.expectation == "team"
    assert verdict.chain == run.chain()
    assert verdict.errored_tool_calls == ["search", "fetch"]
    assert verdict.refused_tool_calls == ["fetch"]
    assert verdict.pending_tool_calls == ["plan"]


# --- score --------------------------------------------------------------------------

SCORES = [
    pytest.param("search:error", {}, 1.0, id="no-check-applies"),
    pytest.param("search fetch", {"expected_tool_calls": ["search"]}, 2 / 3, id="one-expected-name-two-judged-calls"),
    pytest.param("search fetch", {"expected_tool_calls": ["search"], "allow_additional_tool_calls": True}, 1.0,
                 id="lenient-additional-call-passes"),
    pytest.param("fetch", {"expected_tool_calls": ["search", "search"]}, 0 / 3, id="duplicate-expected-names-count-twice"),
    pytest.param("search", {"expected_tool_call_arguments": {"search": {"q": 1}, "fetch": {}}}, 0 / 2, id="argument-checks"),
    pytest.param("search:error", {"expected_tool_calls": ["search"], "expected_tool_call_arguments": {"search": {}}}, 1 / 2,
                 id="missing-tool-skips-its-argument-check"),
    pytest.param("b a", {"order": "exact", "expected_chain": ["a", "b"], "max_tool_calls": 2, "fail_on": ["error"]}, 2 / 3,
                 id="order-and-policies"),
    pytest.param("s", {"expected_tool_calls_by_agent": {"solo": ["s", "t"]}}, 1 / 2, id="per-agent-pairs"),
]


@pytest.mark.parametrize("tokens, fields, score", SCORES)
def test_score_is_the_fraction_of_checks_passed(tokens, fields, score):
    verdict = evaluate(chain_of(tokens), expect(**fields))
    assert verdict.score == pytest.approx(score)
    assert verdict.passed == (verdict.score == 1.0)


# --- explanation ----------------------------------------------------------------------

EXPLANATIONS = [
    pytest.param("search", {"expected_tool_calls": ["search"]},
                 "Expectation 'case' passed: 1 tool call, all checks passed.", id="passed"),
    pytest.param("search:error search fetch:refused", {"expected_tool_calls": ["search"], "allow_additional_tool_calls": True},
                 "Expectation 'case' passed: 3 tool calls (1 errored, 1 refused), all checks passed.",
                 id="passed-despite-troubles"),
    pytest.param("fetch fetch", {"expected_tool_calls": ["search"]},
                 "Expectation 'case' failed with score 0.00 over 2 tool calls: missing search; unexpected fetch.",
                 id="missing-and-unexpected"),
    pytest.param("search:error", {"expected_tool_calls": ["search"]},
                 f"Expectation 'case' failed with score 0.50 over 1 tool call (1 errored): missing search {ANNOTATION}.",
                 id="annotated-missing"),
    pytest.param("search parse", {"expected_tool_call_arguments": {"search": {"q": 1}}, "forbidden_tools": ["parse"],
                                   "order": "exact", "expected_chain": ["parse", "search"]},
                 "Expectation 'case' failed with score 0.00 over 2 tool calls: argument check failed for search; "
                 "step 1: expected parse, got search; forbidden tool parse was attempted 1 time.", id="arguments-order-policy"),
]


@pytest.mark.parametrize("tokens, fields, sentence", EXPLANATIONS)
def test_explain_gives_one_readable_sentence(tokens, fields, sentence):
    assert explain(evaluate(chain_of(tokens), expect(**fields))) == sentence


# --- defaults keep Agno parity -------------------------------------------------------------

PARITY_RUNS = [
    pytest.param(chain_of("search fetch:error delete_db:refused"), id="mixed-outcomes"),
    pytest.param(team("delegate", researcher="search search:pending", writer="draft"), id="team"),
    pytest.param(chain_of(""), id="no-calls"),
]
AGNO_FIELDS = ("eval_status", "failed_tool_calls", "passed_tool_calls", "additional_tool_calls", "missing_tool_calls",
               "failed_argument_checks", "passed_argument_checks")
AGNO_CONFIGS = [
    {"expected_tool_calls": ["search", "draft"]},
    {"expected_tool_calls": ["search"], "allow_additional_tool_calls": True, "expected_tool_call_arguments": {"draft": {}}},
    {"expected_tool_calls": None, "expected_tool_call_arguments": {"search": {"q": "x"}}},
]


@pytest.mark.parametrize("config", AGNO_CONFIGS, ids=["strict", "lenient-with-arguments", "names-off"])
@pytest.mark.parametrize("run", PARITY_RUNS)
def test_beyond_agno_fields_stay_quiet_at_their_defaults(run, config):
    verdict = evaluate(run, expect(**config))
    assert (verdict.order_violations, verdict.policy_violations) == ([], [])


@pytest.mark.parametrize("config", AGNO_CONFIGS, ids=["strict", "lenient-with-arguments", "names-off"])
@pytest.mark.parametrize("run", PARITY_RUNS)
def test_satisfied_extra_checks_leave_agno_fields_unchanged(run, config):
    names = sorted({a.tool for a in run.chain()})
    extras = {"allowed_tools": names, "forbidden_tools": ["rm"], "max_tool_calls": 99, "max_errors": 99,
              "order": "in_order", "expected_chain": [], "argument_match_by_tool": {"other": "exact"}}
    plain, extended = evaluate(run, expect(**config)), evaluate(run, expect(**config, **extras))
    assert [getattr(extended, f) for f in AGNO_FIELDS] == [getattr(plain, f) for f in AGNO_FIELDS]


def test_refusal_of_a_name_that_also_ran_is_invisible_to_agno_lists():
    # Assembly can record a refusal under a name that also ran (Agno's evidence never holds
    # both): the name is not request-only, so only its execution is judged.
    verdict = evaluate(chain_of("search search:refused"), expect(expected_tool_calls=["fetch"]))
    assert verdict.failed_tool_calls == ["search"]
    assert verdict.missing_tool_calls == ["fetch"]
    assert verdict.refused_tool_calls == ["search"]


# --- purity ---------------------------------------------------------------------------

def test_matcher_imports_only_the_standard_library_and_the_data_model():
    allowed = {
        "__future__", "collections", "dataclasses", "itertools", "operator", "typing",
        "otel_reliability.model", "otel_reliability.expectations", "otel_reliability.matcher.bfcl.judge",  # pure too
    }
    imported = set()
    for source in (Path(__file__).parents[1] / "otel_reliability/matcher").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert {m for m in imported if not m.startswith("otel_reliability.matcher")} <= allowed
