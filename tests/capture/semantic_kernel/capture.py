"""Capture Semantic Kernel traces, as Semantic Kernel's own OpenTelemetry GenAI diagnostics emit them.

Every agent is a ``ChatCompletionAgent`` on ``OpenAIChatCompletion`` (an ``AsyncOpenAI`` client
pointed at ``ScriptedOpenAI`` on 127.0.0.1 with a dummy key: no network), with kernel-function
plugins and ``FunctionChoiceBehavior.Auto()``. The instrumentation is SK's own, switched on by
its environment variables before it is imported; it traces through the *global* tracer provider
and writes message content to Python ``logging``, which an OpenTelemetry ``LoggingHandler`` on
the global ``LoggerProvider`` turns into log records (as SK's telemetry sample sets it up).

SK never hands a kernel function its call id, so a tool body finds the id the script gave the
call with the same name and arguments (unique within a scenario): ``tool_call_id_source: script``.
Each plugin instance is built for one agent, which is how a body knows its agent.

Run:  /tmp/capture-semantic_kernel/bin/python tests/capture/semantic_kernel/capture.py [scenario ...]
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any, Awaitable, Callable

# before semantic_kernel is imported: its diagnostics settings are read at import time
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.sdk._logs import LoggingHandler  # noqa: E402

FRAMEWORK = "semantic_kernel"
provider, exporter = cc.tracing("corpus-semantic-kernel")
trace.set_tracer_provider(provider)
log_provider, log_exporter = cc.logging_provider("corpus-semantic-kernel")
set_logger_provider(log_provider)
_handler = LoggingHandler(logger_provider=log_provider)
_handler.addFilter(logging.Filter("semantic_kernel"))
logging.getLogger().addHandler(_handler)
logging.getLogger().setLevel(logging.INFO)

from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import (  # noqa: E402
    ChatCompletionAgent,
    ChatHistoryAgentThread,
    GroupChatOrchestration,
    HandoffOrchestration,
    OrchestrationHandoffs,
    RoundRobinGroupChatManager,
)
from semantic_kernel.agents.runtime import InProcessRuntime  # noqa: E402
from semantic_kernel.connectors.ai import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.filters import AutoFunctionInvocationContext, FilterTypes, FunctionInvocationContext  # noqa: E402
from semantic_kernel.functions import FunctionResult, kernel_function  # noqa: E402

_scripted_ids: dict[tuple[str, str], str] = {}
_scenario_tag = ""  # set per scenario by run()


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


def scripted_id(call_id: str) -> str:
    """``multiply_1`` made unique in the whole corpus: ``call_sk_<scenario>_multiply_1``."""
    return f"call_sk_{_scenario_tag}_{call_id}"


def call(name: str, arguments: dict[str, Any] | str, call_id: str) -> dict[str, Any]:
    """A scripted tool call whose id the tool body can find again."""
    if isinstance(arguments, dict):
        _scripted_ids[_key(name, arguments)] = scripted_id(call_id)
    return cc.tool_call(name, arguments, scripted_id(call_id))


def _ids(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    call_id = _scripted_ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def ran(name: str, arguments: dict[str, Any], agent: str, outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, agent, **_ids(name, arguments), **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, call_id: str | None = None) -> None:
    ids = _ids(name, arguments) if call_id is None else {"tool_call_id": scripted_id(call_id),
                                                         "tool_call_id_source": "script"}
    cc.add_refused(name, arguments, agent, reason, kind, **ids)


# -- plugins (the tool name the model calls is SK's fully qualified ``<Plugin>-<function>``) -----


class MathPlugin:
    def __init__(self, agent: str) -> None:
        self.agent = agent

    @kernel_function(description="Multiply two integers.")
    def multiply(self, a: Annotated[int, "the first factor"], b: Annotated[int, "the second factor"]) -> int:
        ran("MathPlugin-multiply", {"a": a, "b": b}, self.agent)
        return a * b

    @kernel_function(description="Add two integers.")
    def add(self, a: Annotated[int, "the first term"], b: Annotated[int, "the second term"]) -> int:
        ran("MathPlugin-add", {"a": a, "b": b}, self.agent)
        return a + b

    @kernel_function(description="Divide a by b.")
    def divide(self, a: Annotated[float, "the dividend"], b: Annotated[float, "the divisor"]) -> float:
        if b == 0:
            ran("MathPlugin-divide", {"a": a, "b": b}, self.agent, "error", error="ZeroDivisionError: division by zero")
        else:
            ran("MathPlugin-divide", {"a": a, "b": b}, self.agent)
        return a / b


class WeatherPlugin:
    def __init__(self, agent: str) -> None:
        self.agent = agent

    @kernel_function(description="Current weather for a city.")
    def get_weather(self, city: Annotated[str, "the city's name"]) -> str:
        ran("WeatherPlugin-get_weather", {"city": city}, self.agent)
        return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


class ResearchPlugin:
    def __init__(self, agent: str) -> None:
        self.agent = agent

    @kernel_function(description="Search the web.")
    def search(self, query: Annotated[str, "what to look for"]) -> str:
        ran("ResearchPlugin-search", {"query": query}, self.agent)
        return "<td>price</td><td>42</td>"

    @kernel_function(description="Evaluate a product of two integers written as 'x * y'.")
    def compute(self, expression: Annotated[str, "the product, e.g. '42 * 3'"]) -> float:
        ran("ResearchPlugin-compute", {"expression": expression}, self.agent)
        left, right = expression.split("*")
        return float(int(left) * int(right))

    @kernel_function(description="Encyclopedia lookup.")
    def lookup(self, term: Annotated[str, "the term to look up"]) -> str:
        ran("ResearchPlugin-lookup", {"term": term}, self.agent)
        return f"{term}: a statically typed functional language"


class FilePlugin:
    def __init__(self, agent: str) -> None:
        self.agent = agent

    @kernel_function(description="Delete a file.")
    def delete_file(self, path: Annotated[str, "the file's path"]) -> str:
        ran("FilePlugin-delete_file", {"path": path}, self.agent)
        return f"deleted {path}"


# -- agents -----------------------------------------------------------------------------


def service(server: cc.ScriptedOpenAI) -> OpenAIChatCompletion:
    client = AsyncOpenAI(base_url=server.base_url, api_key="scripted-no-key", max_retries=0)
    return OpenAIChatCompletion(ai_model_id=server.model, async_client=client)


def agent(name: str, server: cc.ScriptedOpenAI, plugins: list[Any], behavior: FunctionChoiceBehavior | None = None,
          **kwargs: Any) -> ChatCompletionAgent:
    return ChatCompletionAgent(name=name, instructions=f"You are the {name}.", service=service(server),
                               plugins=plugins, function_choice_behavior=behavior or FunctionChoiceBehavior.Auto(),
                               **kwargs)


def ask(member: ChatCompletionAgent, message: str, thread: ChatHistoryAgentThread | None = None) -> Any:
    return asyncio.run(member.get_response(messages=message, thread=thread))


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_1")]), cc.reply("50"))
        ask(agent("calculator", server, [MathPlugin("calculator")]), "What is 10 times 5?")


def single_tool_streaming() -> None:
    async def stream(member: ChatCompletionAgent) -> None:
        async for _ in member.invoke_stream(messages="What is 10 times 5?"):
            pass

    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_1")]), cc.reply("50"))
        asyncio.run(stream(agent("calculator", server, [MathPlugin("calculator")])))


def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("ResearchPlugin-search", {"query": "widget price"}, "search_1")]),
            cc.reply(tool_calls=[call("ResearchPlugin-compute", {"expression": "42 * 3"}, "compute_1")]),
            cc.reply(tool_calls=[call("MathPlugin-add", {"a": 126, "b": 10}, "add_1")]),
            cc.reply("3 widgets cost 126, 136 with shipping"),
        )
        ask(agent("researcher", server, [ResearchPlugin("researcher"), MathPlugin("researcher")]),
            "How much do 3 widgets cost, with 10 for shipping?")


def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("WeatherPlugin-get_weather", {"city": "Paris"}, "get_weather_1"),
                                 call("WeatherPlugin-get_weather", {"city": "London"}, "get_weather_2")]),
            cc.reply("Paris is sunny, London rainy"),
        )
        ask(agent("weather", server, [WeatherPlugin("weather")]), "Weather in Paris and London?")


def repeated_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_1")]),
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 50, "b": 2}, "multiply_2")]),
            cc.reply("100"),
        )
        ask(agent("calculator", server, [MathPlugin("calculator")]), "What is 10 times 5, times 2?")


def no_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply("Paris is the capital of France."))
        ask(agent("calculator", server, [MathPlugin("calculator")]), "What is the capital of France?")


def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-divide", {"a": 10, "b": 0}, "divide_1")]),
            cc.reply(tool_calls=[call("MathPlugin-divide", {"a": 10, "b": 2}, "divide_2")]),
            cc.reply("10 / 2 = 5"),
        )
        ask(agent("calculator", server, [MathPlugin("calculator")]), "Divide 10 by 0, or by something sensible")


def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("SystemPlugin-format_disk", {"drive": "C:"}, "format_disk_1")]),
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 6, "b": 7}, "multiply_1")]),
            cc.reply("42"),
        )
        refused("SystemPlugin-format_disk", {"drive": "C:"}, "calculator",
                "no such kernel function: 'The tool call with name `SystemPlugin-format_disk` is not part of the "
                "provided tools' goes back to the model", "unknown_tool")
        ask(agent("calculator", server, [MathPlugin("calculator")]), "Format the disk, then multiply 6 by 7")


def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10}, "multiply_1")]),
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_2")]),
            cc.reply("50"),
        )
        refused("MathPlugin-multiply", {"a": 10}, "calculator",
                "Kernel.invoke_function_call: Missing required argument(s): ['b'] (checked before any span)",
                "invalid_arguments")
        ask(agent("calculator", server, [MathPlugin("calculator")]), "What is 10 times 5?")


def invalid_arguments_type() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": "ten", "b": 5}, "multiply_1")]),
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_2")]),
            cc.reply("50"),
        )
        refused("MathPlugin-multiply", {"a": "ten", "b": 5}, "calculator",
                "KernelFunctionFromMethod.gather_function_parameters: int('ten') fails, FunctionExecutionException "
                "'Parameter a is expected to be parsed to <class 'int'> but is not.' (inside the execute_tool span)",
                "invalid_arguments")
        ask(agent("calculator", server, [MathPlugin("calculator")]), "What is ten times 5?")


def _approval_filter(human: Callable[[str, dict[str, Any]], bool], agent_name: str
                     ) -> Callable[[AutoFunctionInvocationContext, Callable[..., Awaitable[None]]], Awaitable[None]]:
    """SK's human-in-the-loop pattern for auto-invoked calls: an auto-function-invocation filter asks first."""

    async def ask_human(context: AutoFunctionInvocationContext, next: Callable[..., Awaitable[None]]) -> None:
        name = context.function.fully_qualified_name
        arguments = dict(context.arguments or {})
        if context.function.plugin_name == "FilePlugin" and not human(name, arguments):
            refused(name, arguments, agent_name, "the user denied the call (auto-function-invocation approval filter)",
                    "approval_denied")
            context.function_result = FunctionResult(function=context.function.metadata,
                                                     value="The user denied this tool call.")
            return
        await next(context)

    return ask_human


