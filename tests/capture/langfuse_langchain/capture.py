"""Capture Langfuse traces of a LangChain agent: Langfuse's LangChain ``CallbackHandler``.

``langchain.agents.create_agent`` (a LangGraph graph) with a ``ChatOpenAI`` model against
``ScriptedOpenAI`` on 127.0.0.1, invoked with ``config={"callbacks": [CallbackHandler()]}`` as
Langfuse's LangChain docs say. The handler turns every LangChain run (graph, node, model call,
tool) into a Langfuse observation, i.e. an OTel span of Langfuse's own SDK; as in the
``langfuse`` capture the client is made with ``span_exporter=`` an in-memory exporter and a base
URL on a closed port, so what is saved is what a Langfuse server would receive and none is
contacted.

Tool bodies record the truth, with the call id from LangGraph's ``ToolRuntime``; the agent's
name comes from construction. Calls the framework refused are added by the scenario.

    /tmp/capture-langfuse_langchain/bin/python tests/capture/langfuse_langchain/capture.py [scenario ...]
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

for key in [k for k in os.environ if k.startswith(("LANGFUSE_", "OPENAI_", "OTEL_", "LANGCHAIN_", "LANGSMITH_"))]:
    del os.environ[key]

import capture_common as cc  # noqa: E402
from call_id_mentions import annotate  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallLimitMiddleware, wrap_tool_call  # noqa: E402
from langchain.tools import ToolRuntime, tool  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langfuse import Langfuse  # noqa: E402
from langfuse.langchain import CallbackHandler  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

FRAMEWORK = "langfuse_langchain"
span_exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "corpus-langfuse-langchain"}))
langfuse = Langfuse(public_key="pk-lf-local", secret_key="sk-lf-local", base_url="http://127.0.0.1:9",
                    tracer_provider=provider, span_exporter=span_exporter)


def _traced(config: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    """The run's config with a Langfuse handler (a new one per invocation, as the docs show)."""
    traced = dict(config or {})
    traced["callbacks"] = [CallbackHandler()]
    if metadata:
        traced["metadata"] = metadata
    return traced


# -- tools ------------------------------------------------------------------------------
# The agent each tool belongs to is set per scenario: ToolRuntime does not name it.
_agent_of_tools = {"name": "?"}


