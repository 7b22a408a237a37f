"""Shared access to the real-trace corpus copied into tests/fixtures/corpus."""

from __future__ import annotations

import json
from pathlib import Path

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


# The frameworks the adapters were built on: their traces (with their log records, where the
# capture wrote a .logs.json) reconstruct to the truth (test_corpus_truth.py), and the
# receiver's interoperability tests replay them. Every folder of the corpus is one of them.
ADAPTED = (
    "agent_framework",
    "agent_framework_baseline_semconv",
    "agno",
    "agno_openinference",
    "autogen",
    "beeai",
    "beeai_genai_semconv",
    "crewai",
    "crewai_event_listener",
    "dspy",
    "dspy_litellm",
    "google_adk",
    "google_adk_event_only",
    "google_adk_experimental",
    "google_adk_legacy",
    "google_adk_legacy_latest",
    "google_adk_no_content",
    "haystack",
    "haystack_native",
    "langgraph",
    "langgraph_subagents",
    "llama_index",
    "mcp_openai_agents",
    "mcp_openai_agents_semconv",
    "mcp_pydantic_ai",
    "mcp_pydantic_ai_semconv",
    "openai_agents",
    "openai_agents_guardrails",
    "openai_agents_openinference",
    "openai_v2",
    "openai_v2_latest",
    "pydantic_ai",
    "semantic_kernel",
    "smolagents",
    "strands",
    "strands_latest_semconv",
    "traceloop_langgraph",
    "vercel_ai",
    "vercel_ai_otel",
)

# The frameworks captured before the generic reader (SPEC §3, revised 2026-12-01 · b): about
# 2,500 spans, the load some receiver tests were sized for.
FIRST_CORPUS = (
    "agno",
    "autogen",
    "crewai",
    "crewai_event_listener",
    "google_adk",
    "google_adk_event_only",
    "google_adk_experimental",
    "google_adk_legacy",
    "google_adk_legacy_latest",
    "google_adk_no_content",
    "langgraph",
    "langgraph_subagents",
    "llama_index",
    "openai_agents",
    "openai_agents_guardrails",
    "openai_v2",
    "openai_v2_latest",
    "pydantic_ai",
    "smolagents",
    "strands",
    "strands_latest_semconv",
    "traceloop_langgraph",
    "vercel_ai",
    "vercel_ai_otel",
)

# Frameworks captured after the generic reader (SPEC §3, "Reading what no adapter was written
# for"), each with its cold score in its capture's NOTES.md: read by the generic reader and the
# profiles written for them so far, held to the floors of tests/fixtures/reading_floors.json
# (tests/test_reading_scores.py), not yet to their truth scenario by scenario.
# Issue 32: traced by observability SDKs whose span conventions the reader did not know; each
# scenario is read right, or is in LIMITS (tests/test_reading_scores.py holds it).
SDK_CAPTURES: tuple[str, ...] = (
    "genkit",
    "langfuse",
    "langfuse_langchain",
    "logfire_openai_agents",
    "logfire_pydantic_ai",
    "mlflow",
    "mlflow_langchain",
    "mlflow_openai_agents",
    "openlit_crewai",
    "openlit_langgraph",
    "openlit_openai_agents",
    "spring_ai",
)
LIFTING: tuple[str, ...] = (
    # issue 31 point 7: frameworks the corpus holds under another instrumentation, captured again
    # under a second one (the same scenarios, so framework knowledge can be tested under both)
    "agent_framework_openinference",
    "agno_traceloop",
    "crewai_traceloop",
    "llama_index_traceloop",
    "strands_openinference",
    *SDK_CAPTURES,
)

# Scenarios of a LIFTING folder that the assembly reads against one of its invariants today,
# each with why: the invariant test (test_corpus_truth.py) expects these to fail, strictly, so the
# fix that reads them shows. None now: OpenLIT's LangGraph spans, whose "invoke_agent <graph node>"
# spans split a run and held a call's request beside its execution, are read by their convention
# file (adapters/conventions/openlit_langgraph.yaml).
INVARIANT_BROKEN: dict[str, str] = {}

