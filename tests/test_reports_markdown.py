"""Five-part reports as Markdown: for BFCL scores (per category) and for verdicts (per expectation)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from otel_reliability.bfcl.score import BfclScore, SampleResult
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation, Match
from otel_reliability.bfcl.report import bfcl_report
from otel_reliability.reports import render_markdown, verdict_report
from otel_reliability.reports.model import GroupRow, Report, SampleRow
from otel_reliability.reports.recommend import bfcl_recommendations
from otel_reliability.sources import read_spans

from .corpus import trace_files

HEADINGS = ["## 1. Overview", "## 2. Metrics", "## 3. Sample details", "## 4. Accuracy chart", "## 5. Recommendations"]


def sample(index: int, category: str, valid: bool, error_type: str | None = None) -> SampleResult:
    return SampleResult(f"{category}_{index}", category, f"Question {index}?", [{"f": {"x": index}}],
                        [{"f": {"x": [index]}}], valid, error_type)


def article_score() -> BfclScore:
    """The article's report: TestAgent, simple_python, 5/5."""
    return BfclScore("TestAgent", "official", [sample(i, "simple_python", True) for i in range(5)])


def mixed_score() -> BfclScore:
    samples = [sample(i, "simple_python", True) for i in range(4)] + [sample(4, "simple_python", False, "type_error:simple")]
    samples += [sample(i, "irrelevance", i == 0, None if i == 0 else "irrelevance_error:decoder_success") for i in range(3)]
    return BfclScore("Qwen3-8B", "official", samples)


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = [text.index(h) for h in HEADINGS if text.index(h) > start]
    return text[start : min(following) if following else len(text)]


def test_the_article_report_has_its_five_parts_in_order():
    text = render_markdown(bfcl_report(article_score()))
    assert [line for line in text.splitlines() if line.startswith("## ")] == HEADINGS
    overview = section(text, HEADINGS[0])
    assert "**Agent:** TestAgent" in overview and "**Category:** simple_python" in overview
    assert "**Accuracy:** 100.00%" in overview and "**Correct samples:** 5/5" in overview
    assert "| simple_python | 100.00% | 5/5 | — |" in section(text, HEADINGS[1])
    assert section(text, HEADINGS[2]).count("✅ correct") == 5
    assert "simple_python  " + "█" * 50 + " 100.00% (5/5)" in section(text, HEADINGS[3])
    assert "Excellent: every sample passed (5/5)" in section(text, HEADINGS[4])


def test_sample_rows_show_id_question_prediction_expected_and_verdict():
    text = render_markdown(bfcl_report(mixed_score()))
    row = next(line for line in text.splitlines() if line.startswith("| simple_python_4 "))
    assert row == "| simple_python_4 | simple_python | Question 4? | f(x=4) | f(x=[4]) | ❌ type_error:simple |"


def test_metrics_and_chart_cover_every_category_and_the_total():
    text = render_markdown(bfcl_report(mixed_score()))
    metrics = section(text, HEADINGS[1])
    assert "| simple_python | 80.00% | 4/5 | type_error:simple ×1 |" in metrics
    assert "| irrelevance | 33.33% | 1/3 | irrelevance_error:decoder_success ×2 |" in metrics
    chart = section(text, HEADINGS[3])
    assert re.search(r"overall +█{31}░{19}  62\.50% \(5/8\)", chart)


def test_cells_escape_pipes_and_newlines_and_truncate_long_text():
    long = "x" * 500
    report = Report("R", "a|b", "Category", "sample", [GroupRow("c", 0, 1)],
                    [SampleRow("id|1", "c", "line one\nline two", long, "e", False, "bad")], [])
    row = next(line for line in render_markdown(report).splitlines() if line.startswith("| id\\|1"))
    assert row.startswith("| id\\|1 | c | line one line two | " + "x" * 159 + "… |")


RECOMMENDATIONS = [
    pytest.param([GroupRow("simple_python", 5, 5)], {}, ["Excellent", "Only 5 samples", "Only one category"], ["below"],
                 id="article-perfect-but-small"),
    pytest.param([GroupRow("irrelevance", 30, 60)], {"irrelevance_error:decoder_success": 30},
                 ["irrelevance: 50.00% is below the 80% threshold", "30 samples: the agent called a function although none fits",
                  "Only one category"], ["Excellent", "Only 60"], id="irrelevance-failures"),
    pytest.param([GroupRow("simple_python", 45, 50), GroupRow("multiple", 49, 50)],
                 {"type_error:simple": 1, "simple_function_checker:wrong_func_name": 4, "type_error:nested": 1},
                 ["4 samples: wrong function names", "2 samples: values had the wrong type"],
                 ["below", "Only", "Excellent"], id="advice-ranked-by-count"),
]


@pytest.mark.parametrize("groups, failures, present, absent", RECOMMENDATIONS)
def test_recommendations_follow_the_figures_most_frequent_problem_first(groups, failures, present, absent):
    text = "\n".join(bfcl_recommendations(groups, Counter(failures), 0.8))
    positions = [text.index(phrase) for phrase in present]  # raises if a phrase is missing
    assert positions == sorted(positions)
    assert not [phrase for phrase in absent if phrase in text]


def test_verdict_reports_group_runs_per_expectation():
    expectations = [
        Expectation(name="calculator multiplies", match=Match(agent="Calculator Agent"), expected_tool_calls=["multiply"]),
        Expectation(name="no errors", fail_on=["error"]),
    ]
    engine = Engine(expectations)
    results = [r for path in trace_files("agno") for r in judge_spans(engine, read_spans(path))]
    report = verdict_report(results, expectations=expectations)
    text = render_markdown(report)
    assert [line for line in text.splitlines() if line.startswith("## ")] == HEADINGS
    names = {g.name for g in report.groups}
    assert names == {"calculator multiplies", "no errors"}
    assert report.total == len(results) and report.correct == sum(r.passed for r in results)
    rows = [line for line in section(text, HEADINGS[2]).splitlines() if re.match(r"\| [0-9a-f]{32}/[0-9a-f]{16} \|", line)]
    assert len(rows) == len(results) and any("❌" in row for row in rows) and any("✅" in row for row in rows)
    assert "| Expectation | accuracy | correct / total | failures |" in text
    assert "**Correct runs:**" in text
