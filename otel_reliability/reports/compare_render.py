"""A ``Comparison`` as a terminal table, as Markdown and as JSON (``compare --format``).

The three say the same things: per expectation (and overall) and per agent the runs,
pass rate, its change in rate points, mean score and mean trajectory F1 as "before →
after" ("—" where a side has no figure); then the runs that newly fail with their
reasons, those that newly pass, those no longer evaluated (with why), those on one side
only; and the verdict of the gate.
"""

from __future__ import annotations

from typing import Any, Iterable

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from otel_reliability.emitters.table import short_trace
from otel_reliability.reports.compare import Comparison, GroupChange, RunChange, SideStats
from otel_reliability.results import RunResult, span_hex, trace_hex

__all__ = [
    "HEADERS", "comparison_document", "comparison_markdown", "comparison_notes", "figures", "render_comparison", "run_lists",
    "status",
]

NONE = "—"  # a figure one side has no value for


def rate(value: float | None) -> str:
    """A pass rate as a percentage.

    >>> rate(0.75), rate(None)
    ('75.0%', '—')
    """
    return NONE if value is None else f"{value:.1%}"


def mean(value: float | None) -> str:
    return NONE if value is None else f"{value:.2f}"


def points(drop: float | None) -> str:
    """A pass rate's change in rate points, signed (a drop is negative).

    >>> points(0.5), points(-0.125), points(0.0), points(None)
    ('-50.0', '+12.5', '0.0', '—')
    """
    if drop is None:
        return NONE
    change = -drop * 100
    return "0.0" if abs(change) < 0.05 else f"{change:+.1f}"


def figures(group: GroupChange) -> list[str]:
    """The "before → after" cells of a group: runs, pass rate, change, mean score, trajectory F1."""
    before, after = group.before, group.after
    return [
        f"{before.runs} → {after.runs}",
        f"{rate(before.pass_rate)} → {rate(after.pass_rate)}",
        points(group.drop),
        f"{mean(before.mean_score)} → {mean(after.mean_score)}",
        f"{mean(before.mean_trajectory_f1)} → {mean(after.mean_trajectory_f1)}",
    ]


HEADERS = ["Runs", "Pass rate", "Change", "Mean score", "Trajectory F1"]


def comparison_notes(comparison: Comparison) -> list[str]:
    """The sentences under the tables: what the gate decided, how runs were paired, what differs in kind."""
    allowed = f"{comparison.max_drop * 100:.1f}"
    regressed = [g for g in [comparison.overall, *comparison.expectations] if g.regressed]
    if regressed:
        lines = [
            f"Regressed: the pass rate of {_named(g, comparison)} fell {points(g.drop).lstrip('-')} points (allowed: {allowed})."
            for g in regressed
        ]
    else:
        lines = [f"No pass rate fell more than {allowed} points."]
    if not comparison.changed:
        lines.append("No changes: the same runs, verdicts and figures on both sides.")
    lines.append(
        "Runs paired by expectation, agent and trace file."
        if comparison.pairing == "file"
        else "Runs paired by expectation, agent and position (the n-th run of each, by start time)."
    )
    for group in comparison.expectations:
        if group.expectation_changed:
            lines.append(
                f"Expectation '{group.name}' differs between the sides (digest {_digests(group.before)} → "
                f"{_digests(group.after)}): the comparison judged different expectations under one name."
            )
    if comparison.baseline_evaluators != comparison.candidate_evaluators:
        lines.append(
            f"Evaluators: {', '.join(comparison.baseline_evaluators) or NONE} → {', '.join(comparison.candidate_evaluators) or NONE}."
        )
    return lines


def run_line(change: RunChange) -> str:
    """One paired run: where it is, its verdict before and after, its candidate trace.

    >>> from otel_reliability.model import Verdict
    >>> from otel_reliability.results import RunResult
    >>> old = RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0)
    >>> run_line(RunChange("math", "calc", "run 1", old, None))
    "'math' · calc · run 1: PASSED (…00000001) → —"
    """
    before = status(change.baseline)
    after = status(change.candidate)
    return f"'{change.expectation}' · {change.agent} · {change.case}: {before} → {after}"


def status(result: RunResult | None) -> str:
    """A run's verdict and short trace id; "—" for a side without the run."""
    return NONE if result is None else f"{result.verdict.eval_status} ({short_trace(result.trace_id)})"


def _named(group: GroupChange, comparison: Comparison) -> str:
    return "all runs" if group is comparison.overall else f"'{group.name}'"


def _digests(stats: SideStats) -> str:
    return ", ".join(sorted(digest[:12] for digest in stats.digests))


def render_comparison(comparison: Comparison, console: Console | None = None) -> None:
    """Print the comparison: two tables, the run lists, then the notes; fits 80 columns.

    >>> import io
    >>> from otel_reliability.reports.compare import compare_results
    >>> console = Console(file=io.StringIO(), record=True, width=80)
    >>> render_comparison(compare_results([], []), console)
    >>> "No changes" in console.export_text()
    True
    """
    console = console or Console()
    console.print(Text(f"Compared: {comparison.baseline_source} → {comparison.candidate_source}", style="bold"))
    for title, label, groups in (
        ("By expectation", "Expectation", [*comparison.expectations, comparison.overall]),
        ("By agent", "Agent", comparison.agents),
    ):
        table = Table(title=title, header_style="bold magenta", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, 1))
        table.add_column(label, overflow="fold", min_width=len(label), max_width=22)
        for header in HEADERS:
            table.add_column(header, no_wrap=True)
        for group in groups:
            name = Text(group.name, style="bold") if group is comparison.overall else Text(group.name)
            table.add_row(name, *figures(group), style="red" if group.regressed else None)
        console.print(table)
    for title, changes in run_lists(comparison):
        console.print(Text(f"{title} ({len(changes)})", style="bold"))
        for change in changes:
            console.print(Text(run_line(change)), overflow="fold")
            for reason in change.reasons:
                console.print(Text(f"    {reason}"), overflow="fold")
    for line in comparison_notes(comparison):
        console.print(Text(line), overflow="fold")