def _ran(runtime: ToolRuntime, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    agent = cc.current_agent.get() if cc.current_agent.get() != "?" else _agent_of_tools["name"]
    cc.record(name, arguments, outcome, agent, tool_call_id=runtime.tool_call_id, **extra)


@tool
def multiply(a: int, b: int, runtime: ToolRuntime) -> int:
    """Multiply two integers."""
    _ran(runtime, "multiply", {"a": a, "b": b})
    return a * b


@tool
def add(a: int, b: int, runtime: ToolRuntime) -> int:
    """Add two integers."""
    _ran(runtime, "add", {"a": a, "b": b})
    return a + b


@tool
def lookup_weather(city: str, runtime: ToolRuntime) -> str:
    """Current weather in a city."""
    _ran(runtime, "lookup_weather", {"city": city})
    return {"Paris": "sunny, 21 C", "London": "rain, 14 C"}.get(city, "unknown")


@tool
def convert_temperature(celsius: int, runtime: ToolRuntime) -> str:
    """Celsius to Fahrenheit."""
    _ran(runtime, "convert_temperature", {"celsius": celsius})
    return f"{celsius * 9 / 5 + 32:.1f} F"


@tool
def fetch_url(url: str, runtime: ToolRuntime) -> str:
    """Fetch a URL."""
    _ran(runtime, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
    raise ConnectionError("network unreachable")


@tool
def delete_file(path: str, runtime: ToolRuntime) -> str:
    """Delete a file."""
    _ran(runtime, "delete_file", {"path": path})
    return f"deleted {path}"


@tool
def lookup(term: str, runtime: ToolRuntime) -> str:
    """Encyclopedia lookup."""
    _ran(runtime, "lookup", {"term": term})
    return f"{term}: a statically typed functional language"


@wrap_tool_call
def no_deletes(request: Any, handler: Callable[[Any], Any]) -> Any:
    """The application's policy: the agent may not delete files."""
    if request.tool_call["name"] == "delete_file":
        return ToolMessage(
            content="blocked by policy: delete_file is not allowed for this agent",
            tool_call_id=request.tool_call["id"],
            name="delete_file",
            status="error",
        )
    return handler(request)


def _model(server: cc.ScriptedOpenAI, **options: Any) -> ChatOpenAI:
    return ChatOpenAI(model="scripted-model", base_url=server.base_url, api_key="scripted", max_retries=0, **options)


def _agent(server: cc.ScriptedOpenAI, name: str, tools: list[Any], model_options: dict[str, Any] | None = None,
           **options: Any) -> Any:
    _agent_of_tools["name"] = name
    return create_agent(_model(server, **(model_options or {})), tools=tools, name=name, **options)


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


# -- scenarios ----------------------------------------------------------------------------

T, R = cc.tool_call, cc.reply


def single_tool(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1")]), R("10 times 5 is 50."))
    _agent(server, "calculator", [multiply, add]).invoke(_ask("What is 10 times 5?"), _traced())


def single_tool_streaming(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1")]), R("10 times 5 is 50."))
    _agent(server, "calculator", [multiply, add], model_options={"streaming": True}).invoke(_ask("What is 10 times 5?"),
                                                                                            _traced())


def no_tools(server: cc.ScriptedOpenAI) -> None:
    server.script(R("Hello! How can I help?"))
    _agent(server, "calculator", [multiply, add]).invoke(_ask("Hi there"), _traced())


def parallel_tools(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_paris"), T("lookup_weather", {"city": "London"}, "call_weather_london")]),
        R("Paris is sunny, London rainy."),
    )
    _agent(server, "weather_agent", [lookup_weather]).invoke(_ask("Weather in Paris and London?"), _traced())


def sequential_chain(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_1")]),
        R(tool_calls=[T("convert_temperature", {"celsius": 21}, "call_convert_1")]),
        R("Paris is sunny, 69.8 F."),
    )
    _agent(server, "weather_agent", [lookup_weather, convert_temperature]).invoke(_ask("Paris weather in Fahrenheit?"),
                                                                                 _traced())


def repeated_tool(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_1")]),
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_2")]),
        R("Still sunny in Paris."),
    )
    _agent(server, "weather_agent", [lookup_weather]).invoke(_ask("Paris weather, and check again?"), _traced())


def tool_error(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")]))
    _agent(server, "browser", [fetch_url]).invoke(_ask("Fetch https://example.invalid/"), _traced())


def unknown_tool(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("get_stock_price", {"symbol": "ACME"}, "call_stock_1")]), R("I have no stock tool."))
    _agent(server, "calculator", [multiply, add]).invoke(_ask("Price of ACME?"), _traced())
    cc.add_refused("get_stock_price", {"symbol": "ACME"}, "calculator", "not a valid tool", "unknown_tool", tool_call_id="call_stock_1")


def invalid_arguments(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("multiply", {"a": 10, "b": "five"}, "call_mul_bad_1")]),
        R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_2")]),
        R("10 times 5 is 50."),
    )
    _agent(server, "calculator", [multiply, add]).invoke(_ask("What is 10 times five?"), _traced())
    _insert_refused_first("multiply", {"a": 10, "b": "five"}, "calculator", "b: not a valid integer (ValidationError)",
                          "invalid_arguments", "call_mul_bad_1")


def _insert_refused_first(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, call_id: str) -> None:
    """Add a refused call before what ran: the model asked for it first, and the tools ran after."""
    entries = cc.truth_snapshot()
    cc.reset_truth()
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=call_id)
    for entry in entries:
        extra = {k: v for k, v in entry.items() if k not in ("seq", "name", "arguments", "outcome", "agent")}
        cc.record(entry["name"], entry["arguments"], entry["outcome"], entry["agent"], **extra)


