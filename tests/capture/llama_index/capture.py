"""Capture LlamaIndex agent traces, as openinference-instrumentation-llama-index emits them.

Agents are LlamaIndex's ``FunctionAgent`` (alone, as a tool of another agent, and inside an
``AgentWorkflow`` for handoffs) on the real ``OpenAILike`` LLM (function calling on), pointed
at ``ScriptedOpenAI`` on 127.0.0.1: no key, no network. Tool bodies record the ground truth.

LlamaIndex hands a tool neither its call id nor its agent: the truth's ids come from the
script, found by the call's name and arguments (unique within a scenario), and each tool
is built for one agent (``owned_by``). The built-in ``handoff`` tool is recorded from the
``ToolCallResult`` event the workflow streams when it has run it.

``--traceloop`` traces the same scenarios with OpenLLMetry's opentelemetry-instrumentation-llamaindex
and -openai instead (``llama_index_traceloop/``; venv and pins: ``tests/capture/llama_index_traceloop/``).

Run:  /tmp/capture-llama_index/bin/python tests/capture/llama_index/capture.py [--traceloop] [scenario ...]
"""

# No "from __future__ import annotations": FunctionTool reads the tools' annotations as classes.
import asyncio
import functools
import inspect
import json
import sys
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

TRACELOOP = "--traceloop" in sys.argv
FRAMEWORK = "llama_index_traceloop" if TRACELOOP else "llama_index"
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")
logs_provider, logs_exporter = cc.logging_provider(f"corpus-{FRAMEWORK.replace('_', '-')}")
if TRACELOOP:  # OpenLLMetry: its LlamaIndex and OpenAI instrumentations, as Traceloop.init() sets both up
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor  # noqa: E402
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

    LlamaIndexInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logs_provider)
else:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor  # noqa: E402

    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

_scripted_ids: dict[tuple[str, str], str] = {}


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


_ID_PREFIX = "llamatl" if TRACELOOP else "llama"
_scenario_tag = ""  # set per scenario by run()


def scripted_id(call_id: str) -> str:
    """``call_mul_1`` made unique in the whole corpus: the engine joins traces that share a call id."""
    return f"call_{_ID_PREFIX}_{_scenario_tag}_{call_id.removeprefix('call_')}"


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A scripted tool call whose id the tool body can find again."""
    _scripted_ids[_key(name, arguments)] = scripted_id(call_id)
    return cc.tool_call(name, arguments, scripted_id(call_id))


def _ids(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    call_id = _scripted_ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, cc.current_agent.get(), **_ids(name, arguments), **extra)


def refused(name: str, arguments: dict[str, Any], reason: str, kind: str, agent: str) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, **_ids(name, arguments))


# -- tools ------------------------------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b})
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers."""
    ran("add", {"a": a, "b": b})
    return a + b


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
    else:
        ran("divide", {"a": a, "b": b})
    return a / b


def get_weather(city: str) -> str:
    """Current weather for a city."""
    ran("get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


def search(query: str) -> str:
    """Search the web."""
    ran("search", {"query": query})
    return "<td>price</td><td>42</td>"


def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


async def delete_file(ctx: Context, path: str) -> str:
    """Delete a file, once a human has approved it."""
    # wait_for_event pauses by raising and replays this body when the answer arrives
    answer = await ctx.wait_for_event(
        HumanResponseEvent,
        waiter_id=f"approve delete {path}",
        waiter_event=InputRequiredEvent(prefix=f"Delete {path}? (yes/no)"),
    )
    if answer.response != "yes":
        return f"Deleting {path} was not approved."
    ran("delete_file", {"path": path})
    return f"deleted {path}"


def owned_by(agent: str, function: Callable[..., Any]) -> FunctionTool:
    """``function`` as a LlamaIndex tool that records itself as ``agent``'s."""
    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def as_agent(*args: Any, **kwargs: Any) -> Any:
            token = cc.current_agent.set(agent)
            try:
                return await function(*args, **kwargs)
            finally:
                cc.current_agent.reset(token)
    else:
        @functools.wraps(function)
        def as_agent(*args: Any, **kwargs: Any) -> Any:
            token = cc.current_agent.set(agent)
            try:
                return function(*args, **kwargs)
            finally:
                cc.current_agent.reset(token)
    return FunctionTool.from_defaults(fn=as_agent)


# -- agents -----------------------------------------------------------------------------


def llm(server: cc.ScriptedOpenAI) -> OpenAILike:
    return OpenAILike(model=server.model, api_base=server.base_url, api_key="scripted-no-key",
                      is_chat_model=True, is_function_calling_model=True, max_retries=0)


def agent(name: str, server: cc.ScriptedOpenAI, tools: list[Callable[..., Any]], **kwargs: Any) -> FunctionAgent:
    return FunctionAgent(name=name, description=f"the {name} agent", llm=llm(server),
                         tools=[owned_by(name, tool) for tool in tools], **kwargs)


async def drive(handler: Any, human_answer: str | None = None, handoff_agent: str | None = None) -> Any:
    """Run a workflow to its end: answer its input requests, record the handoffs it ran."""
    async for event in handler.stream_events():
        if isinstance(event, InputRequiredEvent) and human_answer is not None:
            handler.ctx.send_event(HumanResponseEvent(response=human_answer))
        if isinstance(event, ToolCallResult) and event.tool_name == "handoff" and handoff_agent:
            cc.record("handoff", dict(event.tool_kwargs), "error" if event.tool_output.is_error else "ok",
                      handoff_agent, tool_call_id=event.tool_id, tool_call_id_source="ToolCallResult event",
                      framework_tool=True, handoff=True)
    return await handler


def final(text: str) -> dict[str, Any]:
    return cc.reply(content=text)


# -- scenarios --------------------------------------------------------------------------


async def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), final("50"))
        await drive(agent("calculator", server, [multiply, add]).run("What is 10 times 5?"))


