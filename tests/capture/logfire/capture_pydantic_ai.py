"""Capture Pydantic Logfire over pydantic-ai: ``logfire.instrument_pydantic_ai()``.

``logfire.configure(send_to_logfire=False, console=False, additional_span_processors=[...])``:
nothing goes to Logfire's service, every span reaches an in-memory exporter of ours. Agents
run on pydantic-ai's ``OpenAIChatModel`` with an ``OpenAIProvider(base_url=ScriptedOpenAI)``
on 127.0.0.1. Tools take ``RunContext`` and record the call id the script gave them
(``ctx.tool_call_id``); each tool is built for the agent that owns it. Written to
``tests/fixtures/corpus/logfire_pydantic_ai/``.

Run:  /tmp/capture-logfire/bin/python tests/capture/logfire/capture_pydantic_ai.py [scenario ...]
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("LOGFIRE_", "OPENAI_", "OTEL_"))]:
    del os.environ[key]

import capture_common as cc  # noqa: E402
import logfire  # noqa: E402
from capture_common import reply  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic_ai import (  # noqa: E402
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRetry,
    RunContext,
    ToolDenied,
    UsageLimits,
)
from pydantic_ai.exceptions import UsageLimitExceeded  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

FRAMEWORK = "logfire_pydantic_ai"
exporter = InMemorySpanExporter()
logfire.configure(send_to_logfire=False, console=False, service_name="corpus-logfire-pydantic-ai",
                  additional_span_processors=[SimpleSpanProcessor(exporter)])
logfire.instrument_pydantic_ai()
server = cc.ScriptedOpenAI()
_scenario = ""
Result = dict[str, Any]


def cid(tool: str, n: int = 1) -> str:
    return f"call_lfpa_{_scenario}_{tool}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    return cc.tool_call(name, arguments, cid(name, n))


def model() -> OpenAIChatModel:
    return OpenAIChatModel("scripted-model", provider=OpenAIProvider(base_url=server.base_url, api_key="x"))


def agent(name: str, tools: list[str], **options: Any) -> Agent[None, Any]:
    """An agent owning fresh tools that record ``name`` as the agent that ran them."""
    built = Agent(model(), name=name, instructions="Use the tools.", **options)
    approval = options.get("output_type") is not None

    def ran(ctx: RunContext[None], tool: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
        cc.record(tool, arguments, outcome, name, tool_call_id=ctx.tool_call_id, tool_call_id_source="script", **extra)

    def multiply(ctx: RunContext[None], a: int, b: int) -> int:
        """Multiply two integers."""
        ran(ctx, "multiply", {"a": a, "b": b})
        return a * b

    def lookup_weather(ctx: RunContext[None], city: str) -> str:
        """Current weather for a city."""
        ran(ctx, "lookup_weather", {"city": city})
        return {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}.get(city, "unknown")

    def get_user_city(ctx: RunContext[None], user: str) -> str:
        """The city a user lives in."""
        ran(ctx, "get_user_city", {"user": user})
        return {"alice": "Lyon"}.get(user, "Paris")

    def fetch_url(ctx: RunContext[None], url: str) -> str:
        """Fetch a URL. The primary host is down."""
        ran(ctx, "fetch_url", {"url": url}, "error", error="ModelRetry: network unreachable")
        raise ModelRetry("network unreachable, try another host")

    def delete_file(ctx: RunContext[None], path: str) -> str:
        """Delete a file."""
        ran(ctx, "delete_file", {"path": path})
        return f"deleted {path}"

    for tool in (multiply, lookup_weather, get_user_city, fetch_url, delete_file):
        if tool.__name__ in tools:
            built.tool(requires_approval=approval and tool.__name__ == "delete_file")(tool)
    return built


async def single_tool() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    await agent("calculator", ["multiply"]).run("What is 10 times 5?")
    return {}


async def single_tool_streaming() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    async with agent("calculator", ["multiply"]).run_stream("What is 10 times 5?") as result:
        await result.get_output()
    return {"notes": "Agent.run_stream: the model is asked with stream=true."}


async def sequential_chain() -> Result:
    server.script(reply(tool_calls=[call("get_user_city", {"user": "alice"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Lyon"})]),
                  reply("Alice is in Lyon: cloudy, 18C."))
    await agent("weather_assistant", ["get_user_city", "lookup_weather"]).run("What is the weather where alice lives?")
    return {}


async def parallel_tools() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 3, "b": 4}), call("lookup_weather", {"city": "Paris"})]),
                  reply("3*4 is 12; Paris is sunny, 21C."))
    await agent("assistant", ["multiply", "lookup_weather"]).run("3*4, and the weather in Paris?")
    return {"notes": "Both calls of one model turn; pydantic-ai runs them concurrently."}


async def repeated_tool() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]),
                  reply("Paris is sunny, London rainy."))
    await agent("weather_assistant", ["lookup_weather"]).run("Weather in Paris, then London?")
    return {}


async def no_tools() -> Result:
    server.script(reply("Hello! How can I help?"))
    await agent("calculator", ["multiply"]).run("Hi there")
    return {}


async def tool_error() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"})]),
                  reply("The page could not be fetched: the host is unreachable."))
    await agent("fetcher", ["fetch_url"]).run("Fetch https://primary.example/notes")
    return {"notes": "fetch_url raises ModelRetry: pydantic-ai sends the message back to the model as a retry prompt."}


async def unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("I cannot format disks; 6*7 is 42."))
    await agent("calculator", ["multiply"]).run("Format the disk, then 6*7")
    cc.add_refused("format_disk", {"drive": "C:"}, "calculator", "unknown tool: pydantic-ai asks the model to retry",
                   "unknown_tool", tool_call_id=cid("format_disk"), tool_call_id_source="script")
    _first_refused()
    return {}


async def invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten"}, 1)]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
                  reply("10 times 5 is 50."))
    await agent("calculator", ["multiply"]).run("ten times 5")
    cc.add_refused("multiply", {"a": "ten"}, "calculator", "arguments fail validation: pydantic-ai asks the model to retry",
                   "invalid_arguments", tool_call_id=cid("multiply", 1), tool_call_id_source="script")
    _first_refused()
    return {}


def _first_refused() -> None:
    """The refused call was the model's first: put it first."""
    with cc._lock:
        cc._truth.insert(0, cc._truth.pop())
        for seq, entry in enumerate(cc._truth, start=1):
            entry["seq"] = seq


