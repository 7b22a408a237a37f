"""The result keys SPEC §10 added on 2026-12-01: why a run failed, when it ran, and from which file.

``eval --format json``, the stores and ``GET /api/v1/results`` carry them alike, and
``otel-reliability report`` built from any of them names the reasons.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.cli import main
from otel_reliability.model import Role
from otel_reliability.results import RunResult, parse_rfc3339, rfc3339
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store

from .corpus import CORPUS
from .receiver_harness import start_receiver

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"
TOOL_ERROR = CORPUS / "agno" / "agent_tool_error.json"
ADDED_KEYS = [
    "policy_violations", "errored_tool_calls", "refused_tool_calls", "pending_tool_calls",
    "unevaluated_checks", "explanation", "started_at", "ended_at", "duration_ms", "source",
    "trajectory", "usage", "evaluator",
]


def eval_json(*args, capsys) -> dict:
    main(["eval", *map(str, args), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def run_span_times(path: Path) -> tuple[int, int]:
    [run] = [r for r in map(to_record, read_spans(path)) if r.role is Role.AGENT_RUN and r.parent_id == 0]
    return run.start_ns, run.end_ns


def test_new_keys_follow_chain_and_leave_the_old_ones_in_place(capsys):
    [result] = eval_json(SINGLE_TOOL, capsys=capsys)["results"]
    keys = list(result)
    assert keys[: keys.index("chain") + 1][-2:] == ["score", "chain"]
    assert keys[keys.index("chain") + 1:][: len(ADDED_KEYS)] == ADDED_KEYS


def test_a_failed_run_says_why_in_the_json(capsys):
    [result] = eval_json(TOOL_ERROR, capsys=capsys)["results"]
    errored = [a["tool"] for a in result["chain"] if a["outcome"] == "error"]
    assert result["eval_status"] == "FAILED"
    assert errored and result["errored_tool_calls"] == errored
    assert result["policy_violations"], "the default expectation fails on errors: the violation must be named"
    assert result["explanation"].startswith("Expectation 'default' failed")
    assert result["policy_violations"][0] in result["explanation"]


@pytest.mark.parametrize("trace", [SINGLE_TOOL, TOOL_ERROR], ids=["pydantic_ai", "agno"])
def test_times_are_the_run_spans_in_rfc3339_utc_and_source_is_the_file(trace, capsys):
    [result] = eval_json(trace, capsys=capsys)["results"]
    start_ns, end_ns = run_span_times(trace)
    assert result["started_at"].endswith("Z") and result["ended_at"].endswith("Z")
    assert (parse_rfc3339(result["started_at"]), parse_rfc3339(result["ended_at"])) == (start_ns, end_ns)
    assert result["duration_ms"] == pytest.approx((end_ns - start_ns) / 1e6)
    assert result["source"] == str(trace)


def test_each_run_of_a_directory_names_its_own_file(tmp_path, capsys):
    (tmp_path / "a.json").write_bytes(SINGLE_TOOL.read_bytes())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.json").write_bytes(TOOL_ERROR.read_bytes())
    results = eval_json(tmp_path, capsys=capsys)["results"]
    assert sorted((r["agent"], Path(r["source"]).relative_to(tmp_path).as_posix()) for r in results) == sorted(
        [(eval_json(SINGLE_TOOL, capsys=capsys)["results"][0]["agent"], "a.json"),
         (eval_json(TOOL_ERROR, capsys=capsys)["results"][0]["agent"], "sub/b.json")]
    )


def test_rfc3339_keeps_nanoseconds_and_reads_offsets():
    assert rfc3339(1_764_547_200_000_000_001) == "2025-12-01T00:00:00.000000001Z"
    assert parse_rfc3339("2025-12-01T00:00:00.000000001Z") == 1_764_547_200_000_000_001
    assert parse_rfc3339("2025-12-01T02:00:00.5+02:00") == 1_764_547_200_500_000_000
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        parse_rfc3339("yesterday")


def test_a_result_from_before_the_additions_reads_with_unknown_times(capsys):
    [result] = eval_json(SINGLE_TOOL, capsys=capsys)["results"]
    old = {key: value for key, value in result.items() if key not in ADDED_KEYS}
    again = RunResult.from_json(old).to_json()
    assert (again["started_at"], again["ended_at"], again["duration_ms"], again["source"]) == (None, None, None, None)
    assert again["policy_violations"] == []


@pytest.mark.parametrize("store_name", ["results.db", "results.jsonl"])
def test_stores_keep_the_new_keys(store_name, tmp_path, capsys):
    document = eval_json(TOOL_ERROR, capsys=capsys)
    results = [RunResult.from_json(item) for item in document["results"]]
    store = open_store(tmp_path / store_name)
    try:
        store.add_many(results)
        [stored] = store.query(limit=None)
    finally:
        store.close()
    assert {key: stored.to_json()[key] for key in ADDED_KEYS} == {key: document["results"][0][key] for key in ADDED_KEYS}


def test_report_of_eval_json_names_the_reason(tmp_path, capsys):
    document = tmp_path / "results.json"
    main(["eval", str(TOOL_ERROR), "--format", "json", "--output", str(document)])
    capsys.readouterr()
    code = main(["report", str(document)])
    text = capsys.readouterr().out
    violation = json.loads(document.read_text())["results"][0]["policy_violations"][0]
    assert code == 1
    assert "reason not recorded" not in text
    assert violation in text


def test_the_results_api_carries_the_new_keys(tmp_path, capsys):
    [expected] = eval_json(TOOL_ERROR, capsys=capsys)["results"]
    receiver = start_receiver(tmp_path)
    try:
        reply = receiver.post_traces(TOOL_ERROR.read_bytes(), content_type="application/json")
        assert reply.status == 200, reply.body
        [served] = receiver.wait_results([expected["trace_id"]], runs=1)
    finally:
        receiver.stop()
    assert {key: served[key] for key in ADDED_KEYS if key != "source"} == {
        key: expected[key] for key in ADDED_KEYS if key != "source"
    }
    assert served["source"] is None  # only eval reads files