def run_lists(comparison: Comparison) -> Iterable[tuple[str, list[RunChange]]]:
    """The non-empty run lists, newly failing first."""
    for title, changes in (
        ("Newly failing", comparison.newly_failing),
        ("Newly passing", comparison.newly_passing),
        ("Newly not evaluated", comparison.newly_not_evaluated),
        ("Only in the baseline", comparison.only_in_baseline),
        ("Only in the candidate", comparison.only_in_candidate),
    ):
        if changes:
            yield title, changes


def comparison_markdown(comparison: Comparison, level: int = 1, *, title: bool = True) -> str:
    """The comparison as Markdown; ``level`` is its title's heading level (2 inside a report,
    which writes its own heading: ``title=False`` leaves this one out).

    >>> from otel_reliability.reports.compare import compare_results
    >>> comparison_markdown(compare_results([], []), level=2).splitlines()[0]
    '## Compared: baseline → candidate'
    """
    head = "#" * level
    header = f"Compared: {_md(comparison.baseline_source)} → {_md(comparison.candidate_source)}"
    lines = [f"{head} {header}" if title else header, ""]
    lines += [f"- {_md(note)}" for note in comparison_notes(comparison)] + [""]
    for heading, label, groups in (
        ("By expectation", "expectation", [*comparison.expectations, comparison.overall]),
        ("By agent", "agent", comparison.agents),
    ):
        lines += [f"{head}# {heading}", "", f"| {label} | " + " | ".join(h.lower() for h in HEADERS) + " |",
                  "|---" * (len(HEADERS) + 1) + "|"]
        for group in groups:
            name = f"**{_md(group.name)}**" if group is comparison.overall else _md(group.name)
            flag = " ⚠ regressed" if group.regressed else ""
            lines.append(f"| {name}{flag} | " + " | ".join(figures(group)) + " |")
        lines.append("")
    for heading, changes in run_lists(comparison):
        lines += [f"{head}# {heading} ({len(changes)})", "", "| expectation | agent | case | before | after | reasons |",
                  "|---|---|---|---|---|---|"]
        for change in changes:
            cells = [change.expectation, change.agent, change.case, status(change.baseline), status(change.candidate),
                     "; ".join(change.reasons)]
            lines.append("| " + " | ".join(_md(cell) or " " for cell in cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """The comparison as JSON (``compare --format json``): ids in hex, ``null`` where the
    tables print "—".

    >>> from otel_reliability.reports.compare import compare_results
    >>> document = comparison_document(compare_results([], []))
    >>> document["regressed"], document["overall"]["baseline"]["pass_rate"]
    (False, None)
    """
    return {
        "baseline": {"source": comparison.baseline_source, "evaluators": comparison.baseline_evaluators},
        "candidate": {"source": comparison.candidate_source, "evaluators": comparison.candidate_evaluators},
        "max_drop": comparison.max_drop,
        "regressed": comparison.regressed,
        "changed": comparison.changed,
        "pairing": comparison.pairing,
        "overall": _group_json(comparison.overall),
        "expectations": [_group_json(g, "expectation") for g in comparison.expectations],
        "agents": [_group_json(g, "agent") for g in comparison.agents],
        "newly_failing": [_run_json(c) for c in comparison.newly_failing],
        "newly_passing": [_run_json(c) for c in comparison.newly_passing],
        "newly_not_evaluated": [_run_json(c) for c in comparison.newly_not_evaluated],
        "only_in_baseline": [_run_json(c) for c in comparison.only_in_baseline],
        "only_in_candidate": [_run_json(c) for c in comparison.only_in_candidate],
    }


def _group_json(group: GroupChange, key: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {key: group.name} if key else {}
    per_expectation = key == "expectation"
    data.update(
        baseline=_stats_json(group.before, per_expectation),
        candidate=_stats_json(group.after, per_expectation),
        # rounded: 0.75 - 0.7 is 0.05, not 0.050000000000000044
        pass_rate_change=None if group.drop is None else round(-group.drop, 12),
        regressed=group.regressed,
    )
    if per_expectation:
        data["expectation_changed"] = group.expectation_changed
    return data


def _stats_json(stats: SideStats, with_digests: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "runs": stats.runs,
        "passed": stats.passed,
        "failed": stats.failed,
        "pass_rate": stats.pass_rate,
        "mean_score": stats.mean_score,
        "mean_trajectory_f1": stats.mean_trajectory_f1,
    }
    if with_digests:  # an expectation's content; an agent's or all runs' digests would mix expectations
        data["expectation_digests"] = sorted(stats.digests)
    return data


def _run_json(change: RunChange) -> dict[str, Any]:
    return {
        "expectation": change.expectation,
        "agent": change.agent,
        "case": change.case,
        "baseline": _result_json(change.baseline),
        "candidate": _result_json(change.candidate),
        "reasons": list(change.reasons),
    }


def _result_json(result: RunResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "trace_id": trace_hex(result.trace_id),
        "run_span_id": span_hex(result.run_span_id),
        "eval_status": result.verdict.eval_status,
        "score": result.verdict.score,
        "source": result.source,
    }