async def blocked_tool_call_limit() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]))
    try:
        await agent("weather_assistant", ["lookup_weather"]).run("Weather in Paris and London?",
                                                                 usage_limits=UsageLimits(tool_calls_limit=1))
    except UsageLimitExceeded as exc:
        cc.add_refused("lookup_weather", {"city": "London"}, "weather_assistant", f"UsageLimitExceeded: {exc}", "limit",
                       tool_call_id=cid("lookup_weather", 2), tool_call_id_source="script")
        return {"run_error": f"UsageLimitExceeded: {exc}",
                "notes": "UsageLimits(tool_calls_limit=1): the second call is refused and the run raises."}
    raise AssertionError("tool_calls_limit=1 did not stop the run")


async def blocked_approval_denied() -> Result:
    server.script(reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"})]),
                  reply("I was not allowed to delete it."))
    janitor = agent("janitor", ["delete_file"], output_type=[str, DeferredToolRequests])
    first = await janitor.run("Delete /etc/passwd")
    if not isinstance(first.output, DeferredToolRequests):
        raise AssertionError(f"expected a deferred approval, got {first.output!r}")
    denied = DeferredToolResults(approvals={cid("delete_file"): ToolDenied("system files may not be deleted")})
    await janitor.run(message_history=first.all_messages(), deferred_tool_results=denied)
    cc.add_refused("delete_file", {"path": "/etc/passwd"}, "janitor", "approval denied (ToolDenied)", "approval_denied",
                   tool_call_id=cid("delete_file"), tool_call_id_source="script")
    return {"notes": "requires_approval=True: run 1 ends with DeferredToolRequests; run 2 resumes with "
                     "DeferredToolResults(approvals={id: ToolDenied(...)}) and run 1's messages: two traces."}


async def multi_turn() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, 1)]), reply("6 times 7 is 42."),
                  reply(tool_calls=[call("multiply", {"a": 42, "b": 2}, 2)]), reply("Doubled, that is 84."))
    calculator = agent("calculator", ["multiply"])
    first = await calculator.run("What is 6 times 7?")
    await calculator.run("And doubled?", message_history=first.all_messages())
    return {"notes": "Two runs, the second with the first's message_history: two traces."}


async def delegation() -> Result:
    weather_agent = agent("weather_agent", ["lookup_weather"])
    orchestrator = Agent(model(), name="orchestrator", instructions="Use the weather agent for weather.")

    @orchestrator.tool
    async def ask_weather_agent(ctx: RunContext[None], question: str) -> str:
        """Ask the weather agent."""
        cc.record("ask_weather_agent", {"question": question}, "ok", "orchestrator", tool_call_id=ctx.tool_call_id,
                  tool_call_id_source="script", agent_tool=True)
        return (await weather_agent.run(question, usage=ctx.usage)).output

    server.script(reply(tool_calls=[call("ask_weather_agent", {"question": "Weather in Paris?"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris: sunny, 21C."),
                  reply("The weather agent says Paris is sunny, 21C."))
    await orchestrator.run("What is the weather in Paris?")
    return {"delegation": {"type": "agent_as_tool", "parent_agent": "orchestrator", "child_agent": "weather_agent",
                           "via_tool": "ask_weather_agent"},
            "notes": "pydantic-ai's agent delegation: a tool that runs another agent (usage shared)."}


SCENARIOS: dict[str, Callable[[], Awaitable[Result]]] = {
    fn.__name__: fn for fn in (single_tool, single_tool_streaming, sequential_chain, parallel_tools, repeated_tool,
                               no_tools, tool_error, unknown_tool, invalid_arguments, blocked_tool_call_limit,
                               blocked_approval_denied, multi_turn, delegation)
}


async def run_all(wanted: list[str]) -> None:
    global _scenario
    for name in wanted or list(SCENARIOS):
        _scenario = name
        cc.reset_truth()
        exporter.clear()
        extra = await SCENARIOS[name]()
        if server.left():
            raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
        logfire.force_flush()
        error = extra.get("run_error")
        cc.save_scenario(FRAMEWORK, name, list(exporter.get_finished_spans()),
                         {"tool_executions": cc.truth_snapshot(), "delegation": extra.get("delegation", {}),
                          "run_outcome": "error" if error else "ok", "run_error": error, "notes": extra.get("notes", "")})


if __name__ == "__main__":
    with server:
        asyncio.run(run_all(sys.argv[1:]))
