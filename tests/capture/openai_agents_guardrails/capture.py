"""Capture openai-agents guardrail and approval traces (OpenInference openai-agents instrumentation).

What the shared openai-agents corpus lacks: tool input and output guardrails (reject and
raise), agent input and output guardrails that trip, and tool approvals (``needs_approval``)
both approved and rejected, with and without an outer ``agents.trace``; plus the unknown-tool
and invalid-arguments refusals, all with the Chat Completions model.

Offline: the model is the SDK's ``OpenAIChatCompletionsModel`` with an ``AsyncOpenAI`` client
pointed at ``capture_common.ScriptedOpenAI`` on 127.0.0.1. The instrumentor replaces the SDK's
trace processors (``exclusive_processor``), so nothing is exported to OpenAI; no key is set.
Ground truth is recorded inside the tool bodies, with the call id and agent from ``ToolContext``.

Run:  /tmp/capture-openai_agents_guardrails/bin/python tests/capture/openai_agents_guardrails/capture.py
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
from capture_common import reply, tool_call  # noqa: E402

os.environ.pop("OPENAI_API_KEY", None)  # nothing may be exported to OpenAI

from agents import (  # noqa: E402
    Agent,
    GuardrailFunctionOutput,
    OpenAIChatCompletionsModel,
    Runner,
    ToolGuardrailFunctionOutput,
    function_tool,
    input_guardrail,
    output_guardrail,
    tool_input_guardrail,
    tool_output_guardrail,
    trace,
)
from agents.tool_context import ToolContext  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace as trace_api  # noqa: E402
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

FRAMEWORK = "openai_agents_guardrails"
provider, exporter = cc.tracing("corpus-openai-agents-guardrails")
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
server = cc.ScriptedOpenAI()


def model() -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="scripted-no-key", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)


def _record(ctx: ToolContext[Any], name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    agent = ctx.agent.name if ctx.agent is not None else cc.current_agent.get()
    _saw_span("body", ctx.tool_call_id)
    cc.record(name, arguments, outcome, agent, tool_call_id=ctx.tool_call_id, **extra)


# The span that is current where the SDK handles a call, seen from inside: the tool body's is
# the call's execution span; the one a guardrail or the approval check runs in is the tool
# span a call got although its body never ran. (The instrumentation makes the TOOL span
# current there; the tool spans carry no call id of their own.)
_spans_seen: dict[tuple[str, str], int] = {}


def _saw_span(where: str, call_id: str) -> None:
    _spans_seen.setdefault((where, call_id), trace_api.get_current_span().get_span_context().span_id)


def with_tool_spans(executions: list[dict[str, Any]], spans: list[Any]) -> list[dict[str, Any]]:
    exported = {span.context.span_id: span for span in spans}

    def described(where: str, call_id: str, how: str) -> dict[str, Any] | None:
        span = exported.get(_spans_seen.get((where, call_id), 0))
        return span and {"span_id": f"{span.context.span_id:016x}", "span_name": span.name,
                         "status": span.status.status_code.name, "matched_by": how}

    annotated = []
    for entry in executions:
        call_id = entry["tool_call_id"]
        checked = described("check", call_id, "current span inside the guardrail / approval check")
        if entry["outcome"] == "refused":
            annotated.append({**entry, "tool_span_despite_refusal": checked})
            continue
        ran = described("body", call_id, "current span inside the tool body")
        pending_elsewhere = checked and (not ran or checked["span_id"] != ran["span_id"])
        extra = {"tool_span_while_pending": checked} if pending_elsewhere else {}
        annotated.append({**entry, "execution_span": ran, **extra})
    return annotated


# -- guardrails -------------------------------------------------------------------------------


@tool_input_guardrail
def no_system_paths(data: Any) -> ToolGuardrailFunctionOutput:
    """Rejects a delete under /etc: the model is told, the tool never runs."""
    _saw_span("check", data.context.tool_call_id)
    if "/etc/" in (data.context.tool_arguments or ""):
        return ToolGuardrailFunctionOutput.reject_content("Refused: system paths may not be deleted.")
    return ToolGuardrailFunctionOutput.allow()


@tool_input_guardrail
def observe_call(data: Any) -> ToolGuardrailFunctionOutput:
    _saw_span("check", data.context.tool_call_id)
    return ToolGuardrailFunctionOutput.allow()


@tool_input_guardrail
def halt_on_system_paths(data: Any) -> ToolGuardrailFunctionOutput:
    """Raises on a delete under /etc: the run ends, the tool never runs."""
    _saw_span("check", data.context.tool_call_id)
    if "/etc/" in (data.context.tool_arguments or ""):
        return ToolGuardrailFunctionOutput.raise_exception(output_info="system path")
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def no_secrets_out(data: Any) -> ToolGuardrailFunctionOutput:
    """Withholds an output that carries a secret: the tool ran, the model gets the message instead."""
    if "SECRET" in str(data.output):
        return ToolGuardrailFunctionOutput.reject_content("Withheld: the output contained a secret.")
    return ToolGuardrailFunctionOutput.allow()


@tool_output_guardrail
def halt_on_secrets_out(data: Any) -> ToolGuardrailFunctionOutput:
    if "SECRET" in str(data.output):
        return ToolGuardrailFunctionOutput.raise_exception(output_info="secret in output")
    return ToolGuardrailFunctionOutput.allow()


@input_guardrail(run_in_parallel=False)
def no_homework(ctx: Any, agent: Any, prompt: Any) -> GuardrailFunctionOutput:
    """Blocking agent input guardrail: runs before the model is called."""
    return GuardrailFunctionOutput(output_info="homework request", tripwire_triggered="homework" in str(prompt))


@output_guardrail
def no_numbers_out(ctx: Any, agent: Any, output: Any) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="number in answer", tripwire_triggered=any(c.isdigit() for c in str(output)))


# -- tools ------------------------------------------------------------------------------------


def _multiply(ctx: ToolContext[Any], a: int, b: int) -> int:
    """Multiply two integers."""
    _record(ctx, "multiply", {"a": a, "b": b})
    return a * b


multiply = function_tool(_multiply, name_override="multiply")
# The same tool with a guardrail that only looks: it shows which span a call that fails
# validation (its body never runs) still got.
observed_multiply = function_tool(_multiply, name_override="multiply", tool_input_guardrails=[observe_call])


@function_tool
def lookup_weather(ctx: ToolContext[Any], city: str) -> str:
    """Weather for a city."""
    _record(ctx, "lookup_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@function_tool
def fetch_url(ctx: ToolContext[Any], url: str) -> str:
    """Fetch a URL (always fails: no network here)."""
    _record(ctx, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
    raise ConnectionError("network unreachable")


def delete_file_tool(**options: Any) -> Any:
    @function_tool(name_override="delete_file", **options)
    def delete_file(ctx: ToolContext[Any], path: str) -> str:
        """Delete a file."""
        _record(ctx, "delete_file", {"path": path})
        return f"deleted {path}"

    return delete_file


def read_config_tool(**options: Any) -> Any:
    @function_tool(name_override="read_config", **options)
    def read_config(ctx: ToolContext[Any], key: str) -> str:
        """Read a configuration value."""
        _record(ctx, "read_config", {"key": key})
        return f"{key}=SECRET-42"

    return read_config


def agent(name: str, tools: list[Any], **options: Any) -> Agent[Any]:
    return Agent(name=name, instructions="Use the tools.", tools=tools, model=model(), **options)


# -- scenarios --------------------------------------------------------------------------------


async def single_tool() -> None:
    server.script(reply(tool_calls=[tool_call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), reply("50"))
    await Runner.run(agent("calculator", [multiply]), "What is 10 times 5?")


async def parallel_tools() -> None:
    server.script(reply(tool_calls=[tool_call("multiply", {"a": 3, "b": 4}, "call_mul_1"),
                                    tool_call("lookup_weather", {"city": "Paris"}, "call_weather_1")]),
                  reply("12; Paris is sunny"))
    await Runner.run(agent("assistant", [multiply, lookup_weather]), "3*4, and the weather in Paris?")


async def unknown_tool() -> None:
    # The SDK's default for a tool name it does not know: ModelBehaviorError, the run fails.
    server.script(reply(tool_calls=[tool_call("format_disk", {"drive": "C:"}, "call_unknown_1")]))
    try:
        await Runner.run(agent("calculator", [multiply]), "Format the disk")
    finally:
        cc.add_refused("format_disk", {"drive": "C:"}, "calculator", "no tool of that name", "unknown_tool",
                       tool_call_id="call_unknown_1")


async def invalid_arguments() -> None:
    server.script(reply(tool_calls=[tool_call("multiply", {"a": "ten", "b": 5}, "call_mul_bad")]),
                  reply(tool_calls=[tool_call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), reply("50"))
    await Runner.run(agent("calculator", [observed_multiply]), "ten times 5")
    refuse(0, "multiply", {"a": "ten", "b": 5}, "calculator", "arguments fail the tool's schema",
           "invalid_arguments", tool_call_id="call_mul_bad")


async def tool_error() -> None:
    # The SDK's default failure_error_function turns the exception into a message for the model.
    server.script(reply(tool_calls=[tool_call("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")]),
                  reply("The page could not be fetched."))
    await Runner.run(agent("fetcher", [fetch_url]), "Fetch https://example.invalid/")


async def blocked_tool_input_guardrail() -> None:
    server.script(reply(tool_calls=[tool_call("delete_file", {"path": "/etc/passwd"}, "call_delete_1")]),
                  reply(tool_calls=[tool_call("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_2")]),
                  reply("Deleted the scratch file; /etc/passwd was refused."))
    await Runner.run(agent("janitor", [delete_file_tool(tool_input_guardrails=[no_system_paths])]),
                     "Delete /etc/passwd, then /srv/scratch.txt")
    refuse(0, "delete_file", {"path": "/etc/passwd"}, "janitor", "tool input guardrail no_system_paths: reject_content",
           "policy_guard", tool_call_id="call_delete_1")


async def blocked_tool_input_guardrail_raise() -> None:
    server.script(reply(tool_calls=[tool_call("delete_file", {"path": "/etc/passwd"}, "call_delete_1")]))
    try:
        await Runner.run(agent("janitor", [delete_file_tool(tool_input_guardrails=[halt_on_system_paths])]),
                         "Delete /etc/passwd")
    finally:
        cc.add_refused("delete_file", {"path": "/etc/passwd"}, "janitor",
                       "tool input guardrail halt_on_system_paths: raise_exception (run ends)", "policy_guard",
                       tool_call_id="call_delete_1")


async def tool_output_guardrail() -> None:
    # The body runs (truth: ok); the guardrail replaces its output before the model sees it.
    server.script(reply(tool_calls=[tool_call("read_config", {"key": "db_password"}, "call_config_1")]),
                  reply("The value was withheld."))
    await Runner.run(agent("operator", [read_config_tool(tool_output_guardrails=[no_secrets_out])]),
                     "What is db_password?")


async def tool_output_guardrail_raise() -> None:
    server.script(reply(tool_calls=[tool_call("read_config", {"key": "db_password"}, "call_config_1")]))
    await Runner.run(agent("operator", [read_config_tool(tool_output_guardrails=[halt_on_secrets_out])]),
                     "What is db_password?")


async def input_guardrail_tripped() -> None:
    # Blocking (run_in_parallel=False): the model is never asked (nothing is scripted for it),
    # so no call is ever requested.
    await Runner.run(agent("tutor", [multiply], input_guardrails=[no_homework]), "Do my homework: 6*7")


async def output_guardrail_tripped() -> None:
    server.script(reply(tool_calls=[tool_call("multiply", {"a": 6, "b": 7}, "call_mul_1")]), reply("42"))
    await Runner.run(agent("calculator", [multiply], output_guardrails=[no_numbers_out]), "6*7, in words please")


async def _approval(approve: bool, outer_trace: bool) -> None:
    server.script(reply(tool_calls=[tool_call("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_1")]),
                  reply("Deleted." if approve else "I was not allowed to delete it."))
    async def every_call_needs_approval(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        _saw_span("check", call_id)
        return True

    janitor = agent("janitor", [delete_file_tool(needs_approval=every_call_needs_approval)])

    async def both_runs() -> None:
        first = await Runner.run(janitor, "Delete /srv/scratch.txt")
        if len(first.interruptions) != 1:
            raise AssertionError(f"expected one approval interruption, got {len(first.interruptions)}")
        state = first.to_state()
        if approve:
            state.approve(first.interruptions[0])
        else:
            state.reject(first.interruptions[0], rejection_message="operator rejected: scratch file is still in use")
        await Runner.run(janitor, state)

    if outer_trace:
        with trace("approval workflow"):
            await both_runs()
    else:
        await both_runs()
    if not approve:
        cc.add_refused("delete_file", {"path": "/srv/scratch.txt"}, "janitor", "approval rejected (RunState.reject)",
                       "approval_denied", tool_call_id="call_delete_1")


def refuse(position: int, *args: Any, **extra: Any) -> None:
    """``cc.add_refused``, placed where the model asked for the call among the executions."""
    cc.add_refused(*args, **extra)
    with cc._lock:
        cc._truth.insert(position, cc._truth.pop())
        for seq, entry in enumerate(cc._truth, start=1):
            entry["seq"] = seq


APPROVAL_NOTE = ("Run 1 stops with an interruption; the resumed Runner.run(agent, state) continues the same SDK "
                 "trace.")
SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[None]], str]] = [
    ("single_tool", "Chat Completions model: multiply(a=10, b=5), then final text", single_tool, ""),
    ("parallel_tools", "Chat Completions model: multiply(3, 4) and lookup_weather(Paris) in one turn, then text",
     parallel_tools, "The SDK runs both calls concurrently; seq is the real start order."),
    ("unknown_tool", "model asks for format_disk (no such tool): the SDK raises ModelBehaviorError, the run fails",
     unknown_tool, ""),
    ("invalid_arguments", "multiply(a='ten', b=5) fails validation (body never runs); then multiply(10, 5); then text",
     invalid_arguments, ""),
    ("tool_error", "fetch_url raises; the SDK sends an error message to the model; then text", tool_error,
     "For comparison with invalid_arguments: both are ERROR TOOL spans."),
    ("blocked_tool_input_guardrail", "tool input guardrail rejects delete_file(/etc/passwd) (reject_content); "
     "then delete_file(/srv/scratch.txt) runs", blocked_tool_input_guardrail, ""),
    ("blocked_tool_input_guardrail_raise", "tool input guardrail raises on delete_file(/etc/passwd): "
     "ToolInputGuardrailTripwireTriggered ends the run", blocked_tool_input_guardrail_raise, ""),
    ("tool_output_guardrail", "read_config runs; the tool output guardrail withholds its output (reject_content)",
     tool_output_guardrail, "The tool body ran: an output guardrail is no refusal of the call."),
    ("tool_output_guardrail_raise", "read_config runs; the tool output guardrail raises: "
     "ToolOutputGuardrailTripwireTriggered ends the run", tool_output_guardrail_raise,
     "The tool body ran before the run ended."),
    ("input_guardrail_tripped", "blocking agent input guardrail trips before the model is called: "
     "InputGuardrailTripwireTriggered, no tool call requested", input_guardrail_tripped, ""),
    ("output_guardrail_tripped", "multiply runs; the agent output guardrail trips on the final answer: "
     "OutputGuardrailTripwireTriggered", output_guardrail_tripped, ""),
    ("blocked_approval_rejected", "delete_file needs_approval; run 1 interrupts, RunState.reject, run 2 resumes "
     "(no outer trace)", lambda: _approval(False, outer_trace=False), APPROVAL_NOTE),
    ("blocked_approval_rejected_outer_trace", "same as blocked_approval_rejected, inside with agents.trace(...)",
     lambda: _approval(False, outer_trace=True), APPROVAL_NOTE),
    ("approval_approved", "delete_file needs_approval; run 1 interrupts, RunState.approve, run 2 runs it "
     "(no outer trace)", lambda: _approval(True, outer_trace=False), APPROVAL_NOTE),
    ("approval_approved_outer_trace", "same as approval_approved, inside with agents.trace(...)",
     lambda: _approval(True, outer_trace=True), APPROVAL_NOTE),
]


async def run_all(only: set[str]) -> None:
    for name, description, body, notes in SCENARIOS:
        if only and name not in only:
            continue
        exporter.clear()
        cc.reset_truth()
        _spans_seen.clear()
        outcome, error = "ok", None
        try:
            await body()
        except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            print(f"{name}: {error}")
        provider.force_flush()
        if server.left():
            raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
        truth = {"description": description, "run_outcome": outcome, "run_error": error,
                 "tool_executions": with_tool_spans(cc.truth_snapshot(), list(exporter.get_finished_spans())),
                 "delegation": {}, "notes": notes}
        cc.save_scenario(FRAMEWORK, name, list(exporter.get_finished_spans()), truth)


if __name__ == "__main__":
    with server:
        asyncio.run(run_all(set(sys.argv[1:])))