def blocked_middleware_guard(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_1")]), R("I am not allowed to delete files."))
    _agent(server, "janitor", [delete_file], middleware=[no_deletes]).invoke(_ask("Delete /srv/scratch.txt"), _traced())
    cc.add_refused("delete_file", {"path": "/srv/scratch.txt"}, "janitor", "wrap_tool_call middleware returned an error ToolMessage",
                   "policy_guard", tool_call_id="call_delete_1")


def blocked_tool_call_limit(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1"), T("multiply", {"a": 3, "b": 4}, "call_mul_2")]),
        R("10 times 5 is 50; I may not multiply again."),
    )
    limiter = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    _agent(server, "calculator", [multiply], middleware=[limiter]).invoke(_ask("10 times 5, and 3 times 4?"), _traced())
    cc.add_refused("multiply", {"a": 3, "b": 4}, "calculator", "ToolCallLimitMiddleware(run_limit=1): limit reached", "limit",
                   tool_call_id="call_mul_2")


def blocked_approval_rejected(server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("delete_file", {"path": "/srv/report.txt"}, "call_delete_1")]), R("Understood, I kept the report."))
    agent = _agent(server, "janitor", [delete_file], middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})],
                   checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "thread-approval-1"}}
    first = agent.invoke(_ask("Delete /srv/report.txt"), _traced(config))
    assert "__interrupt__" in first, "the approval middleware did not interrupt"
    agent.invoke(Command(resume={"decisions": [{"type": "reject", "message": "Keep the report."}]}), _traced(config))
    cc.add_refused("delete_file", {"path": "/srv/report.txt"}, "janitor", "HumanInTheLoopMiddleware: rejected ('Keep the report.')",
                   "approval_denied", tool_call_id="call_delete_1")


def delegation(server: cc.ScriptedOpenAI) -> None:
    researcher = create_agent(_model(server), tools=[lookup], name="researcher")

    @tool
    def ask_researcher(question: str, runtime: ToolRuntime) -> str:
        """Ask the research agent."""
        cc.record("ask_researcher", {"question": question}, "ok", "coordinator", tool_call_id=runtime.tool_call_id,
                  delegates_to="researcher")
        token = cc.current_agent.set("researcher")
        try:
            result = researcher.invoke(_ask(question))  # the handler comes along in LangChain's run context
        finally:
            cc.current_agent.reset(token)
        return result["messages"][-1].content

    server.script(
        R(tool_calls=[T("ask_researcher", {"question": "What is OCaml?"}, "call_research_1")]),
        R(tool_calls=[T("lookup", {"term": "OCaml"}, "call_lookup_1")]),
        R("OCaml is a statically typed functional language."),
        R("The researcher says OCaml is a statically typed functional language."),
    )
    _agent(server, "coordinator", [ask_researcher]).invoke(_ask("Tell me about OCaml."), _traced())


def multi_turn(server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1")]),
        R("10 times 5 is 50."),
        R(tool_calls=[T("add", {"a": 50, "b": 7}, "call_add_1")]),
        R("50 plus 7 is 57."),
    )
    agent = _agent(server, "calculator", [multiply, add], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "thread-multi-turn-1"}}
    for run, question in enumerate(("What is 10 times 5?", "Add 7 to that."), start=1):
        start = len(cc.truth_snapshot())
        # langfuse_session_id in the metadata: the handler's documented way to put both runs in one session
        agent.invoke(_ask(question), _traced(config, langfuse_session_id="lflc-conversation-1"))
        with cc._lock:
            for entry in cc._truth[start:]:
                entry["run"] = run