def _approval(approve: bool) -> None:
    asked: list[str] = []

    def human(name: str, arguments: dict[str, Any]) -> bool:  # the scripted user at the console
        asked.append(name)
        return approve

    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("FilePlugin-delete_file", {"path": "/tmp/old.log"}, "delete_file_1")]),
            cc.reply("Deleted /tmp/old.log." if approve else "The user did not allow deleting /tmp/old.log."),
        )
        janitor = agent("janitor", server, [FilePlugin("janitor")])
        janitor.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, _approval_filter(human, "janitor"))
        ask(janitor, "Delete /tmp/old.log")
    assert asked == ["FilePlugin-delete_file"], asked


def approval_approved() -> None:
    _approval(True)


def blocked_approval_rejected() -> None:
    _approval(False)


def blocked_filter() -> None:
    async def no_deletes(context: AutoFunctionInvocationContext, next: Callable[..., Awaitable[None]]) -> None:
        if context.function.name == "delete_file":
            refused(context.function.fully_qualified_name, dict(context.arguments or {}), "janitor",
                    "an auto-function-invocation filter blocks delete_file (next() never called)", "policy_guard")
            context.function_result = FunctionResult(function=context.function.metadata,
                                                     value="Blocked by policy: deleting files is not allowed.")
            return
        await next(context)

    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("FilePlugin-delete_file", {"path": "/etc/passwd"}, "delete_file_1")]),
            cc.reply("I was not allowed to delete it."),
        )
        janitor = agent("janitor", server, [FilePlugin("janitor")])
        janitor.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, no_deletes)
        ask(janitor, "Delete /etc/passwd")


