"""``otel-reliability inspect``: what a user reads when a verdict surprises them (SPEC §10) —
the convention per span, each run's attempts and how they were paired, and what is missing
for judging with the setting that fixes it. Every case is a real corpus trace."""

from __future__ import annotations

import json

import pytest

from otel_reliability.cli import main
from otel_reliability.inspect import inspect_files, render_text

from .corpus import CORPUS

SMOL_SINGLE = CORPUS / "smolagents" / "single_tool.json"
SMOL_RUN_LOST = CORPUS / "smolagents" / "run_error.json"
GENAI_CONTENT_OFF = CORPUS / "openai_v2_latest" / "single_tool_content_off.json"
PYDANTIC_SINGLE = CORPUS / "pydantic_ai" / "single_tool.json"
AUTOGEN_SINGLE = CORPUS / "autogen" / "single_tool.json"
CREWAI_UNKNOWN_TOOL = CORPUS / "crewai" / "unknown_tool.json"


def inspect_json(capsys, *paths) -> dict:
    code = main(["inspect", *map(str, paths), "--format", "json"])
    out, _ = capsys.readouterr()
    assert code == 0
    return json.loads(out)


@pytest.mark.parametrize(
    ("path", "pairings"),
    [
        pytest.param(PYDANTIC_SINGLE, [("multiply", "ok", "call id")], id="call-ids-on-both-sides"),
        # the adapter unwraps smolagents' {"args", "kwargs"} arguments: name and arguments pair them
        pytest.param(SMOL_SINGLE, [("multiply", "ok", "name+arguments")], id="smolagents-unwrapped-arguments"),
        pytest.param(GENAI_CONTENT_OFF, [("multiply", "ok", "unpaired")], id="no-requests-seen"),
    ],
)
def test_each_attempt_says_how_it_was_paired(path, pairings, capsys):
    [run] = inspect_json(capsys, path)["runs"]
    assert [(a["tool"], a["outcome"], a["paired_by"]) for a in run["attempts"]] == pairings


def test_every_span_names_the_convention_that_read_it_and_what_it_was_read_as(capsys):
    spans = inspect_json(capsys, SMOL_SINGLE)["spans"]
    # read by convention files: OpenInference's, and smolagents' run and tool spans by its framework file
    assert {s["convention"] for s in spans} == {"openinference", "openinference-smolagents"}
    assert [(s["name"], s["read_as"], s["tool"]) for s in spans if s["read_as"] != "other"] == [
        ("calculator.run", "run", None),
        ("OpenAIModel.generate", "model", None),
        ("SimpleTool", "tool", "multiply"),
        ("OpenAIModel.generate", "model", None),
        ("FinalAnswerTool", "tool", "final_answer"),
    ]
    [model] = [s for s in spans if s["requests"] and s["requests"][0].startswith("multiply")]
    assert model["requests"] == ["multiply (call_smol_single_tool_mul_1)"]
    run_span = next(s["span_id"] for s in spans if s["read_as"] == "run")
    assert all(s["run_span_id"] == run_span for s in spans if s["read_as"] != "run")


def test_content_capture_off_names_the_setting_that_fixes_it(capsys):
    document = inspect_json(capsys, GENAI_CONTENT_OFF)
    [run] = document["runs"]
    assert run["attempts"][0]["arguments"] is None
    assert run["missing"] == [
        "message content not captured: the model calls show no requested tool calls, so refused and pending calls "
        "are invisible: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (where content goes to log "
        "records, export those too)",
        "arguments of multiply not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
    ]
    assert document["missing"] == []


def test_a_run_with_no_model_spans_says_requested_calls_cannot_be_seen(capsys):
    [run] = inspect_json(capsys, AUTOGEN_SINGLE)["runs"]
    assert run["model_calls"] == 0
    assert run["missing"][0] == (
        "no model spans: requested calls cannot be seen, so refused and pending calls are invisible and fail_on "
        "refused and pending are not evaluated (instrument the model client as well)"
    )


