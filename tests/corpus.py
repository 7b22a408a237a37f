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


# The frameworks the adapters were built on: their traces reconstruct to the truth
# (test_corpus_truth.py), and the receiver's interoperability tests replay them. The other
# captured frameworks (tests/capture/) are read by the tests that hold for every trace.
ADAPTED = (
    "agno",
    "langgraph",
    "openai_agents",
    "pydantic_ai",
    "strands",
    "strands_latest_semconv",
    "traceloop_langgraph",
    "vercel_ai",
)

# Scenarios whose spans cannot tell what really ran, with the reason. test_corpus_truth.py
# holds them to AS_RECORDED instead of their truth: what the spans do show, never a guess.
LIMITS = {
    "traceloop_langgraph/blocked_tool_call_limit": (
        "a refused call is placed when the model asked for it, before the executions of the same turn"
        " (here the middleware did refuse it before the first call ran); the truth lists the turn's"
        " calls in the model's order"
    ),
    "traceloop_langgraph/single_tool_content_off": (
        "without content (TRACELOOP_TRACE_CONTENT=false) no span records a call id"
    ),
    "vercel_ai/single_tool_no_function_id": (
        "without ai.telemetry.functionId no span names the agent; the run is reported under its span name"
    ),
}

# For each LIMITS scenario, its attempts as the spans record them, in start order:
# (call id or None when none is recorded, tool, agent, outcome).
AS_RECORDED = {
    "traceloop_langgraph/blocked_tool_call_limit": [
        ("call_mul_2", "multiply", "calculator", "refused"),
        ("call_mul_1", "multiply", "calculator", "ok"),
    ],
    "traceloop_langgraph/single_tool_content_off": [(None, "multiply", "calculator", "ok")],
    "vercel_ai/single_tool_no_function_id": [("call_mul_1", "multiply", "ai.generateText", "ok")],
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
