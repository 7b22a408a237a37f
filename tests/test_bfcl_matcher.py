"""``argument_match: bfcl`` in expectations: BFCL's possible-answer form judged by the strict rules."""

from __future__ import annotations

import pytest

from otel_reliability.expectations import Expectation, load_expectations
from otel_reliability.matcher import evaluate
from otel_reliability.model import OK, Attempt, Run


def run_with(*calls: tuple[str, dict]) -> Run:
    attempts = [Attempt(tool, arguments, OK, "travel", ("travel",), start_ns=i) for i, (tool, arguments) in enumerate(calls, 1)]
    return Run(trace_id=1, span_id=2, agent="travel", span_name="invoke_agent travel", start_ns=0, end_ns=99, own_attempts=attempts)


SPEC = {"city": ["New York, NY", "New York"], "days": [3], "unit": ["", "celsius"], "hourly": ["", False]}

CALLS = [
    pytest.param({"city": "new york", "days": 3}, True, id="normalised-string-and-omitted-optional"),
    pytest.param({"city": "New York", "days": 3.0, "unit": "Celsius"}, True, id="float-equal-to-int"),
    pytest.param({"city": "Boston", "days": 3}, False, id="value-not-allowed"),
    pytest.param({"days": 3}, False, id="required-left-out"),
    pytest.param({"city": "New York", "days": 3, "wind": True}, False, id="unknown-parameter"),
    pytest.param({"city": "New York", "days": 3, "hourly": 0}, False, id="number-for-bool"),
    pytest.param({"city": "New York", "days": 3, "unit": ""}, False, id="empty-string-is-not-omission"),
]


@pytest.mark.parametrize("arguments, passed", CALLS)
def test_bfcl_argument_mode_judges_calls_by_bfcl_rules(arguments, passed):
    expectation = Expectation(name="weather", expected_tool_calls=["get_weather"], argument_match="bfcl",
                              expected_tool_call_arguments={"get_weather": SPEC})
    verdict = evaluate(run_with(("get_weather", arguments)), expectation)
    assert verdict.passed is passed
    assert verdict.passed_argument_checks == (["get_weather"] if passed else [])
    assert verdict.failed_argument_checks == ([] if passed else ["get_weather"])


def test_the_same_spec_in_subset_mode_compares_the_lists_themselves():
    expectation = Expectation(name="weather", expected_tool_call_arguments={"get_weather": SPEC})
    assert evaluate(run_with(("get_weather", {"city": "New York", "days": 3})), expectation).failed_argument_checks == ["get_weather"]


def test_bfcl_mode_can_be_chosen_per_tool():
    expectation = Expectation(
        name="trip", argument_match_by_tool={"get_weather": "bfcl"},
        expected_tool_call_arguments={"get_weather": {"city": ["NYC", "New York"]}, "book": {"seats": 2}},
    )
    run = run_with(("get_weather", {"city": "new-york"}), ("book", {"seats": 2, "class": "economy"}))
    assert evaluate(run, expectation).passed_argument_checks == ["get_weather", "book"]


def test_parallel_calls_each_satisfy_one_spec():
    expectation = Expectation(name="two cities", argument_match="bfcl", expected_tool_call_arguments={
        "get_weather": [{"city": ["Paris"]}, {"city": ["Rome"]}]})
    assert evaluate(run_with(("get_weather", {"city": "rome"}), ("get_weather", {"city": "PARIS"})), expectation).passed
    assert not evaluate(run_with(("get_weather", {"city": "rome"})), expectation).passed


def test_expectation_files_accept_argument_match_bfcl(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(
        "expectations:\n"
        "  - name: weather\n"
        "    argument_match: bfcl\n"
        "    expected_tool_call_arguments:\n"
        "      get_weather: {city: ['New York', 'NYC'], unit: ['', celsius]}\n"
    )
    [expectation] = load_expectations([path])
    assert evaluate(run_with(("get_weather", {"city": "nyc"})), expectation).passed
