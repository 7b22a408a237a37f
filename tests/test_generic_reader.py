"""The generic reader (SPEC §3, "Reading what no adapter was written for"): runs found from
structure, one attempt per call, unknown outcomes said to be unknown, and declarative profiles
that fail a test, not a user."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from otel_reliability.adapters import conventions, knowledge, profiles, to_record
from otel_reliability.assembly import assemble
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation
from otel_reliability.model import NOT_EVALUATED
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS

PACKAGE = Path(__file__).resolve().parents[1] / "otel_reliability"
GENERIC_MODULES = [
    "adapters/conventions/__init__.py",
    "adapters/conventions/model.py",
    "adapters/conventions/reading.py",
    "adapters/decoders.py",
    "adapters/profiles/__init__.py",
    "assembly/inferred.py",
    "assembly/layers.py",
    "assembly/profiled.py",
    "assembly/started.py",
    "assembly/transcript.py",
]
FRAMEWORKS = re.compile(
    r"agno|pydantic.ai|openai|strands|langgraph|langchain|crewai|smolagents|llama|autogen|haystack|dspy|beeai"
    r"|semantic.kernel|vercel|google|adk|agent.framework",
    re.IGNORECASE,
)


@pytest.mark.parametrize("module", GENERIC_MODULES)
def test_the_generic_reader_names_no_framework(module):
    assert FRAMEWORKS.findall((PACKAGE / module).read_text()) == []


def judged(scenario: str):
    trace = CORPUS / scenario
    return judge_spans(Engine(), read_telemetry(trace).spans)


def test_a_run_no_span_marks_is_found_from_structure_and_its_unrecorded_outcome_is_not_guessed():
    # Haystack's Agent under OpenInference: a CHAIN span around model calls, no tool spans at all.
    # Its span's name (``Agent.run``) names a method, not an agent: the run is shown by it, unnamed.
    [result] = judged("haystack/single_tool.json")
    assert (result.agent, [(a.tool, a.outcome) for a in result.verdict.chain]) == ("Agent.run", [("multiply", "ok")])
    assert result.to_json()["agent_named"] is False
    assert result.verdict.eval_status == NOT_EVALUATED
    assert result.verdict.unevaluated_checks == [
        "outcome of multiply not recorded: no span records the run's tool executions"
    ]


def test_an_agent_run_inside_a_tool_execution_is_a_member_run_that_the_tool_does_not_name():
    # DSPy: a ReAct module used as a tool of another; no span marks either run, and no attribute
    # names either agent (``Manager.forward`` names a method). The sub-agent is shown by the tool
    # that started it, but neither run claims an agent.
    [result] = judged("dspy/delegation.json")
    assert result.agent == "Manager.forward"
    assert [(a.agent, a.tool) for a in result.verdict.chain] == [("Manager.forward", "ask_researcher"), ("ask_researcher", "lookup")]
    [top] = assemble([to_record(s) for s in read_telemetry(CORPUS / "dspy/delegation.json").spans])
    assert [(run.agent, run.agent_named) for run in top.walk()] == [("Manager.forward", False), ("ask_researcher", False)]


def test_a_profile_leaves_a_frameworks_pseudo_tools_out_and_removing_it_brings_them_back():
    with_profile = [a.tool for a in judged("dspy/single_tool.json")[0].verdict.chain]
    with profiles.removed():
        cold = [a.tool for a in judged("dspy/single_tool.json")[0].verdict.chain]
    assert (with_profile, cold) == (["multiply"], ["multiply", "finish"])


def _chain(scenario: str) -> list[tuple[str, str, str]]:
    return [(a.agent, a.tool, a.outcome) for r in judged(scenario) for a in r.verdict.chain]


@pytest.mark.parametrize(
    "scenario, warm, cold",
    [
        # smolagents names its agent only in its run span's name (``calculator.run``); final_answer is its own tool
        ("smolagents/single_tool.json", [("calculator", "multiply", "ok")],
         [("calculator.run", "multiply", "ok"), ("calculator.run", "final_answer", "ok")]),
        # LlamaIndex names the acting agent only in its workflow events' reprs
        ("llama_index/single_tool.json", [("calculator", "multiply", "ok")], [("FunctionAgent.run", "multiply", "ok")]),
        # CrewAI's tool span names the tool by its display name, not the name the model called (its
        # transcript's request then pairs with no execution), and only CrewAI's delegation tool
        # names the coworker whose call lies inside it
        ("crewai/delegation.json", [("lead", "delegate_work_to_coworker", "ok"), ("researcher", "lookup", "ok")],
         [("lead", "delegate_work_to_coworker", "refused"), ("lead", "Delegate work to coworker", "ok"),
          ("Delegate work to coworker", "lookup", "ok")]),
        # Google ADK's answer text for arguments it refused is its own
        ("google_adk/invalid_arguments.json", [("calculator", "multiply", "refused"), ("calculator", "multiply", "ok")],
         [("calculator", "multiply", "error"), ("calculator", "multiply", "ok")]),
    ],
)
def test_a_cold_reading_leaves_out_every_frameworks_knowledge_and_keeps_the_conventions(scenario, warm, cold):
    assert _chain(scenario) == warm
    with knowledge.removed():
        assert _chain(scenario) == cold
    assert _chain(scenario) == warm  # and the knowledge is back after the block


def test_every_shipped_profile_is_valid_and_selects_by_attributes_or_span_names():
    shipped = profiles.load()
    assert shipped and all(p.select.any_attribute or p.select.any_span_name for p in shipped)


_HEAD = "name: x\ndescription: d\nselect: {any_attribute: [a]}\n"


@pytest.mark.parametrize(
    "text, complaint",
    [
        ("name: x\ndescription: d\nselect: {}\n", "select needs any_attribute or any_span_name"),
        ("name: x\ndescription: d\nselect: {any_attribute: [a]}\npseudo_tool: [finish]\n", "pseudo_tool"),
        ("name: X Y\ndescription: d\nselect: {any_attribute: [a]}\n", "name"),
        ("name: x\ndescription: d\nselect: {any_attribute: [a]}\npseudo_tools: ['  ']\n", "must not be blank"),
        (f"{_HEAD}spans: [{{span_name: t, role: agent_run}}]\n", "spans: not a field this file takes"),
        (f"{_HEAD}refused_call_when_error_matches: ['no tool group']\n", "no (?P<tool>...) group"),
        (f"{_HEAD}refused_call_when_error_matches: ['(?P<tool>']\n", "is no regular expression"),
        (_HEAD.encode() + "# café\n".encode("latin-1"), f"not UTF-8: byte 0xe9 at offset {len(_HEAD) + 5}"),
    ],
)
def test_a_wrong_profile_fails_loading_naming_its_file_and_what_is_wrong(tmp_path, text, complaint):
    (tmp_path / "broken.yaml").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match="broken.yaml") as raised:
        profiles.load(tmp_path)
    assert complaint in str(raised.value)


@pytest.mark.parametrize(
    "scenario, agent, chain, without",
    [
        # a framework's own tracer, read as its convention file declares span by span
        ("haystack_native/unknown_tool.json", "haystack.agent.run", [("haystack.agent.run", "format_disk", "refused"), ("haystack.agent.run", "multiply", "ok")], conventions.removed),
        ("haystack_native/tool_error.json", "haystack.agent.run", [("haystack.agent.run", "divide", "error"), ("haystack.agent.run", "divide", "ok")], conventions.removed),
        # the pipeline's component names the agent it wraps (an attribute); the tool a sub-agent runs
        # inside names none, so no span names either agent of a delegation
        ("haystack_native/pipeline_agent.json", "calculator", [("calculator", "multiply", "ok")], conventions.removed),
        ("haystack_native/delegation.json", "haystack.agent.run", [("haystack.agent.run", "researcher", "ok"), ("haystack.agent.run", "lookup", "ok")], conventions.removed),
        # a reply naming a tool ReAct has not: only the adapter's parse error records the refused call (a profile says so)
        ("dspy/unknown_tool.json", "ReAct.forward", [("ReAct.forward", "format_disk", "refused"), ("ReAct.forward", "multiply", "ok")], profiles.removed),
    ],
)
def test_a_convention_file_or_a_profile_reads_what_no_built_in_convention_marks(scenario, agent, chain, without):
    [result] = judged(scenario)
    assert (result.agent, [(a.agent, a.tool, a.outcome) for a in result.verdict.chain]) == (agent, chain)
    with without():
        assert [(a.agent, a.tool, a.outcome) for r in judged(scenario) for a in r.verdict.chain] != chain


def test_a_run_no_span_names_is_said_so_and_not_given_a_name():
    [result] = judge_spans(Engine(), read_telemetry(CORPUS / "haystack_native/single_tool.json").spans)
    by_agent = Expectation(name="x", expected_tool_calls_by_agent={"Agent": ["multiply"]})
    [judged_by_agent] = judge_spans(Engine(default_expectation=by_agent), read_telemetry(CORPUS / "haystack_native/single_tool.json").spans)
    assert result.agent == "haystack.agent.run" and result.verdict.eval_status == "PASSED"
    published = result.to_json()
    assert published["agent_named"] is False
    assert published["explanation"].startswith("No span names the agent: the run is named after its span.")
    assert judged_by_agent.verdict.eval_status == NOT_EVALUATED
    assert "no span names the agent of haystack.agent.run" in judged_by_agent.verdict.unevaluated_checks[0]


def _comparable(results) -> list[dict]:
    records = [{k: v for k, v in r.to_record().items() if k not in ("evaluated_at", "evaluator")} for r in results]
    return sorted(records, key=lambda r: (r["trace_id"], r["run_span_id"]))


@pytest.mark.parametrize(
    "scenario", ["dspy/delegation.json", "haystack/single_tool.json", "haystack/pipeline_agent.json", "haystack_native/delegation.json"]
)
def test_the_span_processor_judges_a_run_no_span_marks_when_its_local_root_ends_as_eval_does(tmp_path, scenario):
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_reliability import ReliabilitySpanProcessor
    from otel_reliability.stores import open_store

    from .sdk_replay import replay_events

    spans = list(read_telemetry(CORPUS / scenario).spans)
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(InMemorySpanExporter()), store=str(tmp_path / "v.db"))
    for kind, span in replay_events(spans):
        (processor.on_start if kind == "start" else processor.on_end)(span)
    processor.drain()
    processor.shutdown()
    store = open_store(str(tmp_path / "v.db"))
    try:
        stored = _comparable(store.query(limit=None))
    finally:
        store.close()
    assert stored and stored == _comparable(judge_spans(Engine(), spans))


@pytest.mark.parametrize(
    "scenario, chain",
    [
        ("tool_error", [("divide", "error"), ("divide", "ok")]),
        ("invalid_arguments", [("multiply", "refused"), ("multiply", "ok")]),
        ("server_unknown_tool", [("legacy_lookup", "refused"), ("lookup", "ok")]),
    ],
)
def test_without_the_mcp_servers_spans_the_client_span_that_records_nothing_does_not_hide_the_failure(
    tmp_path, scenario, chain
):
    # The span processor of the agent's process sees its own spans only: openai-agents' tool span
    # (with the server's answer as its result) around the MCP client's span (no result, no error).
    document = json.loads((CORPUS / "mcp_openai_agents_semconv" / f"{scenario}.json").read_text())
    document["resourceSpans"] = [
        spans for spans in document["resourceSpans"]
        if not any(a["key"] == "service.name" and a["value"]["stringValue"].endswith("-server")
                   for a in spans["resource"]["attributes"])
    ]
    client_only = tmp_path / f"{scenario}.json"
    client_only.write_text(json.dumps(document))
    [result] = judge_spans(Engine(), read_telemetry(client_only).spans)
    assert [(a.tool, a.outcome) for a in result.verdict.chain] == chain
