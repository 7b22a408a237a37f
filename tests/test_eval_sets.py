"""Eval sets: one file of cases run by ``eval --cases`` and by the pytest plugin (one test per
case), over real traces of the corpus; a case whose trace is missing is reported, never skipped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from otel_reliability.cli import main

from .corpus import CORPUS

pytest_plugins = ["pytester"]

AGENTS = Path(__file__).parent / "fixtures" / "eval_set" / "agents.yaml"
SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"
SINGLE_TOOL_TRACE = "03b2cdb329569df8fe94873154545381"
SINGLE_TOOL_RUN_SPAN = "d519ff5931a7ef84"


def cases_of(path: Path) -> list[dict]:
    return yaml.safe_load(path.read_text())["cases"]


def eval_cases(capsys, tmp_path, cases_file, *paths) -> tuple[int, list[dict], str]:
    report = tmp_path / "report.json"
    code = main(["eval", *map(str, paths), "--cases", str(cases_file), "--format", "json", "--output", str(report)])
    _, err = capsys.readouterr()
    return code, json.loads(report.read_text())["results"] if report.exists() else [], err


def write_set(tmp_path: Path, cases: list[dict], name: str = "cases.yaml") -> Path:
    """An eval set in ``tmp_path`` whose trace paths still point at the corpus."""
    for case in cases:
        if "trace" in case:
            case["trace"] = str((AGENTS.parent / case["trace"]).resolve())
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"cases": cases}))
    return path


def broken_set(tmp_path: Path) -> Path:
    """The agents set with one case's trace gone and one case expecting an argument its run did not pass."""
    cases = cases_of(AGENTS)
    cases[0]["trace"] = "../corpus/pydantic_ai/no_such_trace.json"
    cases[1]["expectation"]["expected_tool_call_arguments"] = {"multiply": {"a": 10, "b": 6}}
    return write_set(tmp_path, cases)


def test_the_agents_set_holds_at_least_ten_cases_over_real_traces():
    cases = cases_of(AGENTS)
    assert len(cases) >= 10
    assert all((AGENTS.parent / case["trace"]).is_file() for case in cases)


def test_eval_cases_judges_each_case_by_its_own_expectation(tmp_path, capsys):
    code, results, err = eval_cases(capsys, tmp_path, AGENTS)
    ids = [case["id"] for case in cases_of(AGENTS)]
    assert code == 0, err
    assert sorted(result["expectation"] for result in results) == sorted(ids)
    assert {result["eval_status"] for result in results} == {"PASSED"}
    assert err.strip().splitlines()[-1] == (
        f"otel-reliability: {len(ids)} case(s) of {AGENTS}: {len(ids)} passed, 0 failed, 0 not evaluated, 0 missing"
    )


def test_a_missing_trace_is_reported_and_exits_2_and_a_failed_case_fails(tmp_path, capsys):
    cases_file = broken_set(tmp_path)
    code, results, err = eval_cases(capsys, tmp_path, cases_file)
    missing_path = (AGENTS.parent / "../corpus/pydantic_ai/no_such_trace.json").resolve()
    assert code == 2
    assert f"otel-reliability: case pydantic_ai-multiply: missing: trace file {missing_path} not found" in err.splitlines()
    by_case = {result["expectation"]: result for result in results}
    assert "pydantic_ai-multiply" not in by_case
    assert by_case["openai_agents-multiply"]["eval_status"] == "FAILED"
    assert by_case["openai_agents-multiply"]["failed_argument_checks"] == ["multiply"]
    assert "1 failed, 0 not evaluated, 1 missing" in err


