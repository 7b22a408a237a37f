"""Capture Google ADK's own OpenTelemetry spans and GenAI log records, offline.

The model is a ``BaseLlm`` subclass that answers from a script of ``LlmResponse``s (the
function-call ids are chosen here, so they are ground truth too). ADK takes its tracer and
logger from the global OpenTelemetry providers, so both are set before ADK is imported.

Modes (one fixture folder each, the environment ADK reads in ``MODES``):

    google_adk                ADK's default telemetry schema (v2, GenAI semconv aligned) with
                              content capture on (SPAN_AND_EVENT)
    google_adk_no_content     the same with nothing set: no arguments, results or messages
    google_adk_event_only     content capture "true" (= EVENT_ONLY): messages in log records only
    google_adk_experimental   v2 + content + ADK_EXPERIMENTAL_TELEMETRY (blocked scenarios only)
    google_adk_legacy         ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1, the legacy schema (ADK 1.x shape)
    google_adk_legacy_latest  legacy + OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental

``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` on the default schema is not a
mode: schema v2 has the experimental GenAI semconv on already and the variable changes
nothing there (NOTES.md). Run:

    /tmp/capture-google_adk/bin/python tests/capture/google_adk/capture.py [--mode MODE] [scenario ...]

Without ``--mode`` every configuration is captured, each in a process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

MODES = {
    "google_adk": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT"},
    "google_adk_no_content": {},
    "google_adk_event_only": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "google_adk_experimental": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_AND_EVENT",
                                "ADK_EXPERIMENTAL_TELEMETRY": "true"},
    "google_adk_legacy": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
    "google_adk_legacy_latest": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1",
                                 "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
}
# That folder is about the calls a callback answered, which the experimental switch marks.
MODE_SCENARIOS = {"google_adk_experimental": ("blocked_before_tool_callback", "blocked_plugin", "blocked_confirmation_denied")}

_cli = argparse.ArgumentParser()
_cli.add_argument("--mode", choices=sorted(MODES), help="one configuration (default: every one)")
_cli.add_argument("scenarios", nargs="*")
ARGS = _cli.parse_args()
if ARGS.mode is None:
    # ADK reads the environment once: every configuration runs in a process of its own.
    import subprocess

    for mode in MODES:
        subprocess.run([sys.executable, __file__, "--mode", mode, *ARGS.scenarios], check=True)
    sys.exit(0)
# ADK reads its telemetry switches from the environment: set them before it is imported.
os.environ.update(MODES[ARGS.mode])

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

FRAMEWORK = ARGS.mode
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")
log_provider, log_exporter = cc.logging_provider(f"corpus-{FRAMEWORK.replace('_', '-')}")
trace.set_tracer_provider(provider)
_logs.set_logger_provider(log_provider)

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.plugins.base_plugin import BasePlugin  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools import AgentTool as AdkAgentTool, FunctionTool, ToolContext  # noqa: E402
from google.genai import types  # noqa: E402

APP = "corpus"
USER = "user-1"


class ScriptedLlm(BaseLlm):
    """Answers each model request with the next scripted list of parts."""

    script: list[list[types.Part]]

    async def generate_content_async(self, llm_request: Any, stream: bool = False):
        if not self.script:
            raise AssertionError(f"scripted model {self.model} has no answer left")
        yield LlmResponse(content=types.Content(role="model", parts=self.script.pop(0)))


def call(name: str, args: dict[str, Any], call_id: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))


def text(value: str) -> types.Part:
    return types.Part(text=value)


def model(name: str, *turns: list[types.Part]) -> ScriptedLlm:
    return ScriptedLlm(model=name, script=list(turns))


# -- tools: each body records itself, with the call id and agent ADK hands it ----------


def _record(ctx: ToolContext, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, ctx.agent_name, tool_call_id=ctx.function_call_id, **extra)


def multiply(a: int, b: int, tool_context: ToolContext) -> int:
    """Multiply two integers."""
    _record(tool_context, "multiply", {"a": a, "b": b})
    return a * b


def add(a: int, b: int, tool_context: ToolContext) -> int:
    """Add two integers."""
    _record(tool_context, "add", {"a": a, "b": b})
    return a + b


def get_weather(city: str, tool_context: ToolContext) -> str:
    """Current weather of a city."""
    _record(tool_context, "get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


def search(query: str, tool_context: ToolContext) -> str:
    """Search the catalogue."""
    _record(tool_context, "search", {"query": query})
    return "widget: 42 EUR"


def compute(expression: str, tool_context: ToolContext) -> int:
    """Evaluate 'a * b'."""
    _record(tool_context, "compute", {"expression": expression})
    left, right = expression.split("*")
    return int(left) * int(right)


def fetch_url(url: str, tool_context: ToolContext) -> str:
    """Fetch a URL (the network is always unreachable here)."""
    _record(tool_context, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
    raise ConnectionError("network unreachable")


def delete_file(path: str, tool_context: ToolContext) -> str:
    """Delete a file."""
    _record(tool_context, "delete_file", {"path": path})
    return f"deleted {path}"


def lookup(term: str, tool_context: ToolContext) -> str:
    """Encyclopedia lookup."""
    _record(tool_context, "lookup", {"term": term})
    return f"{term}: a statically typed functional language"


def refund(order_id: str, tool_context: ToolContext) -> str:
    """Refund an order."""
    _record(tool_context, "refund", {"order_id": order_id})
    return f"refunded {order_id}"


class AgentTool(AdkAgentTool):
    """ADK's AgentTool, recording itself when it starts (before the sub-agent's own tools).

    It keeps the name AgentTool because ADK writes the tool's class name into
    ``gen_ai.tool.type``: the spans stay what a plain AgentTool emits.
    """

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        _record(tool_context, self.name, dict(args), delegates_to=self.agent.name)
        return await super().run_async(args=args, tool_context=tool_context)


def record_transfer(tool: Any, args: dict[str, Any], tool_context: ToolContext, tool_response: Any) -> None:
    """after_tool_callback: ADK's built-in transfer_to_agent ran (its body is ADK's, not ours)."""
    if tool.name == "transfer_to_agent":
        _record(tool_context, "transfer_to_agent", dict(args), handoff=True,
                note="recorded by after_tool_callback: the tool body is ADK's own")
    return None


# -- running -----------------------------------------------------------------------------


async def run_turns(agent: LlmAgent, *messages: types.Content, plugins: list[BasePlugin] | None = None,
                    on_event: Callable[[Any], None] | None = None) -> list[Any]:
    """One session; each message is one invocation (one trace). Returns every event."""
    runner = InMemoryRunner(agent, app_name=APP, plugins=plugins or [])
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    events = []
    for message in messages:
        async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
            events.append(event)
            if on_event:
                on_event(event)
    await runner.close()
    return events


def user(value: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=value)])


def scenario_single_tool() -> Awaitable[Any]:
    agent = LlmAgent(name="calculator", model=model("scripted-single", [call("multiply", {"a": 10, "b": 5}, "call_mul_1")],
                                                    [text("10 * 5 = 50")]), tools=[multiply, add])
    return run_turns(agent, user("What is 10 times 5?"))


def scenario_parallel_tools() -> Awaitable[Any]:
    agent = LlmAgent(name="weather", model=model(
        "scripted-parallel",
        [call("get_weather", {"city": "Paris"}, "call_w_paris"), call("get_weather", {"city": "London"}, "call_w_london")],
        [text("Paris is sunny, London rainy")]), tools=[get_weather])
    return run_turns(agent, user("Weather in Paris and London?"))


def scenario_sequential_chain() -> Awaitable[Any]:
    agent = LlmAgent(name="shopper", model=model(
        "scripted-chain",
        [call("search", {"query": "widget price"}, "call_search_1")],
        [call("compute", {"expression": "42*3"}, "call_compute_1")],
        [text("3 widgets cost 126 EUR")]), tools=[search, compute])
    return run_turns(agent, user("How much do 3 widgets cost?"))


def scenario_tool_error() -> Awaitable[Any]:
    agent = LlmAgent(name="fetcher", model=model(
        "scripted-tool-error", [call("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")],
        [text("never reached: the exception ends the run")]), tools=[fetch_url])
    return run_turns(agent, user("Fetch the page"))


def _error_to_result(tool: Any, args: dict[str, Any], tool_context: ToolContext, error: Exception) -> dict[str, Any]:
    return {"error": f"{type(error).__name__}: {error}"}


def scenario_tool_error_handled() -> Awaitable[Any]:
    agent = LlmAgent(name="fetcher", model=model(
        "scripted-tool-error-handled",
        [call("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")],
        [call("fetch_url", {"url": "https://mirror.example.invalid/"}, "call_fetch_2")],
        [text("both fetches failed")]), tools=[fetch_url], on_tool_error_callback=_error_to_result)
    return run_turns(agent, user("Fetch the page"))


def scenario_unknown_tool() -> Awaitable[Any]:
    agent = LlmAgent(name="calculator", model=model(
        "scripted-unknown-tool", [call("format_disk", {"drive": "C:"}, "call_unknown_1")],
        [call("multiply", {"a": 6, "b": 7}, "call_mul_after_unknown")], [text("42")]), tools=[multiply, add])
    cc.add_refused("format_disk", {"drive": "C:"}, "calculator", "tool not registered: ADK answers "
                   "'Tool format_disk not found' without running anything", "unknown_tool", tool_call_id="call_unknown_1")
    return run_turns(agent, user("Format the disk, then multiply 6 by 7"))


def scenario_invalid_arguments() -> Awaitable[Any]:
    agent = LlmAgent(name="calculator", model=model(
        "scripted-invalid-arguments", [call("multiply", {"a": 10}, "call_mul_missing_b")],
        [call("multiply", {"a": 10, "b": 5}, "call_mul_good")], [text("50")]), tools=[multiply, add])
    cc.add_refused("multiply", {"a": 10}, "calculator", "mandatory parameter b missing: FunctionTool answers an "
                   "error dict without calling the function", "invalid_arguments", tool_call_id="call_mul_missing_b")
    return run_turns(agent, user("What is 10 times five?"))


def _guard(tool: Any, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
    if tool.name == "delete_file" and str(args.get("path", "")).startswith("/etc"):
        return {"error": "policy: deleting system files is not allowed"}
    return None


def scenario_blocked_before_tool_callback() -> Awaitable[Any]:
    agent = LlmAgent(name="janitor", model=model(
        "scripted-blocked-callback", [call("delete_file", {"path": "/etc/passwd"}, "call_del_1")],
        [call("delete_file", {"path": "/tmp/scratch.txt"}, "call_del_2")], [text("removed the scratch file only")]),
        tools=[delete_file], before_tool_callback=_guard)
    cc.add_refused("delete_file", {"path": "/etc/passwd"}, "janitor", "before_tool_callback returned a result, "
                   "so the tool never ran", "policy_guard", tool_call_id="call_del_1")
    return run_turns(agent, user("Delete /etc/passwd and /tmp/scratch.txt"))


class GuardPlugin(BasePlugin):
    """A runner-wide plugin whose before_tool_callback answers for the tool."""

    def __init__(self) -> None:
        super().__init__(name="guard_plugin")

    async def before_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: ToolContext) -> Any:
        # No "error" key, unlike _guard: ADK then marks nothing as failed.
        if tool.name == "delete_file" and str(tool_args.get("path", "")).startswith("/etc"):
            return {"result": "skipped: system files are protected"}
        return None


def scenario_blocked_plugin() -> Awaitable[Any]:
    agent = LlmAgent(name="janitor", model=model(
        "scripted-blocked-plugin", [call("delete_file", {"path": "/etc/passwd"}, "call_del_1")],
        [call("delete_file", {"path": "/tmp/scratch.txt"}, "call_del_2")], [text("removed the scratch file only")]),
        tools=[delete_file])
    cc.add_refused("delete_file", {"path": "/etc/passwd"}, "janitor", "plugin before_tool_callback returned a "
                   "result, so the tool never ran", "policy_guard", tool_call_id="call_del_1")
    return run_turns(agent, user("Delete /etc/passwd and /tmp/scratch.txt"), plugins=[GuardPlugin()])


async def scenario_blocked_confirmation_denied() -> list[Any]:
    """require_confirmation=True: invocation 1 pauses for a human, invocation 2 brings the rejection."""
    agent = LlmAgent(name="janitor", model=model(
        "scripted-confirmation", [call("delete_file", {"path": "/srv/data.db"}, "call_del_1")],
        [text("The deletion was rejected, nothing was deleted")]),
        tools=[FunctionTool(delete_file, require_confirmation=True)])
    runner = InMemoryRunner(agent, app_name=APP)
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    events = [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=user("Delete /srv/data.db"))]
    requests = [fc for e in events for fc in e.get_function_calls() if fc.name == "adk_request_confirmation"]
    assert len(requests) == 1, requests
    cc.add_refused("delete_file", {"path": "/srv/data.db"}, "janitor", "require_confirmation=True; the user answered "
                   "adk_request_confirmation with confirmed=false", "approval_denied", tool_call_id="call_del_1",
                   confirmation_call_id=requests[0].id)
    answer = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
        name="adk_request_confirmation", id=requests[0].id, response={"confirmed": False}))])
    events += [e async for e in runner.run_async(user_id=USER, session_id=session.id, new_message=answer)]
    await runner.close()
    return events


def scenario_delegation_agent_tool() -> Awaitable[Any]:
    researcher = LlmAgent(name="researcher", description="Answers encyclopedia questions.", model=model(
        "scripted-researcher", [call("lookup", {"term": "OCaml"}, "call_lookup_1")],
        [text("OCaml is a statically typed functional language")]), tools=[lookup])
    router = LlmAgent(name="router", model=model(
        "scripted-router", [call("researcher", {"request": "What is OCaml?"}, "call_delegate_1")],
        [text("The researcher says OCaml is statically typed and functional")]),
        tools=[AgentTool(agent=researcher)])
    return run_turns(router, user("Tell me about OCaml"))


def scenario_delegation_transfer() -> Awaitable[Any]:
    billing = LlmAgent(name="billing", description="Handles refunds.", model=model(
        "scripted-billing", [call("refund", {"order_id": "A-17"}, "call_refund_1")], [text("Order A-17 is refunded")]),
        tools=[refund])
    triage = LlmAgent(name="triage", model=model(
        "scripted-triage", [call("transfer_to_agent", {"agent_name": "billing"}, "call_transfer_1")]),
        sub_agents=[billing], after_tool_callback=record_transfer)
    return run_turns(triage, user("Refund order A-17"))


def scenario_multi_turn() -> Awaitable[Any]:
    agent = LlmAgent(name="calculator", model=model(
        "scripted-multi-turn", [call("multiply", {"a": 10, "b": 5}, "call_turn1_mul")], [text("50")],
        [call("add", {"a": 50, "b": 7}, "call_turn2_add")], [text("57")]), tools=[multiply, add])
    return run_turns(agent, user("What is 10 times 5?"), user("Now add 7 to that"))


AGENT_TOOL = {"type": "agent-as-tool (AgentTool)", "parent_agent": "router", "via_tool": "researcher",
              "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}
TRANSFER = {"type": "transfer (sub_agents + transfer_to_agent)", "parent_agent": "triage", "via_tool": "transfer_to_agent",
            "via_tool_call_id": "call_transfer_1", "child_agent": "billing", "child_tool_calls": ["call_refund_1"]}

SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[Any]], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5), then final text", scenario_single_tool, {}, ""),
    ("parallel_tools", "two get_weather calls in one model response", scenario_parallel_tools, {},
     "ADK runs the calls of one response concurrently and merges their responses into one event"),
    ("sequential_chain", "search, then compute, one call per model turn", scenario_sequential_chain, {}, ""),
    ("tool_error", "fetch_url raises ConnectionError; without on_tool_error_callback ADK re-raises and the run fails",
     scenario_tool_error, {}, ""),
    ("tool_error_handled", "fetch_url raises twice; on_tool_error_callback turns each exception into an error result "
     "for the model", scenario_tool_error_handled, {}, ""),
    ("unknown_tool", "model asks for format_disk (not registered), then multiply", scenario_unknown_tool, {}, ""),
    ("invalid_arguments", "multiply without b (mandatory) is answered with an error dict, then multiply(10, 5)",
     scenario_invalid_arguments, {}, "ADK validates only missing mandatory parameters by default (type validation "
     "is the FUNCTION_TOOL_ARG_VALIDATION feature, off by default)"),
    ("blocked_before_tool_callback", "an agent before_tool_callback answers delete_file(/etc/passwd) itself; "
     "delete_file(/tmp/scratch.txt) runs", scenario_blocked_before_tool_callback, {}, ""),
    ("blocked_plugin", "a runner plugin's before_tool_callback answers delete_file(/etc/passwd) itself; "
     "delete_file(/tmp/scratch.txt) runs", scenario_blocked_plugin, {}, ""),
    ("blocked_confirmation_denied", "delete_file has require_confirmation=True; invocation 1 pauses with "
     "adk_request_confirmation, invocation 2 answers confirmed=false", scenario_blocked_confirmation_denied, {},
     "two invocations of one session: two traces"),
    ("delegation_agent_tool", "router calls AgentTool(researcher); researcher calls lookup",
     scenario_delegation_agent_tool, AGENT_TOOL, "the AgentTool records itself when it starts"),
    ("delegation_transfer", "triage calls transfer_to_agent(billing); billing calls refund", scenario_delegation_transfer,
     TRANSFER, ""),
    ("multi_turn", "two user messages in one session: multiply, then add", scenario_multi_turn, {},
     "two invocations of one session: two traces"),
]


def capture(name: str, description: str, body: Callable[[], Awaitable[Any]], delegation: dict[str, Any], notes: str) -> None:
    exporter.clear()
    log_exporter.clear()
    cc.reset_truth()
    outcome, error = "ok", None
    try:
        asyncio.run(body())
    except Exception as exc:  # noqa: BLE001 - a failed run is part of the ground truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    log_provider.force_flush()
    truth = {"description": description, "run_outcome": outcome, "run_error": error,
             "tool_executions": cc.truth_snapshot(), "delegation": delegation, "notes": notes,
             "capture_env": MODES[ARGS.mode]}
    cc.save_scenario(FRAMEWORK, name, list(exporter.get_finished_spans()), truth, list(log_exporter.get_finished_logs()))


if __name__ == "__main__":
    for name, description, body, delegation, notes in SCENARIOS:
        in_mode = name in MODE_SCENARIOS.get(ARGS.mode, (name,))
        if in_mode and (not ARGS.scenarios or name in ARGS.scenarios):
            capture(name, description, body, delegation, notes)
