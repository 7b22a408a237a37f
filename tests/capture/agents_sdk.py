"""The OpenAI Agents SDK's scenarios, for captures that trace it with another SDK's instrumentation.

MLflow (``mlflow.openai.autolog()``), Logfire (``logfire.instrument_openai_agents()``) and
OpenLIT each trace the same framework their own way; the agents, tools and scripts here are
one set for all of them, as in ``openai_agents_openinference/capture.py`` (whose NOTES say
what the SDK does in each). Every agent runs on the SDK's ``OpenAIChatCompletionsModel``
against ``ScriptedOpenAI`` on 127.0.0.1; every tool takes ``ToolContext`` and records the
call id the script gave it and the agent that ran it.

The capture script sets up its instrumentation first, then calls ``run_all`` with a
``save(scenario, truth)`` that writes what its exporter holds.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Awaitable, Callable

import capture_common as cc
from capture_common import reply

os.environ.pop("OPENAI_API_KEY", None)  # nothing may go to OpenAI

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

server = cc.ScriptedOpenAI()
_ids = {"prefix": "", "scenario": ""}
Result = dict[str, Any]


def cid(tool: str, n: int = 1) -> str:
    return f"call_{_ids['prefix']}_{_ids['scenario']}_{tool}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    return cc.tool_call(name, arguments, cid(name, n))


def model() -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)


def agent(name: str, tools: list[Any], instructions: str = "Use the tools.", **options: Any) -> Agent[Any]:
    return Agent(name=name, instructions=instructions, tools=tools, model=model(), **options)


def _record(ctx: ToolContext[Any], name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, ctx.agent.name, tool_call_id=ctx.tool_call_id, tool_call_id_source="script",
              **extra)


def refused(name: str, arguments: dict[str, Any], agent_name: str, reason: str, kind: str, call_id: str,
            position: int | None = None) -> None:
    """``cc.add_refused``; ``position`` puts it where the model asked for it among the executions."""
    cc.add_refused(name, arguments, agent_name, reason, kind, tool_call_id=call_id, tool_call_id_source="script")
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


@function_tool
def lookup_weather(ctx: ToolContext[Any], city: str) -> str:
    """Current weather for a city."""
    _record(ctx, "lookup_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}.get(city, "unknown")


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
    """Fetch a URL. The primary host is down."""
    _record(ctx, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
    raise ConnectionError("network unreachable")


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


# -- scenarios --------------------------------------------------------------------------------


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
    return {"notes": "The SDK runs both calls of the turn concurrently; seq is the order the bodies ran."}


async def repeated_tool() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]),
                  reply("Paris is sunny, London rainy."))
    await Runner.run(agent("weather_assistant", [lookup_weather]), "Weather in Paris, then London?")
    return {}


async def no_tools() -> Result:
    server.script(reply("Hello! How can I help?"))
    await Runner.run(agent("calculator", [multiply]), "Hi there")
    return {}


async def tool_error() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"})]),
                  reply("The page could not be fetched: the host is unreachable."))
    await Runner.run(agent("fetcher", [fetch_url]), "Fetch https://primary.example/notes")
    return {"notes": "The SDK's default failure_error_function tells the model; the run goes on and ends ok."}


async def unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("I cannot format disks; 6*7 is 42."))
    await Runner.run(agent("calculator", [multiply]), "Format the disk, then 6*7",
                     run_config=RunConfig(tool_not_found_behavior="return_error_to_model"))
    refused("format_disk", {"drive": "C:"}, "calculator", "no tool of that name (return_error_to_model)",
            "unknown_tool", cid("format_disk"), position=0)
    return {"notes": "RunConfig(tool_not_found_behavior='return_error_to_model'): the model is told and goes on."}


async def invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten"}, 1)]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
                  reply("10 times 5 is 50."))
    await Runner.run(agent("calculator", [multiply]), "ten times 5")
    refused("multiply", {"a": "ten"}, "calculator", "arguments fail the tool's pydantic schema",
            "invalid_arguments", cid("multiply", 1), position=0)
    return {"notes": "The first call's arguments fail validation: the body never runs, the model is told."}


async def blocked_approval_rejected() -> Result:
    server.script(reply(tool_calls=[call("delete_file", {"path": "/srv/scratch.txt"})]),
                  reply("I was not allowed to delete it."))
    janitor = agent("janitor", [delete_file_tool(needs_approval=True)])
    with trace("approval workflow"):
        first = await Runner.run(janitor, "Delete /srv/scratch.txt")
        if len(first.interruptions) != 1:
            raise AssertionError(f"expected one approval interruption, got {len(first.interruptions)}")
        state = first.to_state()
        state.reject(first.interruptions[0], rejection_message="operator rejected: scratch file is still in use")
        await Runner.run(janitor, state)
    refused("delete_file", {"path": "/srv/scratch.txt"}, "janitor", "approval rejected (RunState.reject)",
            "approval_denied", cid("delete_file"))
    return {"notes": "needs_approval=True: run 1 interrupts, RunState.reject, Runner.run(agent, state) resumes; "
                     "both runs inside one agents.trace('approval workflow')."}


async def blocked_tool_call_limit() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]))
    try:
        await Runner.run(agent("weather_assistant", [lookup_weather]), "Weather in Paris, London and Lyon?", max_turns=2)
    except MaxTurnsExceeded as exc:
        return {"run_error": f"{type(exc).__name__}: {exc}",
                "notes": "max_turns=2 counts model turns: both turns' calls ran, the run raises before a third "
                         "model call (nothing refused)."}
    raise AssertionError("max_turns=2 did not stop the run")


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
    session = SQLiteSession(f"{_ids['prefix']}-multi-turn")
    calculator = agent("calculator", [multiply])
    server.script(reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, 1)]), reply("6 times 7 is 42."),
                  reply(tool_calls=[call("multiply", {"a": 42, "b": 2}, 2)]), reply("Doubled, that is 84."))
    config = RunConfig(group_id=f"{_ids['prefix']}-conversation-1")
    await Runner.run(calculator, "What is 6 times 7?", session=session, run_config=config)
    await Runner.run(calculator, "And doubled?", session=session, run_config=config)
    return {"notes": "Two Runner.run calls sharing an SQLiteSession, each its own SDK trace (group_id set on both)."}


def _weather_agent() -> Agent[Any]:
    return agent("weather_agent", [lookup_weather], instructions="Answer weather questions with lookup_weather.")


async def delegation_handoff() -> Result:
    def on_handoff(ctx: Any) -> None:
        cc.record("transfer_to_weather_agent", {}, "ok", "triage", tool_call_id=cid("transfer_to_weather_agent"),
                  tool_call_id_source="script", framework_tool=True, handoff=True)

    triage = agent("triage", [], instructions="Hand weather questions to the weather agent.",
                   handoffs=[handoff(_weather_agent(), on_handoff=on_handoff)])
    server.script(reply(tool_calls=[call("transfer_to_weather_agent", {})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris is sunny, 21C."))
    await Runner.run(triage, "What is the weather in Paris?")
    return {"delegation": {"type": "handoff", "parent_agent": "triage", "child_agent": "weather_agent",
                           "via_tool": "transfer_to_weather_agent", "via_tool_call_id": cid("transfer_to_weather_agent")},
            "notes": "transfer_to_weather_agent is the SDK's handoff pseudo-tool, recorded in on_handoff."}


class _RecordAgentTool(RunHooks[Any]):
    """The agent tool's nested run starting is its 'body' running."""

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        cc.record("ask_weather_agent", {"input": "Weather in Paris?"}, "ok", "orchestrator",
                  tool_call_id=cid("ask_weather_agent"), tool_call_id_source="script", agent_tool=True)


