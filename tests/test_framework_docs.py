"""Every captured framework has a page in docs/frameworks/, and its wiring snippet is code a
user can paste: the Python blocks parse, and every name they import from ``otel_reliability``
exists.

The snippets of smolagents.md, autogen.md and openai_agents_guardrails.md also run as written,
with a live scripted run through them, in their frameworks' venvs
(tests/live/live_<framework>_docs.py, run by tests/test_live_frameworks.py). The other pages
are only checked here: their frameworks are not installed in CI.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from .corpus import CORPUS

PAGES = Path(__file__).resolve().parents[1] / "docs" / "frameworks"
FENCED = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def page_for(folder: str) -> Path | None:
    """A corpus folder's page: its own, or the page of the framework it is a mode of
    (``google_adk_no_content`` → ``google_adk.md``, ``strands_latest_semconv`` → ``strands.md``)."""
    names = [p.stem for p in PAGES.glob("*.md") if folder == p.stem or folder.startswith(p.stem + "_")]
    return PAGES / f"{max(names, key=len)}.md" if names else None


def blocks(page: Path, language: str) -> list[str]:
    return [code for lang, code in FENCED.findall(page.read_text()) if lang == language]


@pytest.mark.parametrize("folder", sorted(p.name for p in CORPUS.iterdir() if p.is_dir()))
def test_every_captured_framework_has_a_page(folder):
    assert page_for(folder) is not None, f"docs/frameworks/ has no page for {folder}"


@pytest.mark.parametrize("page", sorted(PAGES.glob("*.md")), ids=lambda p: p.stem)
def test_a_page_installs_wires_and_says_what_the_spans_tell(page):
    text = page.read_text()
    assert blocks(page, "bash") and "otel-reliability" in blocks(page, "bash")[0], "an install line first"
    assert "ReliabilitySpanProcessor" in text or "otel-reliability serve" in text
    assert re.search(r"^## .*\btell\b", text, re.M), "a section on what the spans can and cannot tell"


@pytest.mark.parametrize("page", sorted(p for p in PAGES.glob("*.md") if blocks(p, "python")), ids=lambda p: p.stem)
def test_a_page_s_python_snippet_parses_and_its_otel_reliability_names_exist(page):
    imported = []
    for code in blocks(page, "python"):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "otel_reliability":
                imported += [(node.module, alias.name) for alias in node.names]
    assert imported, "the snippet wires otel_reliability"
    for module, name in imported:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"
