"""``otel-reliability reputation``: standings as a rich table, JSON, or the article's Markdown report.

The command is driven through ``register(subparsers)`` on a parser of the same shape as
``otel-reliability``'s, against stores filled by ``Reputation.record`` from real verdicts.
"""

from __future__ import annotations

import argparse
import json

import pytest

from otel_reliability.expectations import Expectation, ExpectedOutput
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, OK, Attempt, Run
from otel_reliability.reputation import Reputation
from otel_reliability.reputation.cli import register
from otel_reliability.results import RunResult

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

WEATHER = Expectation(name="weather", expected_tool_calls=["get_weather"], expected_output=ExpectedOutput(contains=["25°C"]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="otel-reliability")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.run(args)


def fill(spec: str) -> None:
    """forecaster: three clean runs (Thiqah); flaky: a clean run, then an erroring one (Da'if:
    isnad 2 of 4, sidq 1 of 2, dabt 0 of 1 as the chain changed, adalah 2 of 2 → 50)."""
    reputation = Reputation(spec, expectations=[WEATHER])
    runs = [("forecaster", OK, "25°C")] * 3 + [("flaky", OK, "25°C"), ("flaky", ERROR, "no idea")]
    for i, (agent, outcome, output) in enumerate(runs):
        run = Run(i + 1, i + 1, agent, f"invoke_agent {agent}", 0, 9, own_attempts=[Attempt("get_weather", {}, outcome, agent, (agent,))])
        reputation.record(RunResult(i + 1, i + 1, agent, "weather", evaluate(run, WEATHER), 1_700_000_000.0 + i), output=output)
    reputation.close()


@pytest.fixture
def store(tmp_path) -> str:
    spec = str(tmp_path / "reliability.db")
    fill(spec)
    return spec


def test_table_lists_every_agent_with_score_grade_and_dimensions(store, capsys):
    assert main(["reputation", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "Agent Reputation" in out
    forecaster = next(line for line in out.splitlines() if "forecaster" in line)
    assert "100.0" in forecaster and "Thiqah" in forecaster and "3/100" in forecaster and "3 (3 passed)" in forecaster
    flaky = next(line for line in out.splitlines() if "flaky" in line)
    assert "50.0" in flaky and "Da'if" in flaky and "2 (1 passed)" in flaky


def test_json_gives_each_standing(store, capsys):
    assert main(["reputation", "--store", store, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    by_agent = {s["agent"]: s for s in document["standings"]}
    assert list(by_agent) == ["flaky", "forecaster"]
    forecaster = by_agent["forecaster"]
    assert (forecaster["score"], forecaster["grade"], forecaster["evaluations"], forecaster["window"]) == (100.0, "Thiqah", 3, 100)
    assert forecaster["dimensions"]["dabt"] == {"score": 100.0, "evidence": 2, "confidence": 2.0}
    flaky = by_agent["flaky"]
    assert flaky["dimensions"]["sidq"]["score"] == 50.0
    assert flaky["dimensions"]["dabt"]["score"] == 0.0  # the chain changed from ok to error
    assert (flaky["total_evaluations"], flaky["passed_evaluations"]) == (2, 1)


def test_markdown_is_the_articles_report_per_agent(store, capsys):
    assert main(["reputation", "--store", store, "--format", "markdown", "--agent", "forecaster"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Agent reputation\n\n## Reputation report: forecaster\n")
    assert "- Window: last 3 evaluations (window 100; 3 in all, 3 passed)" in out
    assert "- Overall score: 100.0 / 100\n- Grade: Thiqah" in out
    assert "| isnad (chain integrity) | 100.0 | pass |" in out
    assert "- [PASS] (sidq) fact_check: output states '25°C' (×3)" in out
    assert "flaky" not in out


def test_markdown_lists_failing_evidence_first(store, capsys):
    assert main(["reputation", "--store", store, "--format", "markdown", "--agent", "flaky"]) == 0
    evidence = capsys.readouterr().out.split("### Evidence\n")[1].splitlines()
    assert evidence[0].startswith("- [FAIL]")
    assert "- [FAIL] (dabt) stability: chain of 'weather' changed from flaky/get_weather:ok to flaky/get_weather:error" in evidence
    assert evidence[-1].startswith("- [PASS]")


def test_output_file(store, tmp_path, capsys):
    target = tmp_path / "reputation.md"
    assert main(["reputation", "--store", store, "--format", "markdown", "--output", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert "## Reputation report: flaky" in target.read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--store", "{tmp}/missing.db"], "missing.db: no such store"),
        (["--store", "{store}", "--config", "{tmp}/nope.yaml"], "nope.yaml: cannot read"),
        (["--store", "redis://cache/0"], "scheme 'redis' is not supported"),
    ],
    ids=["missing_store", "missing_config", "unknown_scheme"],
)
def test_bad_input_exits_2_with_a_message(store, tmp_path, capsys, argv, message):
    argv = [a.format(tmp=tmp_path, store=store) for a in argv]
    assert main(["reputation", *argv]) == 2
    assert message in capsys.readouterr().err


def test_reads_standings_from_postgresql(postgres_server, capsys):  # noqa: F811
    url = fresh_schema_url(postgres_server)
    fill(url)
    assert main(["reputation", "--store", url, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(s["agent"], s["grade"]) for s in document["standings"]] == [("flaky", "Da'if"), ("forecaster", "Thiqah")]
