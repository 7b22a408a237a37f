"""Who ran a call (issue 31, point 4): the agent an attribute names, never a span's name.

A run's agent is what its span, or the nearest span enclosing it, names by its convention's
agent attribute (``gen_ai.agent.name``, ``agent.name``, a framework's own key such as
LangChain's ``lc_agent_name``). A workflow's, graph's or method's span name, and the tool a
sub-agent runs inside, name no agent: such a run is shown by that name and says that no span
names its agent (``agent_named`` False), so the checks that ask whose call it was are not judged.
"""

from __future__ import annotations

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS


def runs_of(scenario: str) -> list[tuple[str, bool]]:
    """(agent, whether a span names it) of every run and member run, in order."""
    records = [to_record(s) for s in read_telemetry(CORPUS / f"{scenario}.json").spans]
    return [(run.agent, run.agent_named) for top in assemble(records) for run in top.walk()]


@pytest.mark.parametrize(
    "scenario, runs",
    [
        # named by the convention's attribute (gen_ai.agent.name); the researcher runs inside the
        # coordinator's ask_researcher tool and is named by its own attribute, not by the tool
        ("openai_v2/single_tool", [("calculator", True)]),
        ("traceloop_langgraph/delegation", [("coordinator", True), ("researcher", True)]),
        # a LangGraph graph's root names its graph, not the supervisor agent in it; the sub-agents'
        # create_agent graphs name theirs (lc_agent_name)
        ("langgraph_subagents/delegation_supervisor", [("supervisor_graph", False), ("math_agent", True), ("weather_agent", True)]),
        ("langgraph/single_tool", [("calculator", False)]),
        # ``invoke_agent <model>`` without gen_ai.agent.name: the span's name is no agent's
        ("vercel_ai_otel/single_tool_no_function_id", [("invoke_agent scripted-anonymous", False)]),
        # a method's span (``Agent.run``) names a class, not an agent
        ("haystack/single_tool", [("Agent.run", False)]),
        # a sub-agent started inside a tool: the tool names no agent, and no attribute does
        ("dspy/delegation", [("Manager.forward", False), ("ask_researcher", False)]),
        ("haystack_native/delegation", [("haystack.agent.run", False), ("haystack.agent.run", False)]),
        # smolagents' knowledge says its run span's name is its agent's (``researcher.run``)
        ("smolagents/delegation", [("manager", True), ("researcher", True)]),
    ],
)
def test_a_runs_agent_is_what_an_attribute_names_and_otherwise_unclaimed(scenario, runs):
    assert runs_of(scenario) == runs
