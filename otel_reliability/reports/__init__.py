"""Evaluation reports in the five parts of the BFCL report article (SPEC §9).

Overview (agent, groups, accuracy, correct/total), per-group metrics, per-sample
details (id, question, prediction, expected, verdict), an accuracy chart, and
recommendations — as Markdown or as one self-contained HTML page.

Two sources, one ``Report``: ``otel_reliability.bfcl.report.bfcl_report(score)`` — a BFCL
score, one group per category — and here

- ``verdict_report(results)`` — verdicts from the processor, the receiver or ``eval``,
  one group per expectation and one row per run (``reports.cli``: ``otel-reliability report``).

>>> from otel_reliability.reports import render_markdown, verdict_report
>>> print(render_markdown(verdict_report([])).splitlines()[0])
# Tool-call reliability report
"""

from otel_reliability.reports.html import render_html
from otel_reliability.reports.markdown import render_markdown
from otel_reliability.reports.model import GroupRow, Report, SampleRow
from otel_reliability.reports.verdicts import verdict_report


def render(report: Report, fmt: str) -> str:
    """``fmt`` is ``"markdown"`` or ``"html"``."""
    if fmt == "html":
        return render_html(report)
    if fmt == "markdown":
        return render_markdown(report)
    raise ValueError(f"unknown report format {fmt!r} (use markdown or html)")


def format_for(path: str) -> str:
    """The report format a file name asks for: ``.html``/``.htm`` → HTML, anything else Markdown."""
    return "html" if str(path).lower().endswith((".html", ".htm")) else "markdown"


__all__ = ["GroupRow", "Report", "SampleRow", "format_for", "render", "render_html", "render_markdown", "verdict_report"]