def blocked_function_filter() -> None:
    async def no_deletes(context: FunctionInvocationContext, next: Callable[..., Awaitable[None]]) -> None:
        if context.function.name == "delete_file":
            refused(context.function.fully_qualified_name, {"path": context.arguments["path"]}, "janitor",
                    "a function-invocation filter blocks delete_file (next() never called)", "policy_guard")
            context.result = FunctionResult(function=context.function.metadata,
                                            value="Blocked by policy: deleting files is not allowed.")
            return
        await next(context)

    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("FilePlugin-delete_file", {"path": "/etc/passwd"}, "delete_file_1")]),
            cc.reply("I was not allowed to delete it."),
        )
        janitor = agent("janitor", server, [FilePlugin("janitor")])
        janitor.kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, no_deletes)
        ask(janitor, "Delete /etc/passwd")


def blocked_tool_call_limit() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_1")]),
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 50, "b": 2}, "multiply_2")]),
            # the third request is SK's closing call without tools; the model still asks for one
            cc.reply("I would multiply 100 by 3 next.",
                     tool_calls=[call("MathPlugin-multiply", {"a": 100, "b": 3}, "multiply_3")]),
        )
        calculator = agent("calculator", server, [MathPlugin("calculator")],
                           FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=2))
        try:
            ask(calculator, "What is 10 times 5, times 2, times 3?")
        finally:
            refused("MathPlugin-multiply", {"a": 100, "b": 3}, "calculator",
                    "maximum_auto_invoke_attempts=2 spent: SK's last request goes without tools and the call it "
                    "still got back is returned, never invoked", "limit")
        assert not server.requests[-1].get("tools"), "the closing request should carry no tools"


