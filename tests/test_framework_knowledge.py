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

from otel_reliability.adapters import frameworks

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
    },
    "llama-index": {"llama_index": "OpenInference", "llama_index_traceloop": "OpenLLMetry"},
    "openai-agents": {
        "openai_agents": "OpenInference",
        "openai_agents_guardrails": "OpenInference",
        "openai_agents_openinference": "OpenInference",
        "logfire_openai_agents": "Logfire",
        "mlflow_openai_agents": "MLflow tracing",
    },
    "pydantic-ai": {"pydantic_ai": "its own GenAI telemetry", "logfire_pydantic_ai": "Logfire"},
    "strands": {
        "strands": "its own GenAI telemetry",
        "strands_latest_semconv": "its own GenAI telemetry, latest semconv",
        "strands_openinference": "OpenInference",
    },
}

# (folder, scenario) → why it is not read right yet
NOT_YET: dict[tuple[str, str], str] = {
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
    with pytest.raises(ValueError, match=r"^framework file acme\.yaml: texts\.0\.in"):
        frameworks.load(tmp_path)
