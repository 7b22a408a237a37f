"""Issue 31, point 3: framework knowledge belongs to the framework. Every framework the corpus
holds under two or more instrumentations is read right under each, with the same knowledge:
the framework files (``adapters/frameworks/``) are selected by the evidence (a framework's own
text), never by an instrumentation's attributes, so the same text reads the same whichever
instrumentation carried it.

The table is every scenario of every such folder, read as ``tests/reading.py`` reads it (with
all knowledge in force). A scenario not read right yet is a strict xfail naming its cause:
reading it right fails until its entry is taken out.
"""

from __future__ import annotations

import pytest

from otel_reliability.adapters import frameworks, knowledge
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS
from .reading import RIGHT, read_folder

# framework → its corpus folders, each under the instrumentation (or mode) named
UNDER: dict[str, dict[str, str]] = {
    "agent-framework": {
        "agent_framework": "its own GenAI telemetry",
        "agent_framework_baseline_semconv": "its own GenAI telemetry, baseline semconv",
        "agent_framework_openinference": "OpenInference",
    },
    "agno": {"agno_openinference": "OpenInference", "agno_traceloop": "OpenLLMetry"},
    "beeai": {"beeai": "OpenInference", "beeai_genai_semconv": "OpenInference with GenAI semconv"},
    "crewai": {
        "crewai": "OpenInference",
        "crewai_event_listener": "OpenInference, event-listener mode",
        "crewai_traceloop": "OpenLLMetry",
        "openlit_crewai": "OpenLIT",
    },
    "haystack": {"haystack": "OpenInference", "haystack_native": "Haystack's own tracer"},
    "langgraph": {
        "langgraph": "OpenInference",
        "langgraph_subagents": "OpenInference",
        "traceloop_langgraph": "OpenLLMetry",
        "openlit_langgraph": "OpenLIT",
        "mlflow_langchain": "MLflow tracing",
        "langfuse_langchain": "Langfuse's LangChain callback handler",
    },
    "llama-index": {"llama_index": "OpenInference", "llama_index_traceloop": "OpenLLMetry"},
    "openai-agents": {
        "openai_agents": "OpenInference",
        "openai_agents_guardrails": "OpenInference",
        "openai_agents_openinference": "OpenInference",
        "logfire_openai_agents": "Logfire",
        "mlflow_openai_agents": "MLflow tracing",
        "openlit_openai_agents": "OpenLIT",
    },
    "pydantic-ai": {"pydantic_ai": "its own GenAI telemetry", "logfire_pydantic_ai": "Logfire"},
    "strands": {
        "strands": "its own GenAI telemetry",
        "strands_latest_semconv": "its own GenAI telemetry, latest semconv",
        "strands_openinference": "OpenInference",
    },
}

_AGNO_STREAM = "OpenLLMetry over agno: a streamed run's spans are roots of traces of their own, no run holds them"
_AGNO_TEAM_STREAM = (
    "OpenLLMetry over agno, streamed team: the team span closes as the run starts and keeps no child, its steps "
    "are roots of traces of their own: no run holds them (read honestly as no run)"
)
_BEEAI_INSIDE_MODEL = "beeai rejects the call inside the model call and asks the model again: no span records it (LIMITS)"
# (folder, scenario) → why it is not read right yet
NOT_YET: dict[tuple[str, str], str] = {
    ("agno_traceloop", "approval_approved"): (
        "the paused run is read (its call pending|refused), but the continued run's spans are roots of traces of "
        "their own and its history carries agno's shortened ids: nothing joins the approval to the paused call"
    ),
    ("agno_traceloop", "single_tool_stream"): _AGNO_STREAM,
    ("agno_traceloop", "team_delegation_stream"): _AGNO_TEAM_STREAM,
    ("agno_traceloop", "team_nested_stream"): _AGNO_TEAM_STREAM,
    ("beeai", "blocked_tool_call_limit"): _BEEAI_INSIDE_MODEL,
    ("beeai", "unknown_tool"): _BEEAI_INSIDE_MODEL,
    ("beeai_genai_semconv", "blocked_tool_call_limit"): _BEEAI_INSIDE_MODEL,
    ("beeai_genai_semconv", "unknown_tool"): _BEEAI_INSIDE_MODEL,
    ("crewai_traceloop", "multi_turn"): "Agent.kickoff without a crew: OpenLLMetry records only the model spans, each its own trace",
    ("llama_index_traceloop", "blocked_approval_denied"): (
        "the call_tool step that waited for the approval records the call with no output, as an agent-as-tool step "
        "whose output was lost does: read as a second, open attempt"
    ),
    ("llama_index_traceloop", "blocked_max_iterations"): (
        "the model's last request is recorded nowhere (LlamaIndex keeps tool calls in additional_kwargs, OpenLLMetry's "
        "output messages have no parts) and the max-iterations error sets no span status: read honestly (NOT_EVALUATED: "
        "its finish reason says it asked for tools, and nothing ran after it), never right"
    ),
    ("openai_agents_guardrails", "approval_approved"): (
        "the resumed run outside an outer trace exports no span: the approved call stays pending"
    ),
}


