"""Every captured framework has a page in docs/frameworks/, and its wiring snippet is code a
user can paste: the Python blocks parse, every name they import from ``otel_reliability``
exists, and the install line brings the OTLP/gRPC exporter they import.

Every Python page's snippet also runs as written, in a process of its own, with a live scripted
run through it: the run span reaches a real OTLP/gRPC receiver and the store with the verdict
``eval`` gives the captured scenario (tests/live/live_<page>_docs.py, run by
tests/test_live_frameworks.py). In the main .venv: agno.md, pydantic_ai.md. In their
frameworks' venvs (.venv-live-<framework>, built by .ci/setup): autogen.md, crewai.md,
google_adk.md, langgraph.md and langgraph_subagents.md (langgraph_subagents' venv),
llama_index.md, openai_agents.md and openai_agents_guardrails.md (the guardrails venv),
openai_v2.md, openai_v2_latest.md, smolagents.md, strands.md, traceloop_langgraph.md.

vercel_ai.md's JavaScript snippet runs in Node.js against a real receiver
(tests/test_framework_docs_node.py), genkit.md's too (tests/test_framework_docs_genkit.py), and
spring_ai.md's dependencies, properties and Java on the JVM (tests/test_framework_docs_spring_ai.py). Only checked here: vercel_ai_otel.md (``ai`` 7, which
cannot share tests/node with ``ai`` 6; its SDK call is only a comment).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from .corpus import CORPUS

PAGES = Path(__file__).resolve().parents[1] / "docs" / "frameworks"
LIVE = Path(__file__).resolve().parent / "live"
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


@pytest.mark.parametrize("page", sorted(p for p in PAGES.glob("*.md") if blocks(p, "python")), ids=lambda p: p.stem)
def test_a_page_s_install_line_brings_the_otlp_exporter_its_snippet_imports(page):
    if any("opentelemetry.exporter.otlp.proto.grpc" in code for code in blocks(page, "python")):
        assert "otel-reliability[otlp-grpc]" in blocks(page, "bash")[0], "pip install 'otel-reliability[otlp-grpc]'"


@pytest.mark.parametrize("page", sorted(p for p in PAGES.glob("*.md") if blocks(p, "python")), ids=lambda p: p.stem)
def test_a_python_page_s_snippet_has_a_live_run(page):
    assert (LIVE / f"live_{page.stem}_docs.py").exists(), f"tests/live/live_{page.stem}_docs.py runs the snippet"