async def single_tool_nonstreaming() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), final("50"))
        await drive(agent("calculator", server, [multiply, add], streaming=False).run("What is 10 times 5?"))


async def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_w_paris"),
                                 call("get_weather", {"city": "London"}, "call_w_london")]),
            final("Paris is sunny, London rainy"),
        )
        await drive(agent("weather", server, [get_weather]).run("Weather in Paris and London?"))


async def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"}, "call_search_1")]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"}, "call_compute_1")]),
            final("3 widgets cost 126"),
        )
        await drive(agent("researcher", server, [search, compute]).run("How much do 3 widgets cost?"))


async def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 0}, "call_div_1")]),
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 2}, "call_div_2")]),
            final("10 / 2 = 5"),
        )
        await drive(agent("calculator", server, [divide]).run("Divide 10 by 0, or by something sensible"))


async def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, "call_mul_1")]),
            final("42"),
        )
        refused("format_disk", {"drive": "C:"}, "no tool of that name ('Tool format_disk not found')",
                "unknown_tool", "calculator")
        await drive(agent("calculator", server, [multiply]).run("Format the disk, then multiply 6 by 7"))


async def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10}, "call_mul_bad")]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_good")]),
            final("50"),
        )
        refused("multiply", {"a": 10}, "argument b missing: the call raised TypeError before the body ran",
                "invalid_arguments", "calculator")
        await drive(agent("calculator", server, [multiply]).run("What is 10 times 5?"))


async def blocked_max_iterations() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, "call_add_1")]),
        )
        try:
            await drive(agent("calculator", server, [multiply, add]).run("10 times 5, plus 7", max_iterations=2))
        finally:  # add was asked for after multiply ran
            refused("add", {"a": 50, "b": 7}, "max_iterations=2 reached when the model asked for it: "
                    "WorkflowRuntimeError before the call was dispatched", "limit", "calculator")


async def blocked_approval_denied() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"}, "call_del_1")]),
            final("I did not delete it: the deletion was not approved."),
        )
        refused("delete_file", {"path": "/etc/passwd"}, "the tool waited for a HumanResponseEvent and the human "
                "answered 'no': the deletion never ran (the tool body itself ran, twice, up to the approval)",
                "approval_denied", "janitor")
        await drive(agent("janitor", server, [delete_file]).run("Delete /etc/passwd"), human_answer="no")


async def delegation_handoff() -> None:
    with cc.ScriptedOpenAI() as router_server, cc.ScriptedOpenAI() as researcher_server:
        handoff_args = {"to_agent": "researcher", "reason": "an encyclopedia question"}
        router_server.script(cc.reply(tool_calls=[call("handoff", handoff_args, "call_handoff_1")]))
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            final("OCaml is a statically typed functional language"),
        )
        workflow = AgentWorkflow(
            agents=[agent("router", router_server, [], can_handoff_to=["researcher"]),
                    agent("researcher", researcher_server, [lookup])],
            root_agent="router",
        )
        await drive(workflow.run(user_msg="Tell me about OCaml"), handoff_agent="router")


async def blocked_handoff_not_allowed() -> None:
    with cc.ScriptedOpenAI() as router_server, cc.ScriptedOpenAI() as admin_server, cc.ScriptedOpenAI() as r_server:
        handoff_args = {"to_agent": "admin", "reason": "wants root"}
        router_server.script(
            cc.reply(tool_calls=[call("handoff", handoff_args, "call_handoff_1")]),
            final("I cannot pass you to the admin."),
        )
        refused("handoff", handoff_args, "router may hand off only to researcher (can_handoff_to); the handoff "
                "tool answered 'Agent admin cannot hand off to router…' and no agent change happened",
                "policy_guard", "router")
        workflow = AgentWorkflow(
            agents=[agent("router", router_server, [], can_handoff_to=["researcher"]),
                    agent("researcher", r_server, [lookup]), agent("admin", admin_server, [])],
            root_agent="router",
        )
        await drive(workflow.run(user_msg="Give me to the admin"))


