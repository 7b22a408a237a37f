"""Verdicts as rich tables, in the shape Agno users know from ``ReliabilityResult.print_eval``.

Values are printed as plain text (never as rich markup: they come from spans), and
name lists as Python list reprs, as Agno prints them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from otel_reliability.emitters.diff import argument_summary
from otel_reliability.expectations import Expectation
from otel_reliability.results import PROBLEM_LISTS, RunResult, span_hex, trace_hex

TITLE = "Reliability Summary"
SHORT_ID = 8  # hex digits of a trace id the many-runs table shows

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


def short_trace(trace_id: int) -> str:
    """A trace id's last ``SHORT_ID`` hex digits: the random part whatever the generator
    (AWS X-Ray ids, for one, start with the time, so their heads repeat).

    >>> short_trace(0x0AF7651916CD43DD8448EB211C80319C)
    '…1c80319c'
    """
    return "…" + trace_hex(trace_id)[-SHORT_ID:]


def render_results(
    results: Iterable[RunResult], console: Console | None = None, expectations: Mapping[str, Expectation] | None = None
) -> None:
    """Print many runs: one row each, the totals (mean score, tool calls), then what failed,
    one line per problem under the run's short trace id.

    Built to fit an 80-column terminal: trace ids are cut to their last 8 hex digits
    (``eval --format json`` has them whole), names fold within their columns, and the
    problems, the longest texts, get whole lines below the table. A ``Source`` column
    names the file of each run when the runs came from files. With ``expectations`` (by
    name), a failed argument check shows what was expected against what the calls carried,
    each value shortened (``diff.argument_summary``).

    >>> import io
    >>> from otel_reliability.model import Verdict
    >>> console = Console(file=io.StringIO(), record=True, width=80)
    >>> render_results([RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0)], console)
    >>> "1 runs: 1 passed" in console.export_text()
    True
    """
    results = list(results)
    with_source = any(r.source is not None for r in results)
    table = Table(title=TITLE, show_header=True, header_style="bold magenta", box=box.SIMPLE_HEAD,
                  show_edge=False, padding=(0, 0, 0, 1))
    table.add_column("Trace", no_wrap=True)
    for column, widest in (("Source", 18), ("Agent", 16), ("Expectation", 16))[0 if with_source else 1:]:
        table.add_column(column, overflow="fold", min_width=len(column), max_width=widest)
    table.add_column("Status", no_wrap=True)
    table.add_column("Score", no_wrap=True)
    runs = passed = failed = calls = 0
    score = 0.0
    problems: list[Text] = []
    for result in results:
        verdict = result.verdict
        trace = short_trace(result.trace_id)
        source = [Text(Path(result.source).name if result.source else "")] if with_source else []
        table.add_row(trace, *source, Text(result.agent), Text(result.expectation), verdict.eval_status,
                      f"{verdict.score:.2f}")
        expectation = (expectations or {}).get(result.expectation)
        for label, name in PROBLEM_LISTS:
            for entry in getattr(verdict, name):
                if name == "failed_argument_checks":
                    entry = argument_summary(entry, verdict.chain, expectation)
                problems.append(Text(f"{trace}  {label}: {entry}"))
        problems += [Text(f"{trace}  not evaluated: {reason}") for reason in verdict.unevaluated_checks]
        runs += 1
        passed += result.passed
        failed += result.failed
        calls += len(verdict.chain)
        score += verdict.score
    mean = f"{score / runs:.2f}" if runs else "-"
    console = console or Console()
    console.print(table)
    unjudged = f", {runs - passed - failed} not evaluated" if runs - passed - failed else ""
    console.print(Text(f"{runs} runs: {passed} passed, {failed} failed{unjudged}; mean score {mean}; {calls} tool calls"))
    if problems:
        console.print(Text("Problems", style="bold"))
        for line in problems:
            console.print(line, overflow="fold")
