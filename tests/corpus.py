"""Shared access to the real-trace corpus copied into tests/fixtures/corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

CORPUS = Path(__file__).parent / "fixtures" / "corpus"

# agno's ReliabilityResult fields (its random run_id aside), in its declaration order
AGNO_FIELDS = (
    "eval_status",
    "failed_tool_calls",
    "passed_tool_calls",
    "additional_tool_calls",
    "missing_tool_calls",
    "failed_argument_checks",
    "passed_argument_checks",
)


# The frameworks the adapters were built on: their traces reconstruct to the truth
# (test_corpus_truth.py), and the receiver's interoperability tests replay them. The other
# captured frameworks (tests/capture/) are read by the tests that hold for every trace.
ADAPTED = (
    "agno",
    "autogen",
    "google_adk",
    "google_adk_experimental",
    "google_adk_legacy",
    "google_adk_legacy_latest",
    "google_adk_no_content",
    "langgraph",
    "openai_agents",
    "openai_v2_latest",
    "pydantic_ai",
    "strands",
    "strands_latest_semconv",
    "vercel_ai_otel",
)


class Limit(NamedTuple):
    """Why a scenario's spans cannot tell what really ran, and what they honestly show instead.

    ``shown`` maps a truth call id to the fields its attempt has as recorded (``{"outcome":
    "ok"}``, ``{"call_id": None}`` when no span carries the id), or to None when no span shows
    the call at all. The truth test expects the truth with these replaced, nothing more.
    """

    reason: str
    shown: dict[str, dict[str, Any] | None]


_ADK_CALLBACK = Limit(
    "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
    "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)",
    {"call_del_1": {"outcome": "error"}},
)
_ADK_PLUGIN = Limit(
    "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
    "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)",
    {"call_del_1": {"outcome": "ok"}},
)
_AUTOGEN_UNSEEN = "no tool span and no model spans; a team run records the call only in runtime spans' message JSON, outside the run"

# "<framework>/<scenario>" → Limit, sorted; every other scenario of ADAPTED must match its truth.
LIMITS: dict[str, Limit] = {
    "autogen/blocked_workbench": Limit(_AUTOGEN_UNSEEN, {"call_del_1": None}),
    "autogen/blocked_workbench_team": Limit(_AUTOGEN_UNSEEN, {"call_del_1": None}),
    "autogen/unknown_tool": Limit(_AUTOGEN_UNSEEN, {"call_unknown_1": None}),
    "autogen/unknown_tool_team": Limit(_AUTOGEN_UNSEEN, {"call_unknown_1": None}),
    "google_adk/blocked_before_tool_callback": _ADK_CALLBACK,
    "google_adk/blocked_plugin": _ADK_PLUGIN,
    "google_adk_legacy/blocked_before_tool_callback": _ADK_CALLBACK,
    "google_adk_legacy/blocked_plugin": _ADK_PLUGIN,
    "google_adk_legacy_latest/blocked_before_tool_callback": _ADK_CALLBACK,
    "google_adk_legacy_latest/blocked_plugin": _ADK_PLUGIN,
    "google_adk_no_content/blocked_before_tool_callback": _ADK_CALLBACK,
    "google_adk_no_content/blocked_confirmation_denied": Limit(
        "without content capture the pause for confirmation is an UNSET tool span (an ok call) and the "
        "rejection a TOOL_ERROR one in a run no attribute links to the first: two runs, ok then error",
        {"call_del_1": {"outcome": "error"}},
    ),
    "google_adk_no_content/blocked_plugin": _ADK_PLUGIN,
    "google_adk_no_content/invalid_arguments": Limit(
        "without content capture the missing-parameter answer is a TOOL_ERROR span like a tool that "
        "returned an error dict; only the answer's text tells",
        {"call_mul_missing_b": {"outcome": "error"}},
    ),
    "google_adk_no_content/tool_error": Limit(
        "ADK writes the call id '<not specified>' on a tool that raised, and without content capture "
        "no span holds the model's request that carries it",
        {"call_fetch_1": {"call_id": None}},
    ),
    "vercel_ai_otel/single_tool_no_function_id": Limit(
        "without telemetry.functionId no attribute names the agent: the run is named after its span, "
        "the model id",
        {"call_mul_1": {"agent": "scripted-anonymous"}},
    ),
}


def adapted_files() -> list[Path]:
    return [path for framework in ADAPTED for path in trace_files(framework)]


def trace_files(framework: str | None = None) -> list[Path]:
    pattern = f"{framework}/*.json" if framework else "*/*.json"
    return sorted(
        p
        for p in CORPUS.glob(pattern)
        # a capture's .logs.json holds its OTLP log records, beside the trace file
        if not p.name.endswith((".truth.json", ".verdict.json", ".runoutput.json", ".logs.json"))
    )


def companion(trace: Path, kind: str) -> dict:
    return json.loads(trace.with_name(trace.stem + f".{kind}.json").read_text())


def scenario_id(trace: Path) -> str:
    return f"{trace.parent.name}/{trace.stem}"