SCENARIOS: list[tuple[str, str, Callable[[cc.ScriptedOpenAI], None], dict[str, Any]]] = [
    ("single_tool", "one multiply(a=10, b=5) call, then a text answer", single_tool, {}),
    ("single_tool_streaming", "single_tool with ChatOpenAI(streaming=True)", single_tool_streaming, {}),
    ("no_tools", "a text answer, no tool call", no_tools, {}),
    ("parallel_tools", "two lookup_weather calls in one model turn (ToolNode runs them concurrently)", parallel_tools,
     {"notes": "seq is start order; it may differ between reruns"}),
    ("sequential_chain", "lookup_weather in turn 1, convert_temperature in turn 2", sequential_chain, {}),
    ("repeated_tool", "lookup_weather(Paris) twice, in two model turns", repeated_tool, {}),
    ("tool_error", "fetch_url raises ConnectionError; create_agent's default tool error handling re-raises, so the run fails",
     tool_error, {"notes": "default handle_tool_errors only turns invalid-argument errors into ToolMessages"}),
    ("unknown_tool", "the model asks for get_stock_price, which the agent does not have", unknown_tool,
     {"notes": "ToolNode answers 'Error: get_stock_price is not a valid tool' without running anything"}),
    ("invalid_arguments", "multiply(b='five') fails pydantic validation; the model retries with b=5", invalid_arguments,
     {"notes": "the default error handler turns the validation error into an error ToolMessage"}),
    ("blocked_middleware_guard", "a wrap_tool_call middleware refuses delete_file", blocked_middleware_guard, {}),
    ("blocked_tool_call_limit", "ToolCallLimitMiddleware(run_limit=1): of two parallel multiply calls the second is blocked",
     blocked_tool_call_limit, {"notes": "exit_behavior='continue': the blocked call gets an error ToolMessage"}),
    ("blocked_approval_rejected", "HumanInTheLoopMiddleware interrupts before delete_file; the resume rejects it",
     blocked_approval_rejected, {"notes": "two invocations on one thread (interrupt, then Command(resume=reject))"}),
    ("delegation", "coordinator's tool ask_researcher invokes the researcher agent, which calls lookup", delegation,
     {"delegation": {"parent_agent": "coordinator", "child_agent": "researcher", "via_tool": "ask_researcher",
                     "delegating_call_id": "call_research_1", "child_call_ids": ["call_lookup_1"]},
      "notes": "agent as tool: the researcher graph runs inside the ask_researcher tool"}),
    ("multi_turn", "two user turns on one checkpointer thread, one Langfuse session (lflc-conversation-1)", multi_turn, {}),
]


def run(scenario: str, description: str, body: Callable[[cc.ScriptedOpenAI], None], truth: dict[str, Any]) -> None:
    span_exporter.clear()
    cc.reset_truth()
    run_outcome, run_error = "ok", None
    with cc.ScriptedOpenAI() as server:
        try:
            body(server)
        except Exception as exc:  # the run's failure is part of the truth
            run_outcome, run_error = "error", f"{type(exc).__name__}: {exc}"
            traceback.print_exc(limit=2)
        assert server.left() == 0, f"{scenario}: {server.left()} scripted answers unused"
    langfuse.flush()  # the processor batches: hand every ended span to the exporter first
    spans = list(span_exporter.get_finished_spans())
    executions = cc.truth_snapshot()
    annotate(executions, spans, [], _execution_span)
    _mark_refused_tool_spans(executions)
    cc.save_scenario(
        FRAMEWORK,
        scenario,
        spans,
        {
            "description": description,
            "run_outcome": run_outcome,
            "run_error": run_error,
            "tool_executions": executions,
            "delegation": truth.get("delegation", {}),
            "notes": truth.get("notes", ""),
        },
    )


def _execution_span(span: Any, entry: dict[str, Any]) -> str | None:
    """A tool observation of this entry: its output names the call id, or (errors have no output) its input has its arguments."""
    attributes = span.attributes or {}
    if attributes.get("langfuse.observation.type") != "tool" or span.name != entry["name"]:
        return None
    if entry.get("tool_call_id") and entry["tool_call_id"] in str(attributes.get("langfuse.observation.output", "")):
        return "langfuse.observation.output contains the call id"
    if "langfuse.observation.output" not in attributes and _arguments_of(attributes) == entry["arguments"]:
        return "tool name and langfuse.observation.input arguments (no output on the span)"
    return None


def _arguments_of(attributes: dict[str, Any]) -> Any:
    text = str(attributes.get("langfuse.observation.input", ""))
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, str):  # the handler records LangChain's input_str, a JSON string or a Python repr
        import ast

        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    return value


def _mark_refused_tool_spans(executions: list[dict[str, Any]]) -> None:
    """A refused call whose tool span exists anyway (validation failed inside the tool): say so, it did not run."""
    for entry in executions:
        if entry["outcome"] == "refused" and entry.get("execution_span"):
            entry["tool_span_despite_refusal"] = entry.pop("execution_span")
            entry["execution_span"] = None


if __name__ == "__main__":
    chosen = set(sys.argv[1:])
    for scenario, description, body, truth in SCENARIOS:
        if not chosen or scenario in chosen:
            run(scenario, description, body, truth)
    langfuse.shutdown()