# Scenarios whose spans cannot tell what really ran, each with the reason. Their chains are
# held to what the spans record (AS_RECORDED), never to a guess.
LIMITS = {
    "autogen/blocked_workbench": (
        'no tool span and no model spans; run alone (agent.run) no runtime message span records the call '
        "either: only a team run's do (blocked_workbench_team); the run shows no request, so fail_on refused is not "
        'evaluated (NOT_EVALUATED)'
    ),
    "autogen/unknown_tool": (
        'no tool span and no model spans; run alone (agent.run) no runtime message span records the call '
        "either: only a team run's do (unknown_tool_team); the run shows no request, so fail_on refused is not "
        'evaluated (NOT_EVALUATED)'
    ),
    "beeai/blocked_tool_call_limit": (
        'beeai rejects the call past the limit inside the model call and asks the model again: no span '
        'records it'
    ),
    "beeai/unknown_tool": (
        'beeai rejects the unknown tool inside the model call and asks the model again: no span records '
        'it'
    ),
    "beeai_genai_semconv/blocked_tool_call_limit": (
        'beeai rejects the call past the limit inside the model call and asks the model again: no span '
        'records it'
    ),
    "beeai_genai_semconv/parallel_tools": (
        'two calls of one tool in one model turn, on spans with no call id: which request the second '
        'carried out is a guess, so it gets no call id'
    ),
    "beeai_genai_semconv/unknown_tool": (
        'beeai rejects the unknown tool inside the model call and asks the model again: no span records '
        'it'
    ),
    "crewai_event_listener/blocked_hook": 'the hook-blocked call has an OK tool span; only its output text says it never ran',
    "crewai_event_listener/blocked_usage_limit": 'the limit-refused call has an OK tool span; only its output text says it never ran',
    "crewai_event_listener/unknown_tool": "the unknown tool's call has an OK tool span; only its output text says no tool ran",
    "google_adk/blocked_before_tool_callback": (
        "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk/blocked_plugin": (
        "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_event_only/blocked_before_tool_callback": (
        "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_event_only/blocked_plugin": (
        "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_legacy/blocked_before_tool_callback": (
        "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_legacy/blocked_plugin": (
        "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_legacy_latest/blocked_before_tool_callback": (
        "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_legacy_latest/blocked_plugin": (
        "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_no_content/blocked_before_tool_callback": (
        "a before_tool_callback's error dict is recorded exactly like a tool that returned it; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_no_content/blocked_confirmation_denied": (
        'without content capture the pause for confirmation is an UNSET tool span (an ok call) and the '
        'rejection a TOOL_ERROR one in a run no attribute links to the first: two runs, ok then error'
    ),
    "google_adk_no_content/blocked_plugin": (
        "a plugin's before_tool_callback result is recorded exactly like a successful run; only "
        "ADK_EXPERIMENTAL_TELEMETRY's adk.experimental.response.source tells (google_adk_experimental)"
    ),
    "google_adk_no_content/invalid_arguments": (
        'without content capture the missing-parameter answer is a TOOL_ERROR span like a tool that '
        "returned an error dict; only the answer's text tells"
    ),
    "google_adk_no_content/tool_error": (
        "ADK writes the call id '<not specified>' on a tool that raised, and without content capture no "
        "span holds the model's request that carries it"
    ),
    "langgraph_subagents/invalid_arguments": 'a validation failure is an ERROR tool span, like the tool raising',
    "llama_index/blocked_approval_denied": "the denial is the tool's own OK return text",
    "llama_index/blocked_handoff_not_allowed": 'the refused handoff is an OK tool span whose text says so',
    "llama_index/invalid_arguments": 'a missing argument fails the Python call: an ERROR tool span, like the tool raising',
    "mcp_openai_agents/approval_approved_no_outer_trace": 'the resumed run (no outer trace) exports no span: the call stays pending',
    "mcp_openai_agents_semconv/approval_approved_no_outer_trace": 'the resumed run (no outer trace) exports no span: the call stays pending',
    "openai_agents_guardrails/approval_approved": 'the resumed run (no outer trace) exports no span: the call stays pending',
    "openai_agents_guardrails/blocked_tool_input_guardrail": 'a rejecting input guardrail leaves an OK tool span with its text',
    "openai_agents_openinference/blocked_tool_input_guardrail": (
        'a rejecting input guardrail leaves an OK tool span whose output is its message: recorded like a '
        'run'
    ),
    "semantic_kernel/blocked_function_filter": (
        'a function filter that returns a result in place of the call leaves an OK tool span with that '
        'result: recorded like a run'
    ),
    "smolagents/run_error": (
        'a run that raises exports no run span: its steps point to a parent missing from the trace, so no'
        ' span known to enclose the run is there to infer it from, and no run is found'
    ),
    "spring_ai/limit": (
        'the call over the per-tool limit has no span and the model spans carry no messages: the run '
        'passes on the two calls that ran (docs/conventions.md leaves runs without message content so); '
        'the model call that asked for all three finished with TOOL_CALLS, but two ran after it: its '
        'finish reason cannot tell that one more was asked for'
    ),
    "spring_ai/unknown_tool": (
        'the run fails before any tool span, and no span records the requested name but the error '
        'text of the run: no run is found'
    ),
    "traceloop_langgraph/single_tool_content_off": 'content off (TRACELOOP_TRACE_CONTENT=false): no span records a call id',
}

# What the spans of each LIMITS scenario record: (call id, tool, agent, outcome) in start order.
AS_RECORDED = {
    "autogen/blocked_workbench": [
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "autogen/unknown_tool": [
        ('call_mul_after_unknown', 'multiply', 'calculator', 'ok'),
    ],
    "beeai/blocked_tool_call_limit": [
        ('call_beeai_blocked_tool_call_limit_get_weather_1', 'get_weather', 'weather', 'ok'),
    ],
    "beeai/unknown_tool": [
        ('call_beeai_unknown_tool_multiply_1', 'multiply', 'calculator', 'ok'),
    ],
    "beeai_genai_semconv/blocked_tool_call_limit": [
        ('call_beeai_blocked_tool_call_limit_get_weather_1', 'get_weather', 'weather', 'ok'),
    ],
    "beeai_genai_semconv/parallel_tools": [
        ('call_beeai_parallel_tools_get_weather_1', 'get_weather', 'weather', 'ok'),
        (None, 'get_weather', 'weather', 'ok'),
    ],
    "beeai_genai_semconv/unknown_tool": [
        ('call_beeai_unknown_tool_multiply_1', 'multiply', 'calculator', 'ok'),
    ],
    "crewai_event_listener/blocked_hook": [
        ('call_crewel_blocked_hook_del_1', 'delete_file', 'janitor', 'ok'),
    ],
    "crewai_event_listener/blocked_usage_limit": [
        ('call_crewel_blocked_usage_limit_mul_1', 'multiply', 'calculator', 'ok'),
        ('call_crewel_blocked_usage_limit_mul_2', 'multiply', 'calculator', 'ok'),
    ],
    "crewai_event_listener/unknown_tool": [
        ('call_crewel_unknown_tool_unknown_1', 'format_disk', 'calculator', 'ok'),
        ('call_crewel_unknown_tool_mul_1', 'multiply', 'calculator', 'ok'),
    ],
    "google_adk/blocked_before_tool_callback": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk/blocked_plugin": [
        ('call_del_1', 'delete_file', 'janitor', 'ok'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_event_only/blocked_before_tool_callback": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_event_only/blocked_plugin": [
        ('call_del_1', 'delete_file', 'janitor', 'ok'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_legacy/blocked_before_tool_callback": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_legacy/blocked_plugin": [
        ('call_del_1', 'delete_file', 'janitor', 'ok'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_legacy_latest/blocked_before_tool_callback": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_legacy_latest/blocked_plugin": [
        ('call_del_1', 'delete_file', 'janitor', 'ok'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_no_content/blocked_before_tool_callback": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_no_content/blocked_confirmation_denied": [
        ('call_del_1', 'delete_file', 'janitor', 'error'),
    ],
    "google_adk_no_content/blocked_plugin": [
        ('call_del_1', 'delete_file', 'janitor', 'ok'),
        ('call_del_2', 'delete_file', 'janitor', 'ok'),
    ],
    "google_adk_no_content/invalid_arguments": [
        ('call_mul_missing_b', 'multiply', 'calculator', 'error'),
        ('call_mul_good', 'multiply', 'calculator', 'ok'),
    ],
    "google_adk_no_content/tool_error": [
        (None, 'fetch_url', 'fetcher', 'error'),
    ],
    "langgraph_subagents/invalid_arguments": [
        ('call_mul_bad', 'multiply', 'calculator', 'error'),
        ('call_mul_1', 'multiply', 'calculator', 'ok'),
    ],
    "llama_index/blocked_approval_denied": [
        ('call_llama_blocked_approval_denied_del_1', 'delete_file', 'janitor', 'ok'),
    ],
    "llama_index/blocked_handoff_not_allowed": [
        ('call_llama_blocked_handoff_not_allowed_handoff_1', 'handoff', 'router', 'ok'),
    ],
    "llama_index/invalid_arguments": [
        ('call_llama_invalid_arguments_mul_bad', 'multiply', 'calculator', 'error'),
        ('call_llama_invalid_arguments_mul_good', 'multiply', 'calculator', 'ok'),
    ],
    "mcp_openai_agents/approval_approved_no_outer_trace": [
        ('call_mcpoa_approval_approved_no_outer_trace_delete_file_1', 'delete_file', 'janitor', 'pending|refused'),
    ],
    "mcp_openai_agents_semconv/approval_approved_no_outer_trace": [
        ('call_mcpoa_semconv_approval_approved_no_outer_trace_delete_file_1', 'delete_file', 'janitor', 'pending|refused'),
    ],
    "openai_agents_guardrails/approval_approved": [
        ('call_delete_1', 'delete_file', 'janitor', 'pending|refused'),
    ],
    "openai_agents_guardrails/blocked_tool_input_guardrail": [
        ('call_delete_1', 'delete_file', 'janitor', 'ok'),
        ('call_delete_2', 'delete_file', 'janitor', 'ok'),
    ],
    "openai_agents_openinference/blocked_tool_input_guardrail": [
        ('call_oaioi_blocked_tool_input_guardrail_delete_file_1', 'delete_file', 'janitor', 'ok'),
        ('call_oaioi_blocked_tool_input_guardrail_delete_file_2', 'delete_file', 'janitor', 'ok'),
    ],
    "semantic_kernel/blocked_function_filter": [
        ('call_sk_blocked_function_filter_delete_file_1', 'FilePlugin-delete_file', 'janitor', 'ok'),
    ],
    "smolagents/run_error": [],
    "spring_ai/limit": [
        ('call_mul_1', 'multiply', 'calculator', 'ok'),
        ('call_mul_2', 'multiply', 'calculator', 'ok'),
    ],
    "spring_ai/unknown_tool": [],
    "traceloop_langgraph/single_tool_content_off": [
        (None, 'multiply', 'calculator', 'ok'),
    ],
}


# The corpus whose figures the corpus-wide metric and alert tests pin (counts per agent and
# tool, run counts near an alert's minimum): frameworks adapted since then do not move them.
FIGURES_CORPUS = ("agno", "langgraph", "openai_agents", "pydantic_ai", "strands", "strands_latest_semconv")


def figures_files() -> list[Path]:
    return [path for framework in FIGURES_CORPUS for path in trace_files(framework)]


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


def logs_of(trace: Path) -> Path | None:
    """The capture's OTLP log records beside a trace file (``<scenario>.logs.json``), if any."""
    logs = trace.with_name(trace.stem + ".logs.json")
    return logs if logs.exists() else None


def companion(trace: Path, kind: str) -> dict:
    return json.loads(trace.with_name(trace.stem + f".{kind}.json").read_text())


def scenario_id(trace: Path) -> str:
    return f"{trace.parent.name}/{trace.stem}"
