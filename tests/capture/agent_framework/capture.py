"""Capture Microsoft Agent Framework traces, as its own OpenTelemetry GenAI instrumentation emits them.

Agents are ``agent_framework.Agent`` on ``OpenAIChatCompletionClient`` (the framework's
Chat Completions client; ``OpenAIChatClient`` is now its *Responses* API client, which
``ScriptedOpenAI`` does not serve), pointed at ``ScriptedOpenAI`` on 127.0.0.1 with a dummy
key: no network. The capture's tracer and logger providers are installed as the global
providers, then ``enable_instrumentation(enable_sensitive_data=True)`` switches the
framework's own instrumentation on with content capture (the documented path for an
application that sets up its own providers; ``configure_otel_providers`` would build
providers of its own; like it, the capture also hands the framework's stdlib logger to the
logger provider).

The instrumentation has two GenAI semantic-convention modes: the framework's default (the
conventions above v1.36, ``gen_ai.input.messages`` etc. on spans, written to
``agent_framework/``), and the v1.36 baseline it falls back to when
``OTEL_SEMCONV_STABILITY_OPT_IN`` is set without ``gen_ai_latest_experimental``
(``--baseline-semconv``, written to ``agent_framework_baseline_semconv/``).

Tool bodies record the ground truth. Each agent gets its own tool functions (``tools_for``),
so a body knows its agent; call ids come from the script, found by the call's name and
arguments (unique within a scenario). The agent-as-tool call and the handoff tools, whose
bodies are the framework's, are recorded by a function middleware on the calling agent,
which the framework hands the real call id.

``--openinference`` keeps the default mode and adds openinference-instrumentation-agent-framework's
span processor, which rewrites those spans into OpenInference attributes as they end
(``agent_framework_openinference/``; venv and pins: ``tests/capture/agent_framework_openinference/``).

Run:  /tmp/capture-agent_framework/bin/python tests/capture/agent_framework/capture.py [--baseline-semconv] [scenario ...]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

BASELINE = "--baseline-semconv" in sys.argv
OPENINFERENCE = "--openinference" in sys.argv
# before agent_framework is imported: its settings read the environment once
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_baseline" if BASELINE else "gen_ai_latest_experimental"
for _name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ENABLE_INSTRUMENTATION", "ENABLE_SENSITIVE_DATA"):
    os.environ.pop(_name, None)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from opentelemetry import trace  # noqa: E402
from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.sdk._logs import LoggingHandler  # noqa: E402

FRAMEWORK = ("agent_framework_openinference" if OPENINFERENCE
             else "agent_framework_baseline_semconv" if BASELINE else "agent_framework")
rewriters: list[Any] = []
if OPENINFERENCE:
    # openinference-instrumentation-agent-framework is a span processor that rewrites the framework's
    # own spans into OpenInference attributes when they end: it runs before the exporting one.
    from openinference.instrumentation.agent_framework import AgentFrameworkToOpenInferenceProcessor  # noqa: E402

    rewriters.append(AgentFrameworkToOpenInferenceProcessor())
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}", *rewriters)
log_provider, log_exporter = cc.logging_provider(f"corpus-{FRAMEWORK.replace('_', '-')}")
trace.set_tracer_provider(provider)
set_logger_provider(log_provider)

from agent_framework import Agent, FunctionInvocationContext, FunctionMiddleware, Message, tool  # noqa: E402
from agent_framework.observability import enable_instrumentation  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402

enable_instrumentation(enable_sensitive_data=True, enable_message_events=True)
# What configure_otel_providers() does with a log exporter: the framework's stdlib logger
# ("agent_framework": tool failures, loop limits) also goes to the logger provider.
logging.getLogger("agent_framework").addHandler(LoggingHandler(logger_provider=log_provider))

# (tool name, canonical arguments) -> the id the script gave that call
_scripted_ids: dict[tuple[str, str], str] = {}
_ID_PREFIX = "mafoi" if OPENINFERENCE else "mafb" if BASELINE else "maf"
_scenario_tag = ""  # set per scenario by run()


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


def scripted_id(tool_name: str, n: int) -> str:
    """``call_maf_<scenario>_<tool>_<n>``: unique in the whole corpus (the engine joins traces sharing an id)."""
    return f"call_{_ID_PREFIX}_{_scenario_tag}_{tool_name}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    """A scripted tool call whose id the tool body can find again."""
    call_id = scripted_id(name, n)
    if isinstance(arguments, dict):
        _scripted_ids[_key(name, arguments)] = call_id
    return cc.tool_call(name, arguments, call_id)


def _ids(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call_id = _scripted_ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, n: int = 1) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=scripted_id(name, n), tool_call_id_source="script")


# -- tools: one set per agent, so a body knows which agent runs it ------------------------


def tools_for(agent: str) -> dict[str, Callable[..., Any]]:
    def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
        cc.record(name, arguments, outcome, agent, **_ids(name, arguments), **extra)

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
            ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: float division by zero")
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
        return "widget price: 42"

    def compute(expression: str) -> float:
        """Evaluate a product of two integers written as 'x * y'."""
        ran("compute", {"expression": expression})
        left, right = expression.split("*")
        return float(int(left) * int(right))

    def format_currency(amount: float, currency: str) -> str:
        """Format an amount of money."""
        ran("format_currency", {"amount": amount, "currency": currency})
        return f"{amount:.2f} {currency}"

    def lookup(term: str) -> str:
        """Encyclopedia lookup."""
        ran("lookup", {"term": term})
        return f"{term}: a statically typed functional language"

    def delete_file(path: str) -> str:
        """Delete a file (needs a human's approval)."""
        ran("delete_file", {"path": path})
        return f"deleted {path}"

    def refund(order_id: str) -> str:
        """Refund an order."""
        ran("refund", {"order_id": order_id})
        return f"order {order_id} refunded"

    def track_order(order_id: str) -> str:
        """Where an order is."""
        ran("track_order", {"order_id": order_id})
        return f"order {order_id} is in transit"

    return {f.__name__: f for f in (multiply, add, divide, get_weather, search, compute, format_currency, lookup,
                                    delete_file, refund, track_order)}


def tools(agent: str, *names: str, approval: tuple[str, ...] = ()) -> list[Any]:
    """The agent's tools: plain functions (the agent wraps them in FunctionTools itself), and
    ``tool(..., approval_mode="always_require")`` FunctionTools for those in ``approval``."""
    functions = tools_for(agent)
    return [tool(functions[name], approval_mode="always_require") if name in approval else functions[name]
            for name in names]


class RecordFrameworkCall(FunctionMiddleware):
    """Records a call whose body is the framework's (an agent-as-tool, a handoff tool) for the calling agent."""

    def __init__(self, agent: str, names: set[str] | None = None, prefix: str | None = None,
                 framework_tool: bool = False) -> None:
        self.agent, self.names, self.prefix, self.framework_tool = agent, names or set(), prefix, framework_tool

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        name = context.function.name
        if name in self.names or (self.prefix and name.startswith(self.prefix)):
            arguments = dict(context.arguments) if isinstance(context.arguments, dict) else \
                context.arguments.model_dump()  # type: ignore[union-attr]
            extra = {"framework_tool": True} if self.framework_tool else {"agent_as_tool": True}
            cc.record(name, arguments, "ok", self.agent, tool_call_id=context.metadata.get("call_id"),
                      tool_call_id_source="script", **extra)
        await call_next()


@contextlib.contextmanager
def scripted() -> Iterator[cc.ScriptedOpenAI]:
    """A ``ScriptedOpenAI`` whose whole script must be used by the scenario."""
    with cc.ScriptedOpenAI() as server:
        yield server
        assert server.left() == 0, f"{server.left()} scripted answers were never asked for"


def client(server: cc.ScriptedOpenAI, **config: Any) -> OpenAIChatCompletionClient:
    chat_client = OpenAIChatCompletionClient(model=server.model, base_url=server.base_url, api_key="scripted-no-key")
    chat_client.function_invocation_configuration.update(config)  # type: ignore[typeddict-item]
    return chat_client


def agent(name: str, server: cc.ScriptedOpenAI, agent_tools: list[Any], instructions: str | None = None,
          config: dict[str, Any] | None = None, **kwargs: Any) -> Agent:
    """An ``Agent`` on its own client (``kwargs`` go to ``Agent``, ``config`` to the function-invocation loop)."""
    return Agent(client=client(server, **(config or {})), name=name, tools=agent_tools,
                 instructions=instructions or f"You are {name}. Use your tools.", **kwargs)


# -- scenarios --------------------------------------------------------------------------


async def single_tool() -> None:
    with scripted() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), cc.reply("10 times 5 is 50."))
        await agent("calculator", server, tools("calculator", "multiply", "add")).run("What is 10 times 5?")


