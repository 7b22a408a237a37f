"""A run that ends inside a span still open is not forwarded with a verdict of its own while
that span may yet turn out to be a run: LangChain's instrumentation makes its supervisor
graph readable as an agent run only when it ends (its ``metadata`` is set then), so until
then its sub-agent looks top-level. The sub-agent's span waits, and goes out as a member's
(no verdict); the supervisor's carries the verdict of the whole run."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.stores import open_store

GRAPH_ROOT = json.dumps({"ls_integration": "langgraph"})  # what makes a CHAIN root a LangGraph run
# the status of these runs, which record no model call: fail_on refused cannot be judged on them
# (tests/test_requests_unseen.py); what is tested is which span carries it
JUDGED = "NOT_EVALUATED"


@pytest.fixture
def traced(tmp_path):
    exporter = InMemorySpanExporter()
    store = tmp_path / "results.db"
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), store=str(store))
    provider = TracerProvider()
    provider.add_span_processor(processor)
    yield provider.get_tracer("tests.nested_runs"), processor, exporter, store
    provider.shutdown()


# The sub-agent as an AGENT span (held back on the app thread, to be forwarded enriched) and as
# a create_agent graph's root below the supervisor (a CHAIN the app thread does not hold: it
# goes on as it ends, and must not be forwarded a second time).
SUB_AGENTS = {
    "agent-span": {"openinference.span.kind": "AGENT"},
    "create-agent-graph": {
        "openinference.span.kind": "CHAIN",
        "metadata": json.dumps({"ls_integration": "langchain_create_agent", "lc_agent_name": "math_agent"}),
    },
}


@pytest.mark.parametrize("sub_agent", sorted(SUB_AGENTS))
@pytest.mark.parametrize("root_is_a_run", [True, False], ids=["root-becomes-a-run", "root-stays-a-chain"])
def test_a_sub_agent_ending_inside_an_open_chain_root_waits_for_it(traced, root_is_a_run, sub_agent):
    tracer, processor, exporter, store = traced
    held = sub_agent == "agent-span"
    root = tracer.start_span("supervisor", attributes={"openinference.span.kind": "CHAIN"})
    inside = set_span_in_context(root)
    agent = tracer.start_span("math_agent", context=inside, attributes=SUB_AGENTS[sub_agent])
    tool = tracer.start_span(
        "multiply", context=set_span_in_context(agent),
        attributes={"openinference.span.kind": "TOOL", "tool.name": "multiply", "input.value": '{"a": 6, "b": 7}'},
    )
    tool.end()
    agent.end()
    processor.drain()
    assert [s.name for s in exporter.get_finished_spans() if "reliability.status" in (s.attributes or {})] == []
    if root_is_a_run:  # the instrumentation's last word on the root, as it ends
        root.set_attribute("metadata", GRAPH_ROOT)
    root.end()
    processor.drain()

    enriched = {s.name: s.attributes["reliability.status"] for s in exporter.get_finished_spans()
                if "reliability.status" in (s.attributes or {})}
    exported = [s.name for s in exporter.get_finished_spans()]
    assert sorted(exported) == ["math_agent", "multiply", "supervisor"]  # every span reaches the exporter once
    stored = open_store(str(store)).query(limit=None)
    if root_is_a_run:
        assert enriched == {"supervisor": JUDGED}  # the sub-agent is a member: no verdict of its own
        # The graph's root names no agent, and only wraps the sub-agent: it is that agent's run when
        # an attribute names it (lc_agent_name), else it is shown by its span's name, unnamed.
        shown_as = "math_agent" if sub_agent == "create-agent-graph" else "supervisor"
        assert [(r.agent, [a.tool for a in r.verdict.chain]) for r in stored] == [(shown_as, ["multiply"])]
    else:  # top-level after all, judged once its ancestor ended (on its span if it was held)
        assert enriched == ({"math_agent": JUDGED} if held else {})
        assert [r.agent for r in stored] == ["math_agent"]
