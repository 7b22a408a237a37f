"""``otel-reliability report``: verdicts from a results store or an eval JSON document → the report."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation, Match
from otel_reliability.reports.cli import register
from otel_reliability.results import results_document
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store

from .corpus import trace_files
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

EXPECTATIONS = [
    Expectation(name="calculator multiplies", match=Match(agent="Calculator Agent"), expected_tool_calls=["multiply"]),
    Expectation(name="no errors", fail_on=["error"]),
]


def report(*args: str) -> int:
    parser = argparse.ArgumentParser(prog="otel-reliability")
    register(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["report", *args])
    return parsed.run(parsed)


@pytest.fixture(scope="module")
def results():
    """The agno corpus's verdicts; the corpus reuses ids across files, and stores key runs by id."""
    engine = Engine(EXPECTATIONS)
    judged = [r for path in trace_files("agno") for r in judge_spans(engine, read_spans(path))]
    return [replace(result, trace_id=number) for number, result in enumerate(judged, start=1)]


@pytest.mark.parametrize("kind", ["sqlite", "jsonl", "postgres", "eval-json"])
def test_every_source_gives_the_same_report(kind, results, tmp_path, capsys, request):
    if kind == "eval-json":
        source = tmp_path / "eval.json"
        source.write_text(json.dumps(results_document(results)))
    else:
        if kind == "postgres":
            source = fresh_schema_url(request.getfixturevalue("postgres_server"))
        else:
            source = tmp_path / ("results.db" if kind == "sqlite" else "results.jsonl")
        store = open_store(source)
        for result in results:
            store.add(result)
        store.close()
    code = report(str(source))
    text = capsys.readouterr().out
    assert code == 1  # two runs errored a tool
    assert f"**Correct runs:** {sum(r.passed for r in results)}/{len(results)}" in text
    assert "| no errors | 77.78% | 7/9 | policy ×2 |" in text  # every source names the policy violations (§10, 2026-12-01)


def test_html_output_is_chosen_by_the_file_name_and_expectations_fill_the_expected_column(results, tmp_path):
    source = tmp_path / "eval.json"
    source.write_text(json.dumps(results_document(results)))
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"expectations": [e.model_dump(exclude_defaults=True) for e in EXPECTATIONS]}))
    output = tmp_path / "report.html"
    report(str(source), "--output", str(output), "--expectations", str(rules))
    page = output.read_text()
    assert page.startswith("<!DOCTYPE html>") and "fail on error" in page


@pytest.mark.parametrize("content, message", [("{oops", "not JSON"), ('{"runs": 1}', "expected {\"results\""),
                                              ('{"results": [{"trace_id": "zz"}]}', "not a verdict")])
def test_bad_sources_exit_2_with_the_reason(content, message, tmp_path, capsys):
    source = tmp_path / "bad.json"
    source.write_text(content)
    assert report(str(source)) == 2
    assert message in capsys.readouterr().err