async def single_tool_streaming() -> None:
    with scripted() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), cc.reply("10 times 5 is 50."))
        calculator = agent("calculator", server, tools("calculator", "multiply", "add"))
        stream = calculator.run("What is 10 times 5?", stream=True)
        async for _ in stream:
            pass
        await stream.get_final_response()


async def sequential_chain() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"})]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"})]),
            cc.reply(tool_calls=[call("format_currency", {"amount": 126.0, "currency": "EUR"})]),
            cc.reply("3 widgets cost 126.00 EUR."),
        )
        await agent("researcher", server, tools("researcher", "search", "compute", "format_currency")).run(
            "How much do 3 widgets cost, in euros?")


async def parallel_tools() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, 1), call("get_weather", {"city": "London"}, 2)]),
            cc.reply("Paris is sunny, London rainy."),
        )
        await agent("weather", server, tools("weather", "get_weather")).run("Weather in Paris and London?")


async def repeated_tool() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 3, "b": 4}, 1)]),
            cc.reply(tool_calls=[call("multiply", {"a": 12, "b": 5}, 2)]),
            cc.reply("3 x 4 x 5 = 60."),
        )
        await agent("calculator", server, tools("calculator", "multiply", "add")).run("What is 3 times 4 times 5?")


async def no_tools() -> None:
    with scripted() as server:
        server.script(cc.reply("Paris is the capital of France."))
        await agent("calculator", server, tools("calculator", "multiply", "add")).run("What is the capital of France?")


