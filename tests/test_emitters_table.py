"""The rich "Reliability Summary" tables (Agno's print_eval shape)."""

from __future__ import annotations

import pytest
from rich.console import Console

from otel_reliability.emitters.table import render_results, render_table
from otel_reliability.model import OK, Attempt, Verdict
from otel_reliability.results import RunResult

ALWAYS = ["Agent", "Expectation", "Score", "Trace", "Evaluation Status", "Failed Tool Calls", "Passed Tool Calls"]
OPTIONAL = {
    "additional_tool_calls": "Additional Tool Calls",
    "missing_tool_calls": "Missing Tool Calls",
    "failed_argument_checks": "Failed Argument Checks",
    "passed_argument_checks": "Passed Argument Checks",
    "order_violations": "Order Violations",
    "policy_violations": "Policy Violations",
}


def printed(render, *args) -> str:
    console = Console(record=True, width=120)
    render(*args, console)
    return console.export_text()


def result(status: str = "PASSED", agent: str = "calc", **fields) -> RunResult:
    return RunResult(0xAB, 0xCD, agent, "math", Verdict(status, "math", **fields), 0.0)


def test_empty_lists_show_only_the_rows_agno_always_shows():
    text = printed(render_table, result(passed_tool_calls=["multiply"]))
    assert "Reliability Summary" in text
    for row in ALWAYS:
        assert row in text
    for row in OPTIONAL.values():
        assert row not in text
    assert "['multiply']" in text
    assert "000000000000000000000000000000ab" in text


@pytest.mark.parametrize(("field", "row"), OPTIONAL.items(), ids=list(OPTIONAL))
def test_a_non_empty_list_gets_its_row(field, row):
    text = printed(render_table, result("FAILED", **{field: ["entry [bold]x[/bold]"]}))
    assert row in text
    assert "['entry [bold]x[/bold]']" in text  # printed as text, never as rich markup


def test_many_runs_get_one_row_each_and_totals():
    results = [
        result(agent="calc", passed_tool_calls=["add"], chain=[Attempt("add", {}, OK, "calc", ("calc",))]),
        result("FAILED", agent="web", score=0.5, missing_tool_calls=["search"], failed_tool_calls=["shell"]),
    ]
    text = printed(render_results, results)
    assert "Reliability Summary" in text
    assert "calc" in text and "web" in text
    assert "…000000ab" in text and "000000000000000000000000000000ab" not in text  # short ids; JSON has them whole
    assert "missing: search" in text and "unexpected: shell" in text
    assert "2 runs: 1 passed, 1 failed; mean score 0.75; 1 tool calls" in text


def test_many_runs_fit_80_columns_with_their_source_files():
    long_id = 0x0AF7651916CD43DD8448EB211C80319C
    results = [
        RunResult(long_id, 0xCD, "calculator-agent", "math-expectation", Verdict("FAILED", "math-expectation", score=0.5,
                  missing_tool_calls=["multiply (requested but refused/errored — execution matching, new in 2.8.0)"]),
                  0.0, source="traces/2026-12-01/calculator_single_tool.json"),
        RunResult(long_id + 1, 0xCE, "web", "default", Verdict("PASSED", "default"), 0.0, source="traces/web.json"),
    ]
    console = Console(record=True, width=80)
    render_results(results, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "Trace" in line)
    for column in ("Trace", "Source", "Agent", "Expectation", "Status", "Score"):
        assert column in header  # every header whole on its line: nothing squeezed out
    assert "…1c80319c" in text and "…1c80319d" in text and "0af7651916cd43dd" not in text
    assert "FAILED" in text and "PASSED" in text
    assert "web.json" in text
    assert "…1c80319c  missing: multiply (requested but refused/errored" in text  # problems get whole lines


def test_results_from_no_file_get_no_source_column():
    text = printed(render_results, [result(passed_tool_calls=["add"])])
    assert "Source" not in text