def _cases() -> list:
    cases = []
    for framework, folders in UNDER.items():
        for folder in folders:
            for reading in read_folder(folder):
                cause = NOT_YET.get((folder, reading.scenario))
                marks = [pytest.mark.xfail(strict=True, reason=cause)] if cause else []
                cases.append(pytest.param(reading, id=f"{framework}/{folder}/{reading.scenario}", marks=marks))
    return cases


@pytest.mark.parametrize("reading", _cases())
def test_a_framework_reads_right_under_each_instrumentation(reading):
    assert reading.mark == RIGHT, f"truth {reading.truth}, read {reading.chain} ({reading.verdict})"


def test_every_framework_here_is_held_under_two_instrumentations_or_more():
    for framework, folders in UNDER.items():
        assert len(set(folders.values())) >= 2, framework


def test_every_not_yet_entry_names_a_scenario_of_the_table_and_a_cause():
    scenarios = {(folder, r.scenario) for folders in UNDER.values() for folder in folders for r in read_folder(folder)}
    assert set(NOT_YET) <= scenarios
    assert all(cause.strip() for cause in NOT_YET.values())


def test_a_framework_file_that_is_not_valid_is_named(tmp_path):
    (tmp_path / "acme.yaml").write_text("name: acme\ndescription: d\ntexts:\n  - {contains: Nope., in: output, says: refused, why: w}\n")
    with pytest.raises(ValueError) as raised:
        frameworks.load(tmp_path)
    assert str(raised.value) == "framework file acme.yaml: texts[0].in: expected 'error', 'result' or 'answer', got 'output'"


def _first_attempt(folder: str, scenario: str):
    [result, *_] = judge_spans(Engine(), read_telemetry(CORPUS / folder / f"{scenario}.json").spans)
    return result.verdict.chain[0]


@pytest.mark.parametrize("folder", ["openai_agents_openinference", "logfire_openai_agents", "mlflow_openai_agents"])
def test_one_framework_text_reads_alike_under_each_instrumentation(folder):
    # openai-agents' one error for a body that raised and for arguments it refused, carried by
    # OpenInference, Logfire and MLflow each in its own attribute: the same framework file opens
    # the call under all three, on the framework's text alone. Cold, without the file, only a
    # generic doubt opens it, and says which (the arguments against the declared parameters, or
    # a withheld message).
    warm = _first_attempt(folder, "invalid_arguments")
    with knowledge.removed():
        cold = _first_attempt(folder, "invalid_arguments")
    assert (warm.tool, warm.outcome, warm.could_be) == (cold.tool, cold.outcome, cold.could_be) == ("multiply", "error", "refused")
    assert warm.witnesses.doubt is None
    assert "the execution span says ERROR" in cold.witnesses.doubt