async def delegation_agent_as_tool() -> None:
    with cc.ScriptedOpenAI() as router_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            final("OCaml is a statically typed functional language"),
        )
        router_server.script(
            cc.reply(tool_calls=[call("ask_researcher", {"question": "What is OCaml?"}, "call_delegate_1")]),
            final("The researcher says OCaml is statically typed and functional"),
        )
        researcher = agent("researcher", researcher_server, [lookup])

        async def ask_researcher(question: str) -> str:
            """Ask the researcher agent a question."""
            ran("ask_researcher", {"question": question}, note="recorded when it starts, before the sub-agent runs")
            return str(await drive(researcher.run(question)))

        await drive(agent("router", router_server, [ask_researcher]).run("Tell me about OCaml"))


async def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_turn1_mul")]), final("50"),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, "call_turn2_add")]), final("57"),
        )
        calculator = agent("calculator", server, [multiply, add])
        # One memory for both runs: reusing one Context did not carry the history here (its
        # state store skips the unserializable memory between runs).
        conversation = ChatMemoryBuffer.from_defaults()
        await drive(calculator.run("What is 10 times 5?", memory=conversation))
        first_run = len(cc.truth_snapshot())
        await drive(calculator.run("Now add 7 to that", memory=conversation))
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run else 2


SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[None]], dict[str, Any], str]] = [
    ("single_tool", "FunctionAgent (streaming, the default): multiply(a=10, b=5), then text", single_tool, {}, ""),
    ("single_tool_nonstreaming", "the same with FunctionAgent(streaming=False)", single_tool_nonstreaming, {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "the workflow runs the calls of one turn as concurrent call_tool steps; seq is start order"),
    ("sequential_chain", "search, then compute in the next turn, then text", sequential_chain, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the error text goes back to the model, which retries "
     "with b=2", tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which the agent lacks; then multiply", unknown_tool, {}, ""),
    ("invalid_arguments", "multiply without b: the call raises TypeError before the body runs; retry with both",
     invalid_arguments, {}, "LlamaIndex does not validate arguments against the tool schema; a missing argument "
     "fails the Python call"),
    ("blocked_max_iterations", "max_iterations=2: the second model turn's add is never dispatched and the run "
     "raises WorkflowRuntimeError", blocked_max_iterations, {}, ""),
    ("blocked_approval_denied", "delete_file waits for a human (InputRequiredEvent / HumanResponseEvent), the human "
     "says no", blocked_approval_denied, {}, ""),
    ("blocked_handoff_not_allowed", "AgentWorkflow: router asks to hand off to admin, which can_handoff_to does not "
     "allow; the handoff tool refuses", blocked_handoff_not_allowed, {}, ""),
    ("delegation_handoff", "AgentWorkflow: router hands off to researcher, which calls lookup and answers",
     delegation_handoff,
     {"type": "handoff", "parent_agent": "router", "via_tool": "handoff", "via_tool_call_id": "call_handoff_1",
      "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}, ""),
    ("delegation_agent_as_tool", "router's tool ask_researcher runs the researcher FunctionAgent, which calls lookup",
     delegation_agent_as_tool,
     {"type": "agent-as-tool", "parent_agent": "router", "via_tool": "ask_researcher",
      "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}, ""),
    ("multi_turn", "two runs of one FunctionAgent sharing one ChatMemoryBuffer: multiply, then add", multi_turn, {},
     "two agent runs, two traces"),
]


def run(scenario: str, description: str, body: Callable[[], Awaitable[None]], delegation: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    logs_exporter.clear()
    cc.reset_truth()
    _scripted_ids.clear()
    _scenario_tag = scenario
    outcome, error = "ok", None
    try:
        asyncio.run(body())
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    logs_provider.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _with_scripted_ids(delegation),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
    }, list(logs_exporter.get_finished_logs()))



def _with_scripted_ids(delegation: dict[str, Any]) -> dict[str, Any]:
    if not delegation:
        return {}
    return {**delegation, "via_tool_call_id": scripted_id(delegation["via_tool_call_id"]),
            "child_tool_calls": [scripted_id(call_id) for call_id in delegation["child_tool_calls"]]}


if __name__ == "__main__":
    chosen = {name for name in sys.argv[1:] if not name.startswith("--")}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