def with_case_attribute(tmp_path: Path, case_id: str) -> Path:
    """The single-tool trace with its run span naming an eval set case."""
    document = json.loads(SINGLE_TOOL.read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["spanId"] == SINGLE_TOOL_RUN_SPAN:
                    span["attributes"].append({"key": "reliability.expect.case", "value": {"stringValue": case_id}})
    path = tmp_path / "named.json"
    path.write_text(json.dumps(document))
    return path


MULTIPLY = {"expected_tool_calls": ["multiply"], "expected_tool_call_arguments": {"multiply": {"a": 10, "b": 5}}}


@pytest.mark.parametrize(
    ("case", "inputs", "code", "missing"),
    [
        pytest.param({"id": "by-id", "trace_id": SINGLE_TOOL_TRACE}, [SINGLE_TOOL], 0, None, id="trace-id-among-the-inputs"),
        pytest.param({"id": "by-id", "trace_id": SINGLE_TOOL_TRACE}, [], 2,
                     f"trace {SINGLE_TOOL_TRACE} is not among the inputs", id="trace-id-without-inputs-is-missing"),
        pytest.param({"id": "named"}, ["named"], 0, None, id="run-span-names-the-case"),
        pytest.param({"id": "unnamed"}, ["named"], 2,
                     "no trace: it names no trace file or trace id, and no run span names it with reliability.expect.case",
                     id="nothing-names-the-case-is-missing"),
    ],
)
def test_how_a_case_finds_its_runs(case, inputs, code, missing, tmp_path, capsys):
    paths = [with_case_attribute(tmp_path, "named") if item == "named" else item for item in inputs]
    cases_file = write_set(tmp_path, [{**case, "expectation": MULTIPLY}])
    got, results, err = eval_cases(capsys, tmp_path, cases_file, *paths)
    assert got == code, err
    if missing is None:
        assert [(r["expectation"], r["eval_status"]) for r in results] == [(case["id"], "PASSED")]
    else:
        assert f"otel-reliability: case {case['id']}: missing: {missing}" in err.splitlines()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "expected a mapping with a 'cases' list at the top level", id="empty-file"),
        pytest.param("cases: []", "cases: must not be empty", id="no-case"),
        pytest.param("cases: [{expectation: {}}]", "cases[0].id: required, but missing", id="case-without-id"),
        pytest.param("cases: [{id: a, expectation: {expected_tool_calls: 3}}]",
                     "cases[0].expectation.expected_tool_calls: expected a list, got 3", id="bad-expectation-field"),
        pytest.param("cases: [{id: a, expectation: {}}, {id: a, expectation: {}}]",
                     "cases: case ids must be unique; repeated: a", id="repeated-id"),
        pytest.param("cases: [{id: a, trace_id: xyz, expectation: {}}]", "cases[0].trace_id: expected a trace id of up to 32 hex digits, got 'xyz'",
                     id="trace-id-not-hex"),
        pytest.param("cases: [{id: a, expectation: {name: b}}]",
                     "cases[0]: expectation.name 'b' differs from the case's id 'a'; leave it out", id="a-name-beside-the-id"),
        pytest.param("cases:\n  - id: [a\n", "not valid YAML: line 3, column 1: ", id="not-yaml"),
    ],
)
def test_a_bad_eval_set_is_one_line_naming_file_and_field(text, message, tmp_path, capsys):
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    code = main(["eval", "--cases", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert err.startswith(f"otel-reliability: {path}: {message}"), err
    assert not re.search(r"Input should|Value error|Field required", err), err  # the project's words, not the validator's


CASE_TESTS = '''
import pytest


@pytest.mark.reliability_cases({path!r})
def test_agent_case(reliability_case):
    reliability_case.assert_passed()
'''


def test_the_plugin_runs_one_test_per_case(pytester):
    pytester.makepyfile(test_set=CASE_TESTS.format(path=str(AGENTS)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    cases = cases_of(AGENTS)
    result.assert_outcomes(passed=len(cases))
    result.stdout.fnmatch_lines([f"test_set.py::test_agent_case[[]{case['id']}[]] PASSED*" for case in cases], consecutive=False)


def test_the_plugin_fails_a_missing_trace_and_a_failed_case_by_name(pytester, tmp_path):
    cases_file = broken_set(tmp_path)
    pytester.makepyfile(test_set="def test_agent_case(reliability_case):\n    reliability_case.assert_passed()\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reliability-cases", str(cases_file))
    result.assert_outcomes(passed=len(cases_of(AGENTS)) - 2, failed=2)
    output = result.stdout.str()
    assert re.search(r"E\s+AssertionError: otel-reliability: case pydantic_ai-multiply: missing: trace file \S+no_such_trace.json not found", output)
    assert re.search(r"^E\s+AssertionError: ReliabilityEval failed: agent 'calculator', expectation 'openai_agents-multiply'", output, re.M)
    assert re.search(r"^E\s+arguments of multiply \(subset\):\nE\s+b: expected 6, got 5$", output, re.M)


LIVE_TESTS = '''
import pytest
from pydantic_ai.models.instrumented import InstrumentationSettings
from helpers import calculator


@pytest.mark.reliability_cases("cases.yaml")
def test_agent_on_each_input(reliability, reliability_case):
    agent = calculator(5, InstrumentationSettings(tracer_provider=reliability.provider))
    with reliability.expect(expectation=reliability_case.expectation) as check:
        agent.run_sync(reliability_case.input)
    check.assert_passed()
'''


def test_a_case_input_drives_the_agent_under_test(pytester):
    from .test_pytest_plugin import HELPERS

    pytester.path.joinpath("cases.yaml").write_text(yaml.safe_dump({"cases": [
        {"id": "multiplies", "input": "What is 10 times 5?", "expectation": MULTIPLY},
        {"id": "adds", "input": "What is 10 plus 5?", "expectation": {"expected_tool_calls": ["add"]}},
    ]}))
    pytester.makepyfile(helpers=HELPERS, test_live=LIVE_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_live.py::test_agent_on_each_input[[]adds[]]*"])