async def delegation_agent_tool() -> Result:
    tool = _weather_agent().as_tool(tool_name="ask_weather_agent", tool_description="Ask the weather agent.",
                                    hooks=_RecordAgentTool())
    server.script(reply(tool_calls=[call("ask_weather_agent", {"input": "Weather in Paris?"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris: sunny, 21C."),
                  reply("The weather agent says Paris is sunny, 21C."))
    await Runner.run(agent("orchestrator", [tool], instructions="Use the weather agent for weather."),
                     "What is the weather in Paris?")
    return {"delegation": {"type": "agent_as_tool", "parent_agent": "orchestrator", "child_agent": "weather_agent",
                           "via_tool": "ask_weather_agent", "via_tool_call_id": cid("ask_weather_agent")},
            "notes": "agent.as_tool: the nested run of weather_agent is the tool's body."}


SCENARIOS: dict[str, Callable[[], Awaitable[Result]]] = {
    fn.__name__: fn for fn in (single_tool, single_tool_streaming, sequential_chain, parallel_tools, repeated_tool,
                               no_tools, tool_error, unknown_tool, invalid_arguments, blocked_approval_rejected,
                               blocked_tool_call_limit, blocked_tool_input_guardrail, multi_turn, delegation_handoff,
                               delegation_agent_tool)
}


async def _run_all(prefix: str, wanted: list[str], clear: Callable[[], None],
                   save: Callable[[str, dict[str, Any]], None]) -> None:
    _ids["prefix"] = prefix
    for name in wanted or list(SCENARIOS):
        _ids["scenario"] = name
        cc.reset_truth()
        clear()
        extra = await SCENARIOS[name]()
        if server.left():
            raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
        error = extra.get("run_error")
        save(name, {"tool_executions": cc.truth_snapshot(), "delegation": extra.get("delegation", {}),
                    "run_outcome": "error" if error else "ok", "run_error": error, "notes": extra.get("notes", "")})


def run_all(prefix: str, wanted: list[str], clear: Callable[[], None], save: Callable[[str, dict[str, Any]], None]) -> None:
    """Run the wanted scenarios (all when none named) against the scripted model; ``save`` writes each."""
    with server:
        asyncio.run(_run_all(prefix, wanted, clear, save))
