"""Verdicts as rich tables, in the shape Agno users know from ``ReliabilityResult.print_eval``.

Values are printed as plain text (never as rich markup: they come from spans), and
name lists as Python list reprs, as Agno prints them.
"""

from __future__ import annotations

from typing import Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from otel_reliability.results import PROBLEM_LISTS, RunResult, span_hex, trace_hex

TITLE = "Reliability Summary"

_OPTIONAL_ROWS = (
    ("Additional Tool Calls", "additional_tool_calls"),
    ("Missing Tool Calls", "missing_tool_calls"),
    ("Failed Argument Checks", "failed_argument_checks"),
    ("Passed Argument Checks", "passed_argument_checks"),
    ("Order Violations", "order_violations"),
    ("Policy Violations", "policy_violations"),
)


def render_table(result: RunResult, console: Console | None = None) -> None:
    """Print one run's verdict; empty optional lists get no row, as in Agno.

    >>> import io
    >>> from otel_reliability.model import Verdict
    >>> console = Console(file=io.StringIO(), record=True, width=120)
    >>> render_table(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0), console)
    >>> "Evaluation Status" in console.export_text()
    True
    """
    verdict = result.verdict
    table = Table(title=TITLE, show_header=True, header_style="bold magenta")
    table.add_column("Metric")
    table.add_column("Value")
    rows = [
        ("Agent", result.agent),
        ("Expectation", result.expectation),
        ("Trace", f"{trace_hex(result.trace_id)} (run span {span_hex(result.run_span_id)})"),
        ("Evaluation Status", verdict.eval_status),
        ("Score", f"{verdict.score:.2f}"),
        ("Failed Tool Calls", str(verdict.failed_tool_calls)),
        ("Passed Tool Calls", str(verdict.passed_tool_calls)),
    ]
    rows += [(label, str(getattr(verdict, name))) for label, name in _OPTIONAL_ROWS if getattr(verdict, name)]
    for label, value in rows:
        table.add_row(label, Text(value))
    (console or Console()).print(table)


def render_results(results: Iterable[RunResult], console: Console | None = None) -> None:
    """Print many runs: one row each, with what failed one per line, then the totals (mean score).

    >>> import io
    >>> from otel_reliability.model import Verdict
    >>> console = Console(file=io.StringIO(), record=True, width=120)
    >>> render_results([RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0)], console)
    >>> "1 runs" in console.export_text()
    True
    """
    table = Table(title=TITLE, show_header=True, header_style="bold magenta")
    table.add_column("Trace", overflow="fold")
    for column in ("Agent", "Expectation", "Status", "Score", "Calls"):
        table.add_column(column)
    table.add_column("Problems", overflow="fold")
    runs = passed = failed = calls = 0
    score = 0.0
    for result in results:
        verdict = result.verdict
        problems = [f"{label}: {entry}" for label, name in PROBLEM_LISTS for entry in getattr(verdict, name)]
        problems += [f"not evaluated: {reason}" for reason in verdict.unevaluated_checks]
        table.add_row(
            trace_hex(result.trace_id),
            Text(result.agent),
            Text(result.expectation),
            verdict.eval_status,
            f"{verdict.score:.2f}",
            str(len(verdict.chain)),
            Text("\n".join(problems)),
        )
        runs += 1
        passed += result.passed
        failed += result.failed
        calls += len(verdict.chain)
        score += verdict.score
    table.add_section()
    mean = f"{score / runs:.2f}" if runs else "-"
    totals = f"{failed} failed" + (f", {runs - passed - failed} not evaluated" if runs - passed - failed else "")
    table.add_row(f"{runs} runs", "", "", f"{passed} passed", mean, str(calls), totals)
    (console or Console()).print(table)
