"""``otel_reliability.agno.ReliabilityEval``: an Agno user changes one import and gets the
same verdicts (issue 14 item 9), plus the chain and the reasons Agno does not give.

The evidence is Agno's own: the ``.runoutput.json`` of each real agno run in the corpus
with Agno's results in its ``.verdict.json``, and the 43 upstream scenarios of
``conformance/agno_reliability_cases.json`` — each loaded into Agno's ``RunOutput`` /
``TeamRunOutput`` and given to both evals with the same constructor arguments.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from pathlib import Path

import pytest
from agno.eval.reliability import ReliabilityEval as AgnoReliabilityEval
from agno.eval.reliability import ReliabilityResult as AgnoReliabilityResult
from agno.run.agent import RunOutput
from agno.run.team import TeamRunOutput
from rich.console import Console

from otel_reliability.agno import ReliabilityEval

from .corpus import AGNO_FIELDS, companion, scenario_id, trace_files

CONFORMANCE = json.loads(
    (Path(__file__).parent / "fixtures/conformance/agno_reliability_cases.json").read_text(encoding="utf-8")
)
CORPUS_CASES = [
    pytest.param(companion(path, "runoutput"), evaluation, id=f"{scenario_id(path)}#{index}")
    for path in trace_files("agno")
    for index, evaluation in enumerate(companion(path, "verdict")["evaluations"])
]
CONFORMANCE_CASES = [
    pytest.param(case["response"], {"input": case["input"], "config": case["config"], "result": case["expected"]},
                 id=case["id"])
    for case in CONFORMANCE
]


def response_of(data: dict, kind: str) -> RunOutput | TeamRunOutput:
    """The Agno object a fixture records. Agno's ``from_dict`` takes any member holding an
    ``agent_id`` key for an agent, and the fixtures write ``agent_id: null`` for teams: a
    nested team would lose its members, so teams go in without the key."""
    return (TeamRunOutput if kind == "team_response" else RunOutput).from_dict(_without_team_agent_ids(data))


def _without_team_agent_ids(data: dict) -> dict:
    copy = {key: value for key, value in data.items() if not (key == "agent_id" and data.get("type") == "TeamRunOutput")}
    if copy.get("member_responses"):
        copy["member_responses"] = [_without_team_agent_ids(member) for member in copy["member_responses"]]
    return json.loads(json.dumps(copy))


def agno_fields(result) -> dict:
    return {field: getattr(result, field) for field in AGNO_FIELDS}


def both(data: dict, evaluation: dict, **extra):
    """Agno's eval and ours, built with the same keyword arguments."""
    arguments = {evaluation["input"]: response_of(data, evaluation["input"]), **evaluation["config"],
                 "telemetry": False, "show_spinner": False, **extra}
    return AgnoReliabilityEval(**arguments), ReliabilityEval(**arguments)


@pytest.mark.parametrize(("data", "evaluation"), CORPUS_CASES + CONFORMANCE_CASES)
def test_same_verdict_as_agno(data, evaluation):
    theirs, ours = both(data, evaluation)
    expected = agno_fields(theirs.run())
    assert expected == evaluation["result"], "the fixture is Agno's result for this agno version"
    result = ours.run()
    assert agno_fields(result) == expected
    assert isinstance(result, AgnoReliabilityResult) and ours.result is result


@pytest.mark.parametrize(("data", "evaluation"), CORPUS_CASES[:3] + CONFORMANCE_CASES[:3])
def test_arun_gives_run_verdict(data, evaluation):
    _, ours = both(data, evaluation)
    assert agno_fields(asyncio.run(ours.arun())) == evaluation["result"]


def corpus_case(scenario: str, index: int = 0):
    [case] = [c for c in CORPUS_CASES if c.id == f"agno/{scenario}#{index}"]
    return case.values


