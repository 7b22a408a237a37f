"""The HTML report opened in headless Chromium (Debian ``chromium``): the screenshot is produced
and is not blank, and the page's DOM holds all five parts — for a BFCL score and for verdicts —
and the sixth, the comparison with a baseline, when the report has one."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation, Match
from otel_reliability.bfcl.report import bfcl_report
from otel_reliability.reports import render_html, verdict_report
from otel_reliability.reports.compare import compare_results
from otel_reliability.sources import read_spans

from .corpus import trace_files

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")

PARTS = [("overview", "1. Overview"), ("metrics", "2. Metrics"), ("samples", "3. Sample details"),
         ("chart", "4. Accuracy chart"), ("recommendations", "5. Recommendations")]
WIDTH, HEIGHT = 1280, 2300


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )


def png_facts(path: Path) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values in the decoded image data."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    position, pixels = 8, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        if kind == b"IDAT":
            pixels += data[position + 8 : position + 8 + length]
        position += 12 + length
    return width, height, len(set(zlib.decompress(pixels)))


def bfcl_page() -> str:
    pytest.importorskip("bfcl_eval", reason="the dataset ships in bfcl-eval: pip install --no-deps bfcl-eval==2026.3.23")
    from otel_reliability.bfcl.cases import valid_answer
    from otel_reliability.bfcl.dataset import load_category
    from otel_reliability.bfcl.score import judge_entry, BfclScore

    rng = random.Random(3)
    samples = []
    for category in ("simple_python", "multiple", "parallel", "irrelevance"):
        for index, entry in enumerate(load_category(category)[:5]):
            if entry.possible_answer is None:
                calls = [] if index % 2 else [{entry.function[0]["name"]: {}}]
            else:
                calls = valid_answer(entry, rng, pick="random")
                if index == 4:
                    calls = [{name + "_v2": args} for call in calls for name, args in call.items()]
            samples.append(judge_entry(entry, calls, decoded=True))
    return render_html(bfcl_report(BfclScore("TestAgent", "official", samples)))


EXPECTATIONS = [
    Expectation(name="calculator multiplies", match=Match(agent="Calculator Agent"), expected_tool_calls=["multiply"]),
    Expectation(name="no errors", fail_on=["error"]),
]


def agno_verdicts(expectations: list[Expectation]) -> list:
    engine = Engine(expectations)
    return [r for path in trace_files("agno") for r in judge_spans(engine, read_spans(path))]


def verdict_page() -> str:
    return render_html(verdict_report(agno_verdicts(EXPECTATIONS), expectations=EXPECTATIONS))


def compared_page() -> str:
    """The same runs judged again with the calculator also expected to divide: they newly fail."""
    stricter = [EXPECTATIONS[0].model_copy(update={"expected_tool_calls": ["multiply", "divide"]}), EXPECTATIONS[1]]
    candidate = agno_verdicts(stricter)
    report = verdict_report(candidate, expectations=stricter)
    report.comparison = compare_results(agno_verdicts(EXPECTATIONS), candidate)
    assert report.comparison.newly_failing
    return render_html(report)


@pytest.mark.parametrize(
    "build, parts",
    [(bfcl_page, PARTS), (verdict_page, PARTS), (compared_page, PARTS + [("comparison", "6. Compared with the baseline")])],
    ids=["bfcl-score", "verdicts", "verdicts-with-baseline"],
)
def test_chromium_renders_every_part(build, parts, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(build(), encoding="utf-8")
    screenshot = tmp_path / "report.png"

    shot = chromium(page, tmp_path / "profile", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={screenshot}")
    assert screenshot.is_file(), shot.stderr[-2000:]
    width, height, distinct = png_facts(screenshot)
    assert (width, height) == (WIDTH, HEIGHT)
    assert distinct > 50  # text, bars and badges, not a blank page

    dom = chromium(page, tmp_path / "profile", "--dump-dom").stdout
    positions = []
    for anchor, heading in parts:
        assert f'<section id="{anchor}">' in dom and f"<h2>{heading}</h2>" in dom
        positions.append(dom.index(f'<section id="{anchor}">'))
    assert positions == sorted(positions)
    assert ('<section id="comparison">' in dom) is ('<tr class="regressed' in dom) is (len(parts) == 6)
    assert dom.count("<rect ") >= 4 and "badge fail" in dom and "badge pass" in dom