def test_a_run_whose_transcript_stands_for_its_model_turns_misses_nothing(capsys):
    # CrewAI's default mode records no model span, but the run's output keeps the requests and answers
    [run] = inspect_json(capsys, CREWAI_UNKNOWN_TOOL)["runs"]
    assert (run["model_calls"], run["missing"]) == (0, [])


def test_spans_whose_run_span_was_lost_are_reported_as_spans_with_no_run(capsys):
    document = inspect_json(capsys, SMOL_RUN_LOST)
    assert document["runs"] == []
    assert document["missing"] == [
        "no agent runs: no span was read as an agent run, so nothing can be judged",
        "spans with no run: 3 tool or model span(s) no agent-run span encloses (OpenAIModel.generate, SimpleTool); "
        "their calls are not judged (was the run span exported? is its convention read?)",
    ]


def test_the_table_shows_runs_attempts_and_what_is_missing():
    text = " ".join(render_text(inspect_files([GENAI_CONTENT_OFF, SMOL_SINGLE])).split())
    assert "Run calculator (invoke_agent calculator" in text
    assert "│ calculator │ multiply │ ok │ its execution span │ call_mul_1 │ 2b0824143cceee94 │ unpaired │ execution: OK, no result recorded │ not captured │" in text
    assert "│ name+arguments │" in text
    assert "missing: arguments of multiply not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in text


def test_complete_spans_have_nothing_missing():
    assert render_text(inspect_files([PYDANTIC_SINGLE])).rstrip().endswith("nothing missing for judging")


def test_a_path_that_does_not_exist_is_bad_input(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nope.json")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_log_records_beside_the_trace_join_their_spans_as_eval_joins_them(capsys):
    """openai-v2's default mode writes content only as log records: with them, the request is seen."""
    trace = CORPUS / "openai_v2" / "single_tool.json"
    alone = inspect_json(capsys, trace)
    joined = inspect_json(capsys, trace, trace.with_name("single_tool.logs.json"))
    assert [(a["paired_by"], a["arguments"]) for a in alone["runs"][0]["attempts"]] == [("unpaired", None)]
    assert [(a["paired_by"], a["arguments"]) for a in joined["runs"][0]["attempts"]] == [("call id", {"a": 10, "b": 5})]
    assert joined["runs"][0]["missing"] == []


def test_a_call_recorded_by_several_layers_shows_every_span_and_the_layer_that_decided(capsys):
    # openai-agents' tool span, the MCP client's and the MCP server's span of one call
    document = inspect_json(capsys, CORPUS / "mcp_openai_agents_semconv" / "tool_error.json")
    [attempt, retried] = document["runs"][0]["attempts"]
    assert (attempt["tool"], attempt["outcome"], len(attempt["evidence"])) == ("divide", "error", 3)
    assert attempt["outcome_from"] == "the innermost of 3 layers"
    assert attempt["span_id"] == attempt["evidence"][0]


def test_a_run_found_from_structure_says_by_which_rule(capsys):
    [run] = inspect_json(capsys, CORPUS / "haystack" / "single_tool.json")["runs"]
    assert run["inferred"] == (
        "smallest span enclosing model calls and tool executions; no span names the agent: named after the span"
    )
    assert run["attempts"][0]["outcome_from"].startswith("no span: the run records no tool executions")


def test_an_outcome_the_spans_leave_open_says_which_other_it_may_be(capsys):
    # Microsoft Agent Framework: the iteration limit cut off the last call the model asked for
    [run] = inspect_json(capsys, CORPUS / "agent_framework" / "blocked_tool_call_limit.json")["runs"]
    last = run["attempts"][-1]
    assert (last["tool"], last["outcome"]) == ("add", "pending")
    assert last["outcome_from"] == "the request, unanswered; may be refused: the spans cannot tell"