def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("MathPlugin-multiply", {"a": 10, "b": 5}, "multiply_1")]), cc.reply("50"),
            cc.reply(tool_calls=[call("MathPlugin-add", {"a": 50, "b": 7}, "add_1")]), cc.reply("57"),
        )
        calculator = agent("calculator", server, [MathPlugin("calculator")])

        async def conversation() -> None:
            thread = ChatHistoryAgentThread()
            first = await calculator.get_response(messages="What is 10 times 5?", thread=thread)
            global _first_run
            _first_run = len(cc.truth_snapshot())
            await calculator.get_response(messages="Now add 7 to that", thread=first.thread)

        asyncio.run(conversation())
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < _first_run else 2


_first_run = 0


def _record_agent_calls(parent: str) -> Callable[..., Awaitable[None]]:
    """The agent-as-tool's body is SK's (it calls the child's get_response): the parent's filter records the call."""

    async def recording(context: AutoFunctionInvocationContext, next: Callable[..., Awaitable[None]]) -> None:
        if context.function.name == context.function.plugin_name:  # an agent added as a plugin: <name>-<name>
            arguments = json.loads(context.function_call_content.arguments)
            ran(context.function.fully_qualified_name, arguments, parent, agent_tool=True,
                recorded_by="auto-function-invocation filter")
        await next(context)

    return recording


def delegation_agent_plugin() -> None:
    with cc.ScriptedOpenAI() as manager_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("ResearchPlugin-lookup", {"term": "OCaml"}, "lookup_1")]),
            cc.reply("OCaml is a statically typed functional language"),
        )
        manager_server.script(
            cc.reply(tool_calls=[call("researcher-researcher", {"messages": "What is OCaml?"}, "researcher_1")]),
            cc.reply("The researcher says OCaml is statically typed and functional"),
        )
        researcher = agent("researcher", researcher_server, [ResearchPlugin("researcher")],
                           description="Looks terms up in an encyclopedia.")
        manager = agent("manager", manager_server, [researcher])
        manager.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, _record_agent_calls("manager"))
        ask(manager, "Tell me about OCaml")


def _record_handoff_calls(member: str) -> Callable[..., Awaitable[None]]:
    """SK's own Handoff-* functions: recorded, as framework tools, by a filter on the member's kernel."""

    async def recording(context: AutoFunctionInvocationContext, next: Callable[..., Awaitable[None]]) -> None:
        if context.function.plugin_name == "Handoff":
            arguments = json.loads(context.function_call_content.arguments or "{}")
            ran(context.function.fully_qualified_name, arguments, member, framework_tool=True,
                recorded_by="auto-function-invocation filter")
        await next(context)

    return recording