def test_the_chain_lists_every_attempt_of_a_team_at_every_depth():
    data, evaluation = corpus_case("team_nested")
    _, ours = both(data, evaluation)
    result = ours.run()
    assert [(c["tool"], c["outcome"]) for c in result.chain] == [
        ("delegate_task_to_member", "ok"), ("delegate_task_to_member", "ok"), ("multiply", "ok"),
    ]
    assert result.chain[0]["agent"] == "outer-team"
    assert result.chain[2]["arguments"] == {"a": 10, "b": 5}


def test_the_reasons_name_what_agno_leaves_to_the_reader():
    data, evaluation = corpus_case("agent_tool_error")
    _, ours = both(data, evaluation)
    result = ours.run()
    errored = [c["tool"] for c in result.chain if c["outcome"] == "error"]
    assert errored and result.errored_tool_calls == errored
    assert result.eval_status == "FAILED" and result.score < 1.0
    assert result.explanation.startswith("Expectation 'agno' failed")
    with pytest.raises(AssertionError, match=r"^ReliabilityEval failed: Expectation 'agno' failed"):
        result.assert_passed()


def test_a_paused_call_is_pending_and_a_passed_run_asserts_quietly():
    data, evaluation = corpus_case("agent_paused_confirmation")
    _, ours = both(data, evaluation)
    result = ours.run()
    assert result.pending_tool_calls == [c["tool"] for c in result.chain if c["outcome"] == "pending"] != []
    data, evaluation = corpus_case("agent_single_tool")
    _, ours = both(data, evaluation)
    ours.run().assert_passed()


def test_print_results_shows_agnos_rows_then_the_score_and_chain(capsys):
    data, evaluation = corpus_case("agent_tool_error")
    _, ours = both(data, evaluation)
    console = Console(file=io.StringIO(), record=True, width=160)
    ours.run().print_eval(console)
    text = console.export_text()
    for row in ("Reliability Summary", "Evaluation Status", "Failed Tool Calls", "Passed Tool Calls",
                "Errored Tool Calls", "Score", "Explanation", "Call 1"):
        assert row in text
    ours.print_results = True
    ours.run()
    assert "Reliability Summary" in capsys.readouterr().out


def test_results_are_saved_where_agno_saves_them(tmp_path):
    data, evaluation = corpus_case("agent_single_tool")
    _, ours = both(data, evaluation, file_path_to_save_results=str(tmp_path / "{name}-{run_id}.json"), name="calc")
    result = ours.run()
    [saved] = tmp_path.glob("calc-*.json")
    stored = json.loads(saved.read_text())
    assert {field: stored[field] for field in AGNO_FIELDS} == agno_fields(result)
    assert stored["chain"] == result.chain


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "You need to provide 'agent_response' or 'team_response'"),
        ({"agent_response": RunOutput(), "team_response": TeamRunOutput()}, "only one of"),
    ],
    ids=["no-response", "both-responses"],
)
def test_agnos_argument_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        ReliabilityEval(**arguments).run()
    with pytest.raises(ValueError, match=message):
        AgnoReliabilityEval(**arguments, telemetry=False).run()


def test_the_constructor_takes_every_field_agno_takes():
    agno_fields_ = [f.name for f in dataclasses.fields(AgnoReliabilityEval)]
    ours = [f.name for f in dataclasses.fields(ReliabilityEval)]
    assert ours == agno_fields_


def test_the_eval_is_logged_to_agnos_database_as_agno_logs_it(tmp_path):
    from agno.db.json import JsonDb

    data, evaluation = corpus_case("agent_tool_error")
    db = JsonDb(db_path=str(tmp_path / "agno-db"))
    _, ours = both(data, evaluation, db=db, name="tool error")
    result = ours.run()
    [logged] = db.get_eval_runs()
    assert logged.name == "tool error"
    assert {field: logged.eval_data[field] for field in AGNO_FIELDS} == agno_fields(result)
    assert logged.eval_data["explanation"] == result.explanation
    assert logged.eval_input["expected_tool_calls"] == evaluation["config"].get("expected_tool_calls")
