"""``otel-reliability eval``: the JSON contract, the exit codes, and clear errors on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from otel_reliability.cli import main

from .corpus import CORPUS

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"
TOOL_ERROR = CORPUS / "agno" / "agent_tool_error.json"


def run_eval(*args, capsys):
    code = main(["eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_json_output_follows_the_contract(capsys):
    code, out, _ = run_eval(SINGLE_TOOL, "--format", "json", capsys=capsys)
    document = json.loads(out)
    [result] = document["results"]
    assert code == 0
    assert document["summary"] == {"runs": 1, "passed": 1, "failed": 0, "not_evaluated": 0}
    assert list(result) == [
        "trace_id", "run_span_id", "agent", "expectation", "eval_status", "passed_tool_calls",
        "failed_tool_calls", "additional_tool_calls", "missing_tool_calls", "failed_argument_checks",
        "passed_argument_checks", "order_violations", "score", "chain",
        # added 2026-12-01, after the keys above (tests/test_results_contract_additions.py)
        "policy_violations", "errored_tool_calls", "refused_tool_calls", "pending_tool_calls",
        "unevaluated_checks", "explanation", "started_at", "ended_at", "duration_ms", "source",
        "trajectory", "usage", "evaluator",
        "agent_version",  # issue 25 (additive)
    ]
    assert result["chain"] == [
        {"agent": "calculator", "tool": "multiply", "arguments": {"a": 10, "b": 5}, "outcome": "ok",
         "call_id": "call_mul_1", "span_id": result["chain"][0]["span_id"]}
    ]
    assert len(result["trace_id"]) == 32 and result["trace_id"] == result["trace_id"].lower()


@pytest.mark.parametrize(
    ("expectation", "exit_code"),
    [
        pytest.param({"name": "ok", "expected_tool_calls": ["multiply"]}, 0, id="expected-tool-called-exits-0"),
        pytest.param({"name": "bad", "expected_tool_calls": ["divide"]}, 1, id="missing-tool-exits-1"),
        pytest.param({"name": "args", "expected_tool_call_arguments": {"multiply": {"a": 11}}}, 1, id="wrong-argument-exits-1"),
    ],
)
def test_exit_code_says_whether_every_run_passed(expectation, exit_code, tmp_path, capsys):
    expectations = write(tmp_path, "e.json", json.dumps({"expectations": [expectation]}))
    code, _, _ = run_eval(SINGLE_TOOL, "--expectations", expectations, capsys=capsys)
    assert code == exit_code


def test_a_run_nobody_expected_fails_on_an_errored_tool_by_default(capsys):
    code, out, _ = run_eval(TOOL_ERROR, "--format", "json", capsys=capsys)
    [result] = json.loads(out)["results"]
    assert (code, result["expectation"], result["eval_status"]) == (1, "default", "FAILED")


@pytest.mark.parametrize(("fmt", "marker"), [("table", "Reliability Summary"), ("markdown", "| trace | agent |")])
def test_human_formats_go_to_the_output_file(fmt, marker, tmp_path, capsys):
    output = tmp_path / "report.txt"
    code, out, _ = run_eval(SINGLE_TOOL, "--format", fmt, "--output", output, capsys=capsys)
    assert code == 0 and out == ""
    assert marker in output.read_text()


def test_yaml_and_toml_expectation_files_are_read(tmp_path, capsys):
    yaml_file = write(tmp_path, "e.yaml", "expectations:\n  - name: y\n    match: {agent: nobody}\n")
    toml_file = write(tmp_path, "e.toml", '[[expectations]]\nname = "t"\nexpected_tool_calls = ["multiply"]\n')
    code, out, _ = run_eval(SINGLE_TOOL, "--expectations", yaml_file, "--expectations", toml_file, "--format", "json", capsys=capsys)
    assert code == 0
    assert json.loads(out)["results"][0]["expectation"] == "t"


BAD_INPUTS = [
    pytest.param("trace.json", "{not json", "trace.json: line 1 column 2", id="malformed-json"),
    pytest.param("trace.json", '{"resourceSpans": 3}', "trace.json", id="wrong-type"),
    pytest.param(
        "trace.json",
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",'
        '"spanId":"b7ad6b7169203331","name":"x","kind":"SPAN_KIND_SIDEWAYS"}]}]}]}',
        "spans[0].kind",
        id="unknown-enum",
    ),
    pytest.param(
        "trace.json",
        '{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"b7ad6b7169203331","name":"x"}]}]}]}',
        "spans[0].traceId",
        id="missing-trace-id",
    ),
    pytest.param("trace.pb", b"\x0a\xff\xff\xff\x0f\x01", "trace.pb", id="truncated-protobuf"),
    pytest.param("trace.json", "", "trace.json", id="empty-file"),
]


@pytest.mark.parametrize(("name", "content", "place"), BAD_INPUTS)
def test_bad_trace_input_exits_2_naming_the_file_and_place(name, content, place, tmp_path, capsys):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, out, err = run_eval(path, capsys=capsys)
    assert code == 2
    assert out == ""
    assert place in err and err.startswith("otel-reliability: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("expectations: [{expected_tool_calls: [a]}]", "expectations[0].name: required, but missing", id="missing-name"),
        pytest.param("expectations: [{name: a, expected_tool_calls: 3}]", "expected_tool_calls", id="wrong-type"),
        pytest.param("expectations: [{name: a, tool_calls: [x]}]", "tool_calls", id="unknown-field"),
        pytest.param("expectations: [{name: a, order: exact}]", "needs expected_chain", id="order-without-chain"),
        pytest.param("expectations: [{name: a}, {name: a}]", "repeated: a", id="duplicate-names"),
        pytest.param("expectations: [", "not valid YAML", id="malformed-yaml"),
    ],
)
def test_bad_expectation_file_exits_2_naming_the_field(text, message, tmp_path, capsys):
    expectations = write(tmp_path, "e.yaml", text)
    code, _, err = run_eval(SINGLE_TOOL, "--expectations", expectations, capsys=capsys)
    assert code == 2
    assert "e.yaml" in err and message in err


def test_missing_path_exits_2(tmp_path, capsys):
    code, _, err = run_eval(tmp_path / "nope.json", capsys=capsys)
    assert code == 2 and "nope.json: no such file or directory" in err


def with_tool_arguments(tmp_path, text):
    """SINGLE_TOOL with its tool span's ``gen_ai.tool.call.arguments`` set to ``text``."""
    document = json.loads(SINGLE_TOOL.read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span.get("attributes", []):
                    if attribute["key"] == "gen_ai.tool.call.arguments":
                        attribute["value"] = {"stringValue": text}
    return write(tmp_path, "arguments.json", json.dumps(document))


def test_tool_arguments_that_are_not_json_are_kept_raw(tmp_path, capsys):
    path = with_tool_arguments(tmp_path, "a=10, b=5")
    code, out, _ = run_eval(path, "--format", "json", capsys=capsys)
    [result] = json.loads(out)["results"]
    assert code == 0
    assert result["chain"][0]["arguments"] == {"a": 10, "b": 5}  # the model's request supplies them


def test_json_output_writes_non_finite_argument_numbers_as_null(tmp_path, capsys):
    path = with_tool_arguments(tmp_path, '{"a": NaN, "b": Infinity}')
    _, out, _ = run_eval(path, "--format", "json", capsys=capsys)
    [result] = json.loads(out, parse_constant=lambda constant: pytest.fail(f"{constant} is not JSON"))["results"]
    assert result["chain"][0]["arguments"] == {"a": None, "b": None}


def test_a_directory_stands_for_the_trace_files_in_it(tmp_path, capsys):
    (tmp_path / "a.json").write_bytes(SINGLE_TOOL.read_bytes())
    (tmp_path / "b.json").write_bytes(TOOL_ERROR.read_bytes())
    code, out, _ = run_eval(tmp_path, "--format", "json", capsys=capsys)
    assert code == 1
    assert json.loads(out)["summary"] == {"runs": 2, "passed": 1, "failed": 1, "not_evaluated": 0}


def test_console_script_runs_as_a_module():
    completed = subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", "eval", str(SINGLE_TOOL), "--format", "json"],
        capture_output=True, text=True, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["summary"]["passed"] == 1
