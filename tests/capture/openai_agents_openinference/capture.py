"""Capture openai-agents traces, as openinference-instrumentation-openai-agents emits them.

The agents SDK (``openai-agents``) runs its agents against the SDK's own
``OpenAIChatCompletionsModel`` with an ``AsyncOpenAI(base_url=...)`` client pointed at
``capture_common.ScriptedOpenAI`` on 127.0.0.1: real tool calling as in production, no key,
no network. ``OpenAIAgentsInstrumentor().instrument(tracer_provider=...)`` registers the
OpenInference processor with the SDK's tracing and (``exclusive_processor``, its default)
removes the SDK's own processors, so nothing is exported to OpenAI.

Ground truth is recorded inside the tool bodies, with the call id and agent from the
``ToolContext`` the SDK hands every tool (the id is the one the script gave the call).

Run:  /tmp/capture-openai_agents_openinference/bin/python tests/capture/openai_agents_openinference/capture.py [scenario ...]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
from capture_common import reply  # noqa: E402

os.environ.pop("OPENAI_API_KEY", None)  # nothing may be exported to OpenAI
# Content capture: the SDK's switch (its default is already "true"; set so the notes can say so).
os.environ["OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA"] = "true"

from agents import (  # noqa: E402
    Agent,
    MaxTurnsExceeded,
    OpenAIChatCompletionsModel,
    RunConfig,
    RunHooks,
    Runner,
    SQLiteSession,
    ToolGuardrailFunctionOutput,
    function_tool,
    handoff,
    tool_input_guardrail,
    trace,
)
from agents.tool_context import ToolContext  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from openinference.instrumentation import TraceConfig  # noqa: E402
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

FRAMEWORK = "openai_agents_openinference"
provider, exporter = cc.tracing("corpus-openai-agents-openinference")
# TraceConfig() is OpenInference's content switch: its defaults hide nothing (inputs, outputs,
# messages all recorded); passed explicitly so the notes can say what was set.
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider, config=TraceConfig())
server = cc.ScriptedOpenAI()

_scenario = ""  # set by run_all: call ids are call_oaioi_<scenario>_<tool>_<n>


def cid(tool: str, n: int = 1) -> str:
    return f"call_oaioi_{_scenario}_{tool}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    return cc.tool_call(name, arguments, cid(name, n))


def model() -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)


def _record(ctx: ToolContext[Any], name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    agent = ctx.agent.name if getattr(ctx, "agent", None) is not None else cc.current_agent.get()
    cc.record(name, arguments, outcome, agent, tool_call_id=ctx.tool_call_id, tool_call_id_source="script", **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, call_id: str,
            position: int | None = None) -> None:
    """``cc.add_refused``; ``position`` puts it where the model asked for it among the executions."""
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=call_id, tool_call_id_source="script")
    if position is not None:
        with cc._lock:
            cc._truth.insert(position, cc._truth.pop())
            for seq, entry in enumerate(cc._truth, start=1):
                entry["seq"] = seq


# -- tools ------------------------------------------------------------------------------------


@function_tool
def multiply(ctx: ToolContext[Any], a: int, b: int) -> int:
    """Multiply two integers."""
    _record(ctx, "multiply", {"a": a, "b": b})
    return a * b


WEATHER = {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}


@function_tool
def lookup_weather(ctx: ToolContext[Any], city: str) -> str:
    """Current weather for a city."""
    _record(ctx, "lookup_weather", {"city": city})
    return WEATHER.get(city, "unknown")


@function_tool
def get_user_city(ctx: ToolContext[Any], user: str) -> str:
    """The city a user lives in."""
    _record(ctx, "get_user_city", {"user": user})
    return {"alice": "Lyon"}.get(user, "Paris")


@function_tool
def celsius_to_fahrenheit(ctx: ToolContext[Any], celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    _record(ctx, "celsius_to_fahrenheit", {"celsius": celsius})
    return celsius * 9 / 5 + 32


@function_tool
def fetch_url(ctx: ToolContext[Any], url: str) -> str:
    """Fetch a URL. The primary host is down; the mirror answers."""
    if "mirror" not in url:
        _record(ctx, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
        raise ConnectionError("network unreachable")
    _record(ctx, "fetch_url", {"url": url})
    return "<html>release notes: v2 is out</html>"


@tool_input_guardrail
def no_system_paths(data: Any) -> ToolGuardrailFunctionOutput:
    """Rejects a delete under /etc: the model is told, the tool body never runs."""
    if "/etc/" in (data.context.tool_arguments or ""):
        return ToolGuardrailFunctionOutput.reject_content("Refused: system paths may not be deleted.")
    return ToolGuardrailFunctionOutput.allow()


def delete_file_tool(**options: Any) -> Any:
    @function_tool(name_override="delete_file", **options)
    def delete_file(ctx: ToolContext[Any], path: str) -> str:
        """Delete a file."""
        _record(ctx, "delete_file", {"path": path})
        return f"deleted {path}"

    return delete_file


def agent(name: str, tools: list[Any], instructions: str = "Use the tools.", **options: Any) -> Agent[Any]:
    return Agent(name=name, instructions=instructions, tools=tools, model=model(), **options)


# -- scenarios --------------------------------------------------------------------------------

Result = dict[str, Any]  # extra truth fields a scenario returns (delegation, notes)


async def single_tool() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    await Runner.run(agent("calculator", [multiply]), "What is 10 times 5?")
    return {}


async def single_tool_streaming() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    result = Runner.run_streamed(agent("calculator", [multiply]), "What is 10 times 5?")
    async for _ in result.stream_events():
        pass
    return {"notes": "Runner.run_streamed: the model is asked with stream=true (server-sent events)."}


async def sequential_chain() -> Result:
    server.script(reply(tool_calls=[call("get_user_city", {"user": "alice"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Lyon"})]),
                  reply(tool_calls=[call("celsius_to_fahrenheit", {"celsius": 18.0})]),
                  reply("Alice is in Lyon: cloudy, 64.4F."))
    await Runner.run(agent("weather_assistant", [get_user_city, lookup_weather, celsius_to_fahrenheit]),
                     "What is the weather where alice lives, in Fahrenheit?")
    return {}


async def parallel_tools() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 3, "b": 4}), call("lookup_weather", {"city": "Paris"})]),
                  reply("3*4 is 12; Paris is sunny, 21C."))
    await Runner.run(agent("assistant", [multiply, lookup_weather]), "3*4, and the weather in Paris?")
    return {"notes": "The SDK runs both calls of the turn concurrently (asyncio tasks); seq is the order the bodies ran."}


async def repeated_tool() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]),
                  reply("Paris is sunny, London rainy."))
    await Runner.run(agent("weather_assistant", [lookup_weather]), "Weather in Paris, then London?")
    return {"notes": "The same tool twice, in two model turns, with different arguments."}


async def no_tools() -> Result:
    server.script(reply("Hello! How can I help?"))
    await Runner.run(agent("calculator", [multiply]), "Hi there")
    return {}


async def tool_error() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"})]),
                  reply("The page could not be fetched: the host is unreachable."))
    await Runner.run(agent("fetcher", [fetch_url]), "Fetch https://primary.example/notes")
    return {"notes": "The SDK's default failure_error_function turns the exception into a tool message for the "
                     "model ('An error occurred while running the tool...'); the run goes on and ends ok."}


async def error_retry() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"}, 1)]),
                  reply(tool_calls=[call("fetch_url", {"url": "https://mirror.example/notes"}, 2)]),
                  reply("v2 is out (from the mirror)."))
    await Runner.run(agent("fetcher", [fetch_url]), "Fetch the release notes; use the mirror if the primary fails")
    return {"notes": "fetch_url raises on the primary host, the model retries the same tool on the mirror, which works."}


async def unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("I cannot format disks; 6*7 is 42."))
    await Runner.run(agent("calculator", [multiply]), "Format the disk, then 6*7",
                     run_config=RunConfig(tool_not_found_behavior="return_error_to_model"))
    refused("format_disk", {"drive": "C:"}, "calculator", "no tool of that name (tool_not_found_behavior="
            "return_error_to_model: the model is told and goes on)", "unknown_tool", cid("format_disk"), position=0)
    return {"notes": "RunConfig(tool_not_found_behavior='return_error_to_model'); with the SDK's default "
                     "('raise_error') the run ends with ModelBehaviorError at the unknown tool."}


async def invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten"}, 1)]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
                  reply("10 times 5 is 50."))
    await Runner.run(agent("calculator", [multiply]), "ten times 5")
    refused("multiply", {"a": "ten"}, "calculator", "arguments fail the tool's pydantic schema (a not an int, b missing)",
            "invalid_arguments", cid("multiply", 1), position=0)
    return {"notes": "The first call's arguments fail validation: the body never runs, the model gets an error "
                     "message and sends correct arguments."}


async def _approval(approve: bool) -> Result:
    server.script(reply(tool_calls=[call("delete_file", {"path": "/srv/scratch.txt"})]),
                  reply("Deleted /srv/scratch.txt." if approve else "I was not allowed to delete it."))
    janitor = agent("janitor", [delete_file_tool(needs_approval=True)])
    with trace("approval workflow"):
        first = await Runner.run(janitor, "Delete /srv/scratch.txt")
        if len(first.interruptions) != 1:
            raise AssertionError(f"expected one approval interruption, got {len(first.interruptions)}")
        state = first.to_state()
        if approve:
            state.approve(first.interruptions[0])
        else:
            state.reject(first.interruptions[0], rejection_message="operator rejected: scratch file is still in use")
        await Runner.run(janitor, state)
    if not approve:
        refused("delete_file", {"path": "/srv/scratch.txt"}, "janitor", "approval rejected (RunState.reject)",
                "approval_denied", cid("delete_file"))
    return {"notes": "needs_approval=True: run 1 ends with an interruption, the user decides "
                     f"({'RunState.approve' if approve else 'RunState.reject'}), Runner.run(agent, state) resumes. "
                     "Both runs are inside one agents.trace('approval workflow'), so it is one trace; without it the "
                     "resumed run exports no span at all (see openai_agents_guardrails). Run 1 already emits a TOOL "
                     "span for the pending call (OK, no output.value) although the body has not run; "
                     + ("the resumed run emits a second TOOL span for the same call (with output.value), directly "
                        "under the AGENT span: two TOOL spans, one execution." if approve else
                        "the resumed run emits no TOOL span; the rejection message reaches the model as the tool "
                        "message of the next generation.")}


async def approval_approved() -> Result:
    return await _approval(True)


async def blocked_approval_rejected() -> Result:
    return await _approval(False)


async def blocked_tool_call_limit() -> Result:
    # max_turns=2 counts model turns: the third model call is never made.
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]))
    error = None
    try:
        await Runner.run(agent("weather_assistant", [lookup_weather]), "Weather in Paris, London and Lyon?",
                         max_turns=2)
    except MaxTurnsExceeded as exc:
        error = f"{type(exc).__name__}: {exc}"
    return {"run_error": error, "notes": "max_turns=2 counts model turns: both turns' calls ran; the run raises MaxTurnsExceeded "
                     "before a third model call, so no requested call was cut off (nothing refused)."}


async def blocked_tool_call_limit_handled() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]))

    def give_up(data: Any) -> str:
        return "Stopped: too many steps."

    result = await Runner.run(agent("weather_assistant", [lookup_weather]), "Weather in Paris, London and Lyon?",
                              max_turns=2, error_handlers={"max_turns": give_up})
    return {"notes": "As blocked_tool_call_limit, with error_handlers={'max_turns': ...}: the run does not raise, "
                     f"its final output is the handler's ({result.final_output!r}). Nothing refused."}


async def blocked_tool_input_guardrail() -> Result:
    server.script(reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"}, 1)]),
                  reply(tool_calls=[call("delete_file", {"path": "/srv/scratch.txt"}, 2)]),
                  reply("Deleted the scratch file; /etc/passwd was refused."))
    await Runner.run(agent("janitor", [delete_file_tool(tool_input_guardrails=[no_system_paths])]),
                     "Delete /etc/passwd, then /srv/scratch.txt")
    refused("delete_file", {"path": "/etc/passwd"}, "janitor", "tool input guardrail no_system_paths: reject_content",
            "policy_guard", cid("delete_file", 1), position=0)
    return {"notes": "The guardrail's reject_content message goes to the model in place of the tool output."}


async def multi_turn() -> Result:
    session = SQLiteSession("oaioi-multi-turn")  # in-memory conversation history
    calculator = agent("calculator", [multiply])
    server.script(reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, 1)]), reply("6 times 7 is 42."),
                  reply(tool_calls=[call("multiply", {"a": 42, "b": 2}, 2)]), reply("Doubled, that is 84."))
    config = RunConfig(group_id="oaioi-conversation-1")
    await Runner.run(calculator, "What is 6 times 7?", session=session, run_config=config)
    await Runner.run(calculator, "And doubled?", session=session, run_config=config)
    return {"notes": "Two user turns, two Runner.run calls sharing an SQLiteSession (the second model call sees the "
                     "first turn's history): each run is its own SDK trace, so the file holds TWO traces "
                     "(RunConfig.group_id='oaioi-conversation-1' on both)."}


def _weather_agent(name: str) -> Agent[Any]:
    return agent(name, [lookup_weather], instructions="Answer weather questions with lookup_weather.")


async def delegation_handoff() -> Result:
    specialist = _weather_agent("weather_agent")

    def on_handoff(ctx: Any) -> None:
        cc.record("transfer_to_weather_agent", {}, "ok", "triage", tool_call_id=cid("transfer_to_weather_agent"),
                  tool_call_id_source="script", framework_tool=True, handoff=True)

    triage = agent("triage", [], instructions="Hand weather questions to the weather agent.",
                   handoffs=[handoff(specialist, on_handoff=on_handoff)])
    server.script(reply(tool_calls=[call("transfer_to_weather_agent", {})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris is sunny, 21C."))
    await Runner.run(triage, "What is the weather in Paris?")
    return {"delegation": {"type": "handoff", "parent_agent": "triage", "child_agent": "weather_agent",
                           "via_tool": "transfer_to_weather_agent", "via_tool_call_id": cid("transfer_to_weather_agent"),
                           "child_tool_calls": [cid("lookup_weather")]},
            "notes": "transfer_to_weather_agent is the SDK's handoff pseudo-tool (framework_tool: true), recorded in "
                     "on_handoff; after it weather_agent owns the conversation and answers the user."}


class _RecordAgentTool(RunHooks[Any]):
    """The agent tool's nested run starting is its 'body' running."""

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        cc.record("ask_weather_agent", {"input": "Weather in Paris?"}, "ok", "orchestrator",
                  tool_call_id=cid("ask_weather_agent"), tool_call_id_source="script", agent_tool=True)


