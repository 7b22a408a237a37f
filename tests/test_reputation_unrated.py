"""A fresh agent is unrated (issue 14 item 8): while its window holds no evidence it gets no
score and no grade — not 0 and Matruk, which ranked it below every agent with evidence,
failing evidence included.
"""

from __future__ import annotations

import argparse
import json

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_reliability.expectations import Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, Attempt, Run
from otel_reliability.reputation import Reputation
from otel_reliability.reputation.cli import register
from otel_reliability.reputation.metrics import GRADE_METRIC, SCORE_METRIC
from otel_reliability.results import RunResult

NO_EXPECTATION = Expectation(name="default")


def verdict_of(agent: str, run_number: int, attempts: list[Attempt]) -> RunResult:
    run = Run(run_number, run_number, agent, f"invoke_agent {agent}", 0, 9, own_attempts=attempts)
    return RunResult(run_number, run_number, agent, "default", evaluate(run, NO_EXPECTATION), 1_700_000_000.0 + run_number)


def fill(spec: str, meter_provider=None) -> Reputation:
    """fresh: a run that called no tool (no evidence); failing: a run whose only call errored."""
    reputation = Reputation(spec, meter_provider=meter_provider)
    reputation.record(verdict_of("fresh", 1, []))
    reputation.record(verdict_of("failing", 2, [Attempt("delete_db", {}, ERROR, "failing", ("failing",))]))
    return reputation


def reputation_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="otel-reliability")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.run(args)


def test_a_fresh_agent_has_no_score_and_no_grade(tmp_path):
    reputation = fill(str(tmp_path / "r.db"))
    try:
        fresh, failing = reputation.standing("fresh"), reputation.standing("failing")
    finally:
        reputation.close()
    assert (fresh.score, fresh.grade, fresh.grade_label) == (None, None, "unrated")
    assert fresh.evaluations == 1
    assert failing.grade is not None and failing.score is not None  # evidence, even failing, is graded


def test_the_reputation_command_shows_unrated_in_table_json_and_markdown(tmp_path, capsys):
    store = str(tmp_path / "r.db")
    fill(store).close()
    assert reputation_cli(["reputation", "--store", store]) == 0
    fresh_row = next(line for line in capsys.readouterr().out.splitlines() if "fresh" in line)
    assert "unrated" in fresh_row and "Matruk" not in fresh_row
    assert reputation_cli(["reputation", "--store", store, "--format", "json"]) == 0
    standings = {s["agent"]: s for s in json.loads(capsys.readouterr().out)["standings"]}
    assert (standings["fresh"]["score"], standings["fresh"]["grade"]) == (None, "unrated")
    assert standings["failing"]["grade"] != "unrated"
    assert reputation_cli(["reputation", "--store", store, "--format", "markdown", "--agent", "fresh"]) == 0
    markdown = capsys.readouterr().out
    assert "- Grade: unrated" in markdown and "no evidence in the window yet" in markdown


def test_an_unrated_agent_reports_no_score_series(tmp_path):
    reader = InMemoryMetricReader()
    reputation = fill(str(tmp_path / "r.db"), MeterProvider(metric_readers=[reader]))
    try:
        data = reader.get_metrics_data()
    finally:
        reputation.close()
    agents = {
        metric.name: {point.attributes["gen_ai.agent.name"] for point in metric.data.data_points}
        for resource in data.resource_metrics for scope in resource.scope_metrics for metric in scope.metrics
        if metric.name in (SCORE_METRIC, GRADE_METRIC)
    }
    assert agents == {SCORE_METRIC: {"failing"}, GRADE_METRIC: {"failing"}}
