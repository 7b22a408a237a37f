"""What the spans say of calls and agents that no span of their own records (issue 31, points 1
and 4), on real traces: OpenInference over CrewAI in its default mode traces runs and tool
executions but no model call, and no span for a coworker that a delegation starts.

* **A run's transcript stands for its model turns.** The run span's output keeps the run's
  chat messages: the calls the model asked for and CrewAI's answers. A call CrewAI refused
  before any body ran (an unknown tool, a usage limit, a hook) has no execution span; its
  request and its answer say it was refused, cold and warm alike, and the run counts no model
  call it did not record.
* **A call inside another tool's body is no call of the run around both.** The coworker's
  ``lookup`` hangs right under the delegation tool: it is a member run of its own, named by the
  coworker CrewAI's delegation tool names in its arguments (``frameworks/crewai.yaml``); cold,
  no span names its agent, so the checks that ask whose call it was are not judged.
"""

from __future__ import annotations

import pytest

from otel_reliability.adapters import frameworks, knowledge, to_record
from otel_reliability.assembly import assemble
from otel_reliability.expectations import Expectation
from otel_reliability.model import FAILED, NOT_EVALUATED, OK, PASSED, REFUSED
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS
from .test_cold_doubt import judged

NO_REFUSAL = Expectation(name="no refusal", fail_on=["refused"])
BY_AGENT = Expectation(name="by agent", expected_tool_calls_by_agent={"researcher": ["lookup"]})

# trace → (tool, outcome, what the answer handed back says) of each call, in order: the same cold and warm
TRANSCRIBED = {
    "crewai/unknown_tool": [("format_disk", REFUSED, "Tool not found"), ("multiply", OK, "42")],
    "crewai/blocked_usage_limit": [
        ("multiply", OK, "50"),
        ("multiply", REFUSED, "Tool 'multiply' has reached its usage limit of 1 times and cannot be used anymore."),
    ],
    "crewai/blocked_hook": [("delete_file", REFUSED, "Tool execution blocked by hook. Tool: delete_file")],
}


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "warm"])
@pytest.mark.parametrize("trace", list(TRANSCRIBED))
def test_a_call_refused_before_any_span_is_read_from_the_runs_transcript(trace, cold):
    [verdict] = judged(trace, NO_REFUSAL, cold=cold)
    assert [(a.tool, a.outcome, a.witnesses.answer) for a in verdict.chain] == TRANSCRIBED[trace]
    assert verdict.eval_status == FAILED  # fail_on refused: the refusal is confident, its answer says why
    refused = [a for a in verdict.chain if a.outcome == REFUSED]
    assert all(a.witnesses.request and a.witnesses.execution is None and a.could_be is None for a in refused)
    assert all(a.error == a.witnesses.answer for a in refused)
    assert verdict.usage.model_calls == 0  # the transcript's turns are no model call a span recorded


def test_a_transcribed_request_joins_its_execution_and_its_answer():
    [verdict] = judged("crewai/unknown_tool", cold=False)
    multiply = verdict.chain[1].witnesses
    assert (multiply.joined_by, multiply.request, multiply.execution, multiply.answer) == ("name+arguments", True, OK, "42")


def test_history_a_transcript_replays_is_not_asked_again():
    # the second turn's transcript starts with the first turn's exchange: only its own call is asked
    verdicts = judged("crewai/multi_turn", cold=False)
    assert [[(a.tool, a.outcome) for a in v.chain] for v in verdicts] == [[("multiply", OK)], [("add", OK)]]


def test_the_coworker_a_delegation_names_runs_the_calls_inside_it():
    [verdict] = judged("crewai/delegation", BY_AGENT, cold=False)
    assert [(a.agent_path, a.tool, a.outcome) for a in verdict.chain] == [
        (("lead",), "delegate_work_to_coworker", OK),
        (("lead", "researcher"), "lookup", OK),
    ]
    assert verdict.eval_status == PASSED


@pytest.mark.parametrize("trace", ["crewai/delegation", "crewai/delegation_hierarchical"])
def test_cold_no_span_names_the_agent_a_tool_started(trace):
    with knowledge.removed():
        [run] = assemble([to_record(s) for s in read_telemetry(CORPUS / f"{trace}.json").spans])
    [member] = run.members
    assert (member.agent, member.agent_named, [a.tool for a in member.own_attempts]) == (
        "Delegate work to coworker", False, ["lookup"]
    )
    assert member.inferred.startswith("agent run inside the tool execution Delegate work to coworker")
    [verdict] = judged(trace, BY_AGENT)
    assert verdict.eval_status == NOT_EVALUATED
    assert any("no span names the agent of Delegate work to coworker" in c for c in verdict.unevaluated_checks)


def test_a_delegation_names_its_coworker_only_by_the_argument_its_framework_says():
    assert frameworks.agent_started_by("Ask question to coworker", {"question": "q", "coworker": "researcher"}) == "researcher"
    assert frameworks.agent_started_by("delegate_work_to_coworker", {"task": "t", "coworker": " "}) is None
    assert frameworks.agent_started_by("lookup", {"coworker": "researcher"}) is None  # not a delegation tool
    with knowledge.removed():
        assert frameworks.agent_started_by("delegate_work_to_coworker", {"coworker": "researcher"}) is None
