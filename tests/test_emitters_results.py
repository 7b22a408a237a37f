"""RunResult's JSON (SPEC §10, a contract), its round trip, and the assertion message."""

from __future__ import annotations

import json

import pytest

from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Verdict
from otel_reliability.results import RunResult, results_document

TRACE = 0x0AF7651916CD43DD8448EB211C80319C
SPAN = 0x00F067AA0BA902B7

RESULT_KEYS = [
    "trace_id",
    "run_span_id",
    "agent",
    "expectation",
    "eval_status",
    "passed_tool_calls",
    "failed_tool_calls",
    "additional_tool_calls",
    "missing_tool_calls",
    "failed_argument_checks",
    "passed_argument_checks",
    "order_violations",
    "score",
    "chain",
    # added 2026-12-01, after the keys above (SPEC §10, additive)
    "policy_violations",
    "errored_tool_calls",
    "refused_tool_calls",
    "pending_tool_calls",
    "unevaluated_checks",
    "explanation",
    "started_at",
    "ended_at",
    "duration_ms",
    "source",
    "trajectory",
    "usage",  # the budgets' measured values (SPEC §5.2), named in docs/expectations.md
    "evaluator",
    "agent_version",  # issue 25: the agent's version its spans name, null when none does
]
CHAIN_KEYS = ["agent", "tool", "arguments", "outcome", "call_id", "span_id"]


def failing_team_result() -> RunResult:
    chain = [
        Attempt("search", {"q": "paris"}, OK, "researcher", ("team", "researcher"), "call_1", 0x1A, None, 10),
        Attempt("delete", {}, REFUSED, "team", ("team",), "call_2", None, None, 20),
        Attempt("fetch", {"_raw": "{bad"}, ERROR, "researcher", ("team", "researcher"), None, 0x2B, "boom", 30),
        Attempt("confirm", {}, PENDING, "team", ("team",), "call_3", None, None, 40),
    ]
    verdict = Verdict(
        eval_status="FAILED",
        expectation="research",
        failed_tool_calls=["delete"],
        passed_tool_calls=["search"],
        missing_tool_calls=["fetch (requested but refused/errored — execution matching, new in 2.8.0)"],
        failed_argument_checks=["search"],
        order_violations=["step 2: expected fetch, got delete"],
        policy_violations=["forbidden tool delete"],
        errored_tool_calls=["fetch"],
        refused_tool_calls=["delete"],
        pending_tool_calls=["confirm"],
        score=0.25,
        chain=chain,
    )
    return RunResult(TRACE, SPAN, "team", "research", verdict, 1764480000.5)


def test_json_has_exactly_the_contract_keys_in_order():
    data = failing_team_result().to_json()
    assert list(data) == RESULT_KEYS
    assert all(list(item) == CHAIN_KEYS for item in data["chain"])


@pytest.mark.parametrize(
    ("trace_id", "span_id", "trace_hex", "span_hex"),
    [
        (TRACE, SPAN, "0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7"),
        (1, 1, "0" * 31 + "1", "0" * 15 + "1"),
        (2**128 - 1, 2**64 - 1, "f" * 32, "f" * 16),
    ],
    ids=["typical", "small-ids-zero-padded", "largest-ids"],
)
def test_ids_are_lowercase_zero_padded_hex(trace_id, span_id, trace_hex, span_hex):
    result = RunResult(trace_id, span_id, "a", "e", Verdict("PASSED", "e"), 0.0)
    data = result.to_json()
    assert (data["trace_id"], data["run_span_id"]) == (trace_hex, span_hex)


@pytest.mark.parametrize(
    ("index", "span_id"),
    [(0, "000000000000001a"), (1, None), (2, "000000000000002b"), (3, None)],
    ids=["executed", "refused-has-no-span", "errored", "pending-has-no-span"],
)
def test_chain_span_id_is_hex_or_null(index, span_id):
    assert failing_team_result().to_json()["chain"][index]["span_id"] == span_id


def test_json_values_follow_the_verdict():
    data = failing_team_result().to_json()
    assert data["eval_status"] == "FAILED"
    assert data["failed_tool_calls"] == ["delete"]
    assert data["score"] == 0.25
    assert data["chain"][0] == {
        "agent": "researcher",
        "tool": "search",
        "arguments": {"q": "paris"},
        "outcome": "ok",
        "call_id": "call_1",
        "span_id": "000000000000001a",
    }


@pytest.mark.parametrize(
    "encode",
    [lambda r: r.to_record(), lambda r: json.loads(json.dumps(r.to_record()))],
    ids=["record", "record-through-json-text"],
)
def test_record_round_trips_to_an_equal_result(encode):
    result = failing_team_result()
    assert RunResult.from_json(encode(result)) == result


def test_bare_json_reads_back_with_the_reasons_and_empty_extras():
    back = RunResult.from_json(failing_team_result().to_json())
    assert back.to_json() == failing_team_result().to_json()
    assert back.evaluated_at == 0.0
    assert back.verdict.policy_violations == ["forbidden tool delete"]
    assert back.verdict.chain[0].agent_path == ()


@pytest.mark.parametrize(
    ("statuses", "summary"),
    [
        ([], {"runs": 0, "passed": 0, "failed": 0, "not_evaluated": 0}),
        (["PASSED"], {"runs": 1, "passed": 1, "failed": 0, "not_evaluated": 0}),
        (["PASSED", "FAILED", "FAILED"], {"runs": 3, "passed": 1, "failed": 2, "not_evaluated": 0}),
        (["NOT_EVALUATED", "PASSED", "FAILED"], {"runs": 3, "passed": 1, "failed": 1, "not_evaluated": 1}),
    ],
    ids=["no-runs", "one-pass", "mixed", "not-evaluated-is-neither-passed-nor-failed"],
)
def test_document_counts_runs_passed_and_failed(statuses, summary):
    results = [RunResult(i, i, "a", "e", Verdict(s, "e"), 0.0) for i, s in enumerate(statuses, start=1)]
    document = results_document(results)
    assert list(document) == ["results", "summary"]
    assert document["summary"] == summary
    assert [r["eval_status"] for r in document["results"]] == statuses