async def tool_error() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10.0, "b": 0.0}, 1)]),
            cc.reply(tool_calls=[call("divide", {"a": 10.0, "b": 2.0}, 2)]),
            cc.reply("10 / 0 is undefined; 10 / 2 = 5."),
        )
        await agent("calculator", server, tools("calculator", "divide")).run("Divide 10 by 0, or by something sensible")


async def unknown_tool() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
            cc.reply("I cannot format disks. 6 x 7 = 42."),
        )
        refused("format_disk", {"drive": "C:"}, "calculator",
                "no tool of that name: the framework answers the call with an error result", "unknown_tool")
        await agent("calculator", server, tools("calculator", "multiply")).run("Format the disk, then multiply 6 by 7")


async def invalid_arguments() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": "ten", "b": 5}, 1)]),
            cc.reply(tool_calls=[call("multiply", {"b": 5}, 2)]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 3)]),
            cc.reply("10 times 5 is 50."),
        )
        refused("multiply", {"a": "ten", "b": 5}, "calculator",
                "argument validation: a is not an integer (pydantic)", "invalid_arguments", 1)
        refused("multiply", {"b": 5}, "calculator", "argument validation: a is missing (pydantic)",
                "invalid_arguments", 2)
        await agent("calculator", server, tools("calculator", "multiply")).run("What is ten times 5?")