async def _run_orchestration(orchestration: Any, task: str, user_span: str | None) -> Any:
    """Start the in-process runtime and run the orchestration, inside a span of the user's if one is named
    (the runtime's worker task keeps the context it was started in)."""
    async def go() -> Any:
        runtime = InProcessRuntime()
        runtime.start()
        try:
            result = await orchestration.invoke(task=task, runtime=runtime)
            return await result.get(timeout=30)
        finally:
            await runtime.stop_when_idle()

    if user_span is None:
        return await go()
    with trace.get_tracer("capture.semantic_kernel.user").start_as_current_span(user_span):
        return await go()


def delegation_handoff(user_span: str | None = None) -> None:
    async def orchestrate(triage: ChatCompletionAgent, researcher: ChatCompletionAgent) -> Any:
        handoffs = OrchestrationHandoffs().add(triage, researcher, "Transfer to the researcher for lookups.")
        orchestration = HandoffOrchestration(members=[triage, researcher], handoffs=handoffs)
        return await _run_orchestration(orchestration, "Tell me about OCaml", user_span)

    with cc.ScriptedOpenAI() as triage_server, cc.ScriptedOpenAI() as researcher_server:
        triage_server.script(cc.reply(tool_calls=[call("Handoff-transfer_to_researcher", {}, "transfer_to_researcher_1")]))
        researcher_server.script(
            cc.reply(tool_calls=[call("ResearchPlugin-lookup", {"term": "OCaml"}, "lookup_1")]),
            cc.reply(tool_calls=[call("Handoff-complete_task",
                                      {"task_summary": "OCaml is a statically typed functional language"},
                                      "complete_task_1")]),
        )
        triage = agent("triage", triage_server, [], description="Routes the user's request.")
        researcher = agent("researcher", researcher_server, [ResearchPlugin("researcher")],
                           description="Looks terms up in an encyclopedia.")
        triage.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, _record_handoff_calls("triage"))
        researcher.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, _record_handoff_calls("researcher"))
        print("handoff result:", asyncio.run(orchestrate(triage, researcher)))


def delegation_handoff_in_span() -> None:
    delegation_handoff(user_span="handoff orchestration")


def delegation_group_chat() -> None:
    with cc.ScriptedOpenAI() as writer_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("ResearchPlugin-lookup", {"term": "OCaml"}, "lookup_1")]),
            cc.reply("OCaml is a statically typed functional language."),
        )
        writer_server.script(cc.reply("OCaml: a statically typed, functional language."))
        researcher = agent("researcher", researcher_server, [ResearchPlugin("researcher")],
                           description="Looks terms up in an encyclopedia.")
        writer = agent("writer", writer_server, [], description="Writes the final answer.")
        orchestration = GroupChatOrchestration(members=[researcher, writer],
                                               manager=RoundRobinGroupChatManager(max_rounds=2))
        print("group chat result:", asyncio.run(_run_orchestration(orchestration, "Tell me about OCaml", None)))


SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "MathPlugin-multiply(a=10, b=5), then text", single_tool, {}, ""),
    ("single_tool_streaming", "single_tool through ChatCompletionAgent.invoke_stream", single_tool_streaming, {}, ""),
    ("sequential_chain", "search, then compute, then add, each in the next model turn, then text", sequential_chain,
     {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "SK runs the calls of one turn with asyncio.gather; seq is start order"),
    ("repeated_tool", "multiply(10, 5), then multiply(50, 2) in the next turn", repeated_tool, {}, ""),
    ("no_tools", "the model answers in text; the agent has MathPlugin but no call is made", no_tools, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; SK hands the error text to the model, which retries with b=2",
     tool_error, {}, ""),
    ("unknown_tool", "the model asks for SystemPlugin-format_disk, which the kernel lacks; then multiply",
     unknown_tool, {}, ""),
    ("invalid_arguments", "multiply without its required b: SK's argument check refuses it (the body never runs); "
     "retry with a=10, b=5", invalid_arguments, {}, ""),
    ("invalid_arguments_type", "multiply(a='ten'): the int conversion of the argument fails inside the function "
     "(the body never runs); retry with a=10", invalid_arguments_type, {}, ""),
    ("approval_approved", "an auto-function-invocation filter asks a (scripted) human before any FilePlugin call; "
     "the human approves delete_file, which runs", approval_approved, {},
     "SK's ChatCompletionAgent has no built-in tool approval; this is its filter-based human-in-the-loop pattern. "
     "The whole flow stays in one trace (the filter waits inline)."),
    ("blocked_approval_rejected", "as approval_approved, but the human rejects: the filter returns a 'denied' "
     "result without calling next()", blocked_approval_rejected, {},
     "SK has no built-in approval; the filter-based approval stays in one trace"),
    ("blocked_filter", "an auto-function-invocation filter blocks delete_file as a policy (no human)", blocked_filter,
     {}, ""),
    ("blocked_function_filter", "a function-invocation filter (runs inside the execute_tool span) blocks delete_file",
     blocked_function_filter, {}, ""),
    ("blocked_tool_call_limit", "FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=2): two multiplies run; "
     "SK's closing request has no tools, and the multiply the model still returns is never invoked",
     blocked_tool_call_limit, {},
     "the third model answer carries a tool call although that request offered no tools (scripted): SK returns it "
     "as the agent's answer without invoking it"),
    ("multi_turn", "two get_response calls on one ChatHistoryAgentThread, each with a tool call", multi_turn, {},
     "two agent invocations, two traces (no parent span joins them)"),
    ("delegation_agent_plugin", "manager has the researcher ChatCompletionAgent as a plugin (researcher-researcher); "
     "researcher calls lookup", delegation_agent_plugin,
     {"type": "agent_as_plugin", "parent_agent": "manager", "via_tool": "researcher-researcher",
      "via_tool_call_id": "researcher_1", "child_agent": "researcher", "child_tool_calls": ["lookup_1"]},
     "the agent-as-tool entry is recorded by an auto-function-invocation filter on the manager's kernel "
     "(agent_tool: true); its body is SK's Agent._as_kernel_function"),
    ("delegation_handoff", "HandoffOrchestration: triage calls Handoff-transfer_to_researcher; researcher calls "
     "lookup, then Handoff-complete_task", delegation_handoff,
     {"type": "handoff", "parent_agent": "triage", "via_tool": "Handoff-transfer_to_researcher",
      "via_tool_call_id": "transfer_to_researcher_1", "child_agent": "researcher",
      "child_tool_calls": ["lookup_1", "complete_task_1"]},
     "Handoff-* are SK's own orchestration functions (framework_tool: true), recorded by a filter on each member's "
     "kernel. The InProcessRuntime's messaging spans start new traces: the file holds several traces, joined only "
     "by span links"),
    ("delegation_handoff_in_span", "delegation_handoff with the runtime started and the orchestration invoked inside "
     "one span of the user's ('handoff orchestration')", delegation_handoff_in_span,
     {"type": "handoff", "parent_agent": "triage", "via_tool": "Handoff-transfer_to_researcher",
      "via_tool_call_id": "transfer_to_researcher_1", "child_agent": "researcher",
      "child_tool_calls": ["lookup_1", "complete_task_1"]},
     "the root span 'handoff orchestration' is the capture's (the user's), not SK's; with it the whole "
     "orchestration is one trace. Handoff-* are SK's own functions (framework_tool: true)"),
    ("delegation_group_chat", "GroupChatOrchestration with RoundRobinGroupChatManager(max_rounds=2): researcher "
     "(calls lookup) speaks, then writer", delegation_group_chat,
     {"type": "group_chat", "parent_agent": "RoundRobinGroupChatManager", "via_tool": None, "via_tool_call_id": None,
      "child_agent": "researcher", "child_tool_calls": ["lookup_1"]},
     "no tool hands over: the group chat manager (not an agent, no model) picks each member in turn; "
     "the runtime's messaging spans start new traces, joined only by span links"),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation_truth: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    log_exporter.clear()
    cc.reset_truth()
    _scripted_ids.clear()
    _scenario_tag = scenario
    outcome, error = "ok", None
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    log_provider.force_flush()
    notes = " ".join(filter(None, [notes, "Tool names are SK's fully qualified <Plugin>-<function>, as the model "
                                          "calls them and as gen_ai.tool.name has them."]))
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _with_scripted_ids(delegation_truth),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
    }, list(log_exporter.get_finished_logs()))


def _with_scripted_ids(delegation: dict[str, Any]) -> dict[str, Any]:
    if not delegation:
        return {}
    via = delegation["via_tool_call_id"]
    return {**delegation, "via_tool_call_id": scripted_id(via) if via else None,
            "child_tool_calls": [scripted_id(call_id) for call_id in delegation["child_tool_calls"]]}


if __name__ == "__main__":
    chosen = set(sys.argv[1:])
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
