"""Five-part reports as one self-contained HTML page: structure, escaping, the SVG chart, no network."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from otel_reliability.bfcl.score import BfclScore, SampleResult
from otel_reliability.bfcl.report import bfcl_report
from otel_reliability.reports import format_for, render, render_html
from otel_reliability.reports.model import GroupRow, Report, SampleRow

PART_IDS = ["overview", "metrics", "samples", "chart", "recommendations"]


class Outline(HTMLParser):
    """Section ids and h2 texts in document order, every tag opened, and SVG rects."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.headings: list[str] = []
        self.tags: list[str] = []
        self.rects: list[dict[str, str]] = []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attributes = dict(attrs)
        if tag == "section":
            self.sections.append(attributes.get("id", ""))
        elif tag == "h2":
            self._in_h2 = True
            self.headings.append("")
        elif tag == "rect":
            self.rects.append(attributes)

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2:
            self.headings[-1] += data


def outline(page: str) -> Outline:
    parser = Outline()
    parser.feed(page)
    return parser


def score() -> BfclScore:
    samples = [SampleResult(f"simple_python_{i}", "simple_python", f"Q{i}", [{"f": {"x": i}}], [{"f": {"x": [i]}}], i < 3,
                            None if i < 3 else "value_error:others") for i in range(4)]
    samples.append(SampleResult("irrelevance_0", "irrelevance", "Q", [], None, True))
    return BfclScore("TestAgent", "official", samples)


def test_the_page_has_the_five_parts_in_order():
    tree = outline(render_html(bfcl_report(score())))
    assert tree.sections == PART_IDS
    assert tree.headings == ["1. Overview", "2. Metrics", "3. Sample details", "4. Accuracy chart", "5. Recommendations"]


def test_the_chart_draws_one_bar_per_category_and_the_total_to_scale():
    tree = outline(render_html(bfcl_report(score())))
    fills = [r for r in tree.rects if r["fill"] != "#eaeef2"]
    tracks = [r for r in tree.rects if r["fill"] == "#eaeef2"]
    assert len(fills) == len(tracks) == 3  # simple_python, irrelevance, overall
    assert [float(r["width"]) / float(t["width"]) for r, t in zip(fills, tracks)] == [0.75, 1.0, 0.8]
    assert [r["fill"] for r in fills] == ["#c62828", "#2e7d32", "#f9a825"]  # below threshold, ≥ 90 %, in between


def test_text_from_the_data_is_escaped():
    hostile = "<script>alert(1)</script>"
    report = Report(hostile, hostile, "Category", "sample", [GroupRow(hostile, 0, 1)],
                    [SampleRow(hostile, hostile, hostile, hostile, hostile, False, hostile)], [hostile])
    page = render_html(report)
    assert "<script" not in page and page.count("&lt;script&gt;") >= 8
    assert "script" not in outline(page).tags


def test_the_page_loads_nothing_from_anywhere():
    page = render_html(bfcl_report(score()))
    tags = set(outline(page).tags)
    assert not tags & {"script", "link", "img", "iframe", "object", "embed"}
    assert not re.search(r"https?://|\bsrc=|url\(", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_the_file_name_picks_the_format():
    report = bfcl_report(score())
    assert format_for("out/report.HTML") == "html" and format_for("report.md") == "markdown"
    assert render(report, "html").startswith("<!DOCTYPE html>") and render(report, "markdown").startswith("# BFCL")