async def _approval(approved: bool) -> None:
    with scripted() as server:
        server.script(cc.reply(tool_calls=[call("delete_file", {"path": "/tmp/report.txt"})]))
        server.script(cc.reply("The file is deleted." if approved else "The deletion was not approved; the file stays."))
        files = agent("files", server, tools("files", "delete_file", approval=("delete_file",)))
        session = files.create_session()
        first = await files.run("Delete /tmp/report.txt", session=session)
        requests = first.user_input_requests
        assert len(requests) == 1, first
        if not approved:
            refused("delete_file", {"path": "/tmp/report.txt"}, "files", "the human rejected the approval request",
                    "approval_denied")
        answer = Message(role="user", contents=[requests[0].to_function_approval_response(approved=approved)])
        await files.run(answer, session=session)


async def approval_approved() -> None:
    await _approval(True)


async def blocked_approval_rejected() -> None:
    await _approval(False)


async def blocked_tool_call_limit() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 2, "b": 3}, 1)]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 4}, 2)]),
            # the third request goes out with tool_choice="none"; the model asks for a tool anyway
            cc.reply(tool_calls=[call("add", {"a": 24, "b": 1}, 1)]),
        )
        await agent("calculator", server, tools("calculator", "multiply", "add"), config={"max_iterations": 2}).run(
            "What is 2 times 3 times 4, plus 1?")
    refused("add", {"a": 24, "b": 1}, "calculator",
            "max_iterations=2 reached: the final request disables tools (tool_choice=none) and the framework drops "
            "the call it still got", "limit")


async def blocked_consecutive_errors() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 1.0, "b": 0.0}, 1)]),
            cc.reply(tool_calls=[call("divide", {"a": 2.0, "b": 0.0}, 2)]),
            # the third request goes out with tool_choice="none"; the model asks for a tool anyway
            cc.reply(tool_calls=[call("divide", {"a": 3.0, "b": 0.0}, 3)]),
        )
        await agent("calculator", server, tools("calculator", "divide"),
                    config={"max_consecutive_errors_per_request": 2}).run("Divide 1, 2 and 3 by zero")
    refused("divide", {"a": 3.0, "b": 0.0}, "calculator",
            "max_consecutive_errors_per_request=2 reached: the next request disables tools (tool_choice=none) and "
            "the framework drops the call it still got", "limit", 3)


async def multi_turn() -> None:
    with scripted() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]),
            cc.reply("50"),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7})]),
            cc.reply("57"),
        )
        calculator = agent("calculator", server, tools("calculator", "multiply", "add"))
        session = calculator.create_session()
        await calculator.run("What is 10 times 5?", session=session)
        first_run = len(cc.truth_snapshot())
        await calculator.run("Now add 7 to that", session=session)
    _number_runs(first_run)


async def delegation_agent_tool() -> None:
    with scripted() as manager_server, scripted() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"})]),
            cc.reply("OCaml is a statically typed functional language."),
        )
        manager_server.script(
            cc.reply(tool_calls=[call("researcher", {"task": "What is OCaml?"})]),
            cc.reply("The researcher says OCaml is statically typed and functional."),
        )
        researcher = agent("researcher", researcher_server, tools("researcher", "lookup"),
                           description="Looks terms up in an encyclopedia.")
        manager = agent("manager", manager_server, [researcher.as_tool()],
                        middleware=[RecordFrameworkCall("manager", names={"researcher"})])
        await manager.run("Tell me about OCaml")


async def delegation_handoff() -> None:
    from agent_framework_orchestrations import HandoffBuilder

    with scripted() as triage_server, scripted() as refunds_server:
        triage_server.script(cc.reply(tool_calls=[call("handoff_to_refunds", {})]))
        refunds_server.script(
            cc.reply(tool_calls=[call("refund", {"order_id": "A-17"})]),
            cc.reply("Order A-17 is refunded."),
        )
        # HandoffBuilder requires require_per_service_call_history_persistence=True on every participant
        triage = agent("triage", triage_server, tools("triage", "track_order"),
                       instructions="You route customers to the right agent.",
                       middleware=[RecordFrameworkCall("triage", prefix="handoff_to_", framework_tool=True)],
                       require_per_service_call_history_persistence=True)
        refunds = agent("refunds", refunds_server, tools("refunds", "refund"), description="Handles refunds.",
                        require_per_service_call_history_persistence=True)
        workflow = (HandoffBuilder(name="support", participants=[triage, refunds])
                    .with_start_agent(triage)
                    .with_termination_condition(lambda conversation: any(
                        m.role == "assistant" and "refunded" in (m.text or "") for m in conversation))
                    .build())
        await workflow.run("I want a refund for order A-17")


