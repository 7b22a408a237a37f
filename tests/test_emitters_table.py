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
    assert "00000000000000000000000000000" in text  # ids are never elided
    assert "missing: search" in text and "unexpected: shell" in text
    totals = text.splitlines()[-2]
    for total in ("2 runs", "1 passed", "0.75", "1 failed"):
        assert total in totals