async def delegation_agent_tool() -> Result:
    specialist = _weather_agent("weather_agent")
    tool = specialist.as_tool(tool_name="ask_weather_agent", tool_description="Ask the weather agent.",
                              hooks=_RecordAgentTool())
    orchestrator = agent("orchestrator", [tool], instructions="Use the weather agent for weather.")
    server.script(reply(tool_calls=[call("ask_weather_agent", {"input": "Weather in Paris?"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris: sunny, 21C."),
                  reply("The weather agent says Paris is sunny, 21C."))
    await Runner.run(orchestrator, "What is the weather in Paris?")
    return {"delegation": {"type": "agent_as_tool", "parent_agent": "orchestrator", "child_agent": "weather_agent",
                           "via_tool": "ask_weather_agent", "via_tool_call_id": cid("ask_weather_agent"),
                           "child_tool_calls": [cid("lookup_weather")]},
            "notes": "agent.as_tool(tool_name='ask_weather_agent'): the nested run of weather_agent is the tool's body "
                     "(recorded from the nested run's on_agent_start); the orchestrator answers the user."}


SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[Result]]]] = [
    ("single_tool", "calculator: multiply(10, 5), then text", single_tool),
    ("single_tool_streaming", "as single_tool, with Runner.run_streamed (streamed model answers)",
     single_tool_streaming),
    ("sequential_chain", "weather_assistant: get_user_city(alice) -> lookup_weather(Lyon) -> "
     "celsius_to_fahrenheit(18), each after the previous result, then text", sequential_chain),
    ("parallel_tools", "assistant: multiply(3, 4) and lookup_weather(Paris) in one model turn, then text",
     parallel_tools),
    ("repeated_tool", "weather_assistant: lookup_weather(Paris), then lookup_weather(London), then text", repeated_tool),
    ("no_tools", "calculator answers a greeting without any tool call", no_tools),
    ("tool_error", "fetcher: fetch_url raises ConnectionError; the model is told and answers", tool_error),
    ("error_retry", "fetcher: fetch_url(primary) raises, the model retries fetch_url(mirror), which works",
     error_retry),
    ("unknown_tool", "calculator: the model asks for format_disk (no such tool), is told, then multiply(6, 7)",
     unknown_tool),
    ("invalid_arguments", "calculator: multiply({a: 'ten'}) fails validation (body never runs), then "
     "multiply(10, 5)", invalid_arguments),
    ("approval_approved", "janitor: delete_file needs_approval; run 1 interrupts, RunState.approve, the resumed "
     "run executes it; one agents.trace", approval_approved),
    ("blocked_approval_rejected", "janitor: delete_file needs_approval; run 1 interrupts, RunState.reject, the "
     "resumed run tells the model; one agents.trace", blocked_approval_rejected),
    ("blocked_tool_call_limit", "weather_assistant with max_turns=2: two turns each run lookup_weather, then "
     "MaxTurnsExceeded", blocked_tool_call_limit),
    ("blocked_tool_call_limit_handled", "as blocked_tool_call_limit, with a max_turns error handler: the run ends "
     "with the handler's final output instead of raising", blocked_tool_call_limit_handled),
    ("blocked_tool_input_guardrail", "janitor: a tool input guardrail rejects delete_file(/etc/passwd) "
     "(reject_content); then delete_file(/srv/scratch.txt) runs", blocked_tool_input_guardrail),
    ("multi_turn", "calculator, two user turns in one SQLiteSession, each with a multiply call", multi_turn),
    ("delegation_handoff", "triage hands off (transfer_to_weather_agent) to weather_agent, which calls "
     "lookup_weather(Paris) and answers", delegation_handoff),
    ("delegation_agent_tool", "orchestrator calls weather_agent.as_tool (ask_weather_agent); weather_agent calls "
     "lookup_weather(Paris); the orchestrator answers", delegation_agent_tool),
]


async def run_all(only: set[str]) -> None:
    global _scenario
    for name, description, body in SCENARIOS:
        if only and name not in only:
            continue
        _scenario = name
        exporter.clear()
        cc.reset_truth()
        outcome, error, extra = "ok", None, {}
        try:
            extra = await body()
        except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            print(f"{name}: {error}")
        if extra.get("run_error"):
            outcome, error = "error", extra["run_error"]
        provider.force_flush()
        if server.left():
            raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
        spans = list(exporter.get_finished_spans())
        truth = {"description": description, "tool_executions": cc.truth_snapshot(),
                 "delegation": extra.get("delegation", {}), "run_outcome": outcome, "run_error": error,
                 "notes": extra.get("notes", "")}
        cc.save_scenario(FRAMEWORK, name, spans, truth)


if __name__ == "__main__":
    with server:
        asyncio.run(run_all(set(sys.argv[1:])))
