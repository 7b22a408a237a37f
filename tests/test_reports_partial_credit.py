"""Partial credit in the verdict reports: the mean F1 / LCS-F1 per expectation and each run's
values, in Markdown and HTML — and no such column when no run was measured (BFCL reports,
runs judged by the default expectation)."""

from __future__ import annotations

from otel_reliability.bfcl.report import bfcl_report
from otel_reliability.engine import Engine
from otel_reliability.expectations import Expectation
from otel_reliability.model import OK, Attempt, Run
from otel_reliability.reports import render_html, render_markdown, verdict_report

from .test_reports_markdown import article_score, section

RESEARCH = Expectation(name="research", expected_tool_calls=["search", "summarize"], expected_chain=["search", "summarize"])


def run_of(trace_id: int, *tools: str) -> Run:
    attempts = [Attempt(tool, {}, OK, "bot", ("bot",), start_ns=i + 1) for i, tool in enumerate(tools)]
    return Run(trace_id, 2, "bot", "invoke_agent bot", 1, 9, own_attempts=attempts)


def research_report():
    engine = Engine([RESEARCH])
    results = [engine.judge(run_of(1, "search", "summarize")), engine.judge(run_of(2, "summarize", "search", "search"))]
    # run 2: F1 = 2·2/(3+2) = 0.8; LCS-F1 = 2·1/(3+2) = 0.4; means 0.9 and 0.7
    return verdict_report(results, expectations=[RESEARCH])


def test_markdown_shows_the_mean_per_expectation_and_each_runs_values():
    text = render_markdown(research_report())
    metrics = section(text, "## 2. Metrics")
    assert "| partial credit (mean) |" in metrics
    assert "| F1 0.90, LCS-F1 0.70 |" in metrics
    samples = section(text, "## 3. Sample details")
    assert "| F1 1.00, LCS-F1 1.00 |" in samples and "| F1 0.80, LCS-F1 0.40 |" in samples


def test_html_shows_the_same_columns():
    page = render_html(research_report())
    assert page.count("<th>Partial credit (mean)</th>") == 1 and page.count("<th>Partial credit</th>") == 1
    assert '<td class="num">F1 0.90, LCS-F1 0.70</td>' in page
    assert '<td class="num">F1 0.80, LCS-F1 0.40</td>' in page


def test_no_column_when_nothing_was_measured():
    default_only = verdict_report([Engine().judge(run_of(1, "search"))])
    for text in (render_markdown(default_only), render_html(default_only), render_markdown(bfcl_report(article_score()))):
        assert "partial credit" not in text.lower()