def _number_runs(first_run_size: int) -> None:
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run_size else 2


SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[None]], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5), then a text answer", single_tool, {}, ""),
    ("single_tool_streaming", "single_tool with run(stream=True)", single_tool_streaming, {}, ""),
    ("sequential_chain", "search, then compute, then format_currency, each after the previous result",
     sequential_chain, {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "the framework may run the calls of one turn concurrently; seq is start order"),
    ("repeated_tool", "multiply(3, 4), then multiply(12, 5) in the next turn", repeated_tool, {}, ""),
    ("no_tools", "the model answers without a tool call (tools were offered)", no_tools, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the error goes back to the model, which retries with b=2",
     tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which the agent does not have; then multiply", unknown_tool, {},
     ""),
    ("invalid_arguments", "multiply(a='ten') and multiply(b=5) fail the framework's argument validation "
     "(the body never runs); then multiply(a=10, b=5)", invalid_arguments, {}, ""),
    ("approval_approved", "delete_file needs approval (approval_mode=always_require): run 1 ends with an approval "
     "request; run 2 (same session) sends the approval, the tool runs, the model answers", approval_approved, {},
     "two agent runs, two traces in this file: the approval resumes in a second run"),
    ("blocked_approval_rejected", "as approval_approved, but the human rejects: the body never runs",
     blocked_approval_rejected, {}, "two agent runs, two traces in this file: the rejection is sent in a second run"),
    ("blocked_tool_call_limit", "max_iterations=2: multiply twice, then the final request goes out with tools "
     "disabled; the model still asks for add, which the framework drops", blocked_tool_call_limit, {}, ""),
    ("blocked_consecutive_errors", "max_consecutive_errors_per_request=2: divide by zero fails twice in a row, "
     "then the loop stops calling tools; the third divide the model asks for is dropped",
     blocked_consecutive_errors, {}, ""),
    ("multi_turn", "run 1 multiplies; run 2 (same AgentSession) adds", multi_turn, {},
     "two agent runs, two traces in this file"),
    ("delegation_agent_tool", "manager calls researcher.as_tool(); researcher calls lookup", delegation_agent_tool,
     {"type": "agent_as_tool", "parent_agent": "manager", "child_agent": "researcher", "via_tool": "researcher",
      "via_tool_call": ("researcher", 1), "child_tool_calls": [("lookup", 1)]},
     "the agent-as-tool call is recorded by a function middleware on the manager (its body is the framework's)"),
    ("delegation_handoff", "HandoffBuilder workflow: triage calls handoff_to_refunds; refunds calls refund",
     delegation_handoff,
     {"type": "handoff", "parent_agent": "triage", "child_agent": "refunds", "via_tool": "handoff_to_refunds",
      "via_tool_call": ("handoff_to_refunds", 1), "child_tool_calls": [("refund", 1)]},
     "handoff_to_refunds is the framework's own handoff tool (framework_tool: true), recorded by a function "
     "middleware on triage"),
]


def run(scenario: str, description: str, body: Callable[[], Awaitable[None]], delegation: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    log_exporter.clear()
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
    log_provider.force_flush()
    logs = list(log_exporter.get_finished_logs())
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _delegation_truth(delegation),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
    }, log_records=logs)


def _delegation_truth(delegation: dict[str, Any]) -> dict[str, Any]:
    if not delegation:
        return {}
    truth = {k: v for k, v in delegation.items() if k != "via_tool_call"}
    truth["via_tool_call_id"] = scripted_id(*delegation["via_tool_call"])
    truth["child_tool_calls"] = [scripted_id(*entry) for entry in delegation["child_tool_calls"]]
    return truth


if __name__ == "__main__":
    chosen = {arg for arg in sys.argv[1:] if not arg.startswith("--")}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
