"""Capture MLflow tracing over a LangChain agent: ``mlflow.langchain.autolog()``, exported over OTLP.

``mlflow.langchain.autolog()`` hooks MLflow's callback tracer into LangChain; MLflow sends its
spans over OTLP to ``otlp_receiver`` on 127.0.0.1 (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``),
never to a tracking server (``MLFLOW_TRACKING_URI`` points at a closed port). The agent is
langchain's ``create_agent(ChatOpenAI(base_url=ScriptedOpenAI), tools, name=...)`` (LangGraph
underneath), and for the ``react_*`` scenarios LangGraph's prebuilt ``create_react_agent`` over a
``ToolNode(handle_tool_errors=True)`` (deprecated in LangGraph 1.x, still common); each tool records
the call id from ``ToolRuntime`` and the agent it was built for.
Written to ``tests/fixtures/corpus/mlflow_langchain/``.

Run:  /tmp/capture-mlflow_langchain/bin/python tests/capture/mlflow_langchain/capture.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("MLFLOW_", "OPENAI_", "OTEL_", "DATABRICKS_", "LANGSMITH_", "LANGCHAIN_"))]:
    del os.environ[key]

import capture_common as cc  # noqa: E402
import otlp_receiver  # noqa: E402
from capture_common import reply  # noqa: E402

receiver = otlp_receiver.OtlpReceiver().__enter__()
os.environ.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
                  OTEL_SERVICE_NAME="corpus-mlflow-langchain", MLFLOW_TRACKING_URI="http://127.0.0.1:9")

import mlflow  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallLimitMiddleware, ToolErrorMiddleware  # noqa: E402
from langchain.tools import ToolRuntime, tool  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import ToolNode, create_react_agent  # noqa: E402
from langgraph.types import Command  # noqa: E402

FRAMEWORK = "mlflow_langchain"
mlflow.langchain.autolog()

server = cc.ScriptedOpenAI()
_scenario = ""
Result = dict[str, Any]


def cid(name: str, n: int = 1) -> str:
    return f"call_mlflc_{_scenario}_{name}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    return cc.tool_call(name, arguments, cid(name, n))


def llm(streaming: bool = False) -> ChatOpenAI:
    return ChatOpenAI(model="scripted-model", base_url=server.base_url, api_key="x", max_retries=0, streaming=streaming)


def tools_for(agent: str) -> dict[str, Any]:
    """Fresh tools that record ``agent`` as the agent that ran them."""

    def ran(runtime: ToolRuntime, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
        cc.record(name, arguments, outcome, agent, tool_call_id=runtime.tool_call_id, tool_call_id_source="script", **extra)

    @tool
    def multiply(a: int, b: int, runtime: ToolRuntime) -> int:
        """Multiply two integers."""
        ran(runtime, "multiply", {"a": a, "b": b})
        return a * b

    @tool
    def lookup_weather(city: str, runtime: ToolRuntime) -> str:
        """Current weather for a city."""
        ran(runtime, "lookup_weather", {"city": city})
        return {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}.get(city, "unknown")

    @tool
    def get_user_city(user: str, runtime: ToolRuntime) -> str:
        """The city a user lives in."""
        ran(runtime, "get_user_city", {"user": user})
        return {"alice": "Lyon"}.get(user, "Paris")

    @tool
    def delete_file(path: str, runtime: ToolRuntime) -> str:
        """Delete a file."""
        ran(runtime, "delete_file", {"path": path})
        return f"deleted {path}"

    @tool
    def fetch_url(url: str, runtime: ToolRuntime) -> str:
        """Fetch a URL. The primary host is down."""
        ran(runtime, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
        raise ConnectionError("network unreachable")

    return {t.name: t for t in (multiply, lookup_weather, get_user_city, fetch_url, delete_file)}


def agent(name: str, tools: list[str], **options: Any) -> Any:
    owned = tools_for(name)
    return create_agent(options.pop("model", llm()), [owned[t] for t in tools], name=name, **options)


def react(name: str, tools: list[str]) -> Any:
    owned = tools_for(name)
    return create_react_agent(llm(), ToolNode([owned[t] for t in tools], handle_tool_errors=True), name=name)


def ask(graph: Any, question: str, **config: Any) -> Any:
    return graph.invoke({"messages": [HumanMessage(question)]}, config=config or None)


def refused(name: str, arguments: dict[str, Any], agent_name: str, reason: str, kind: str, call_id: str) -> None:
    """A call create_agent's tool node answered without running it; the model asked for it first."""
    cc.add_refused(name, arguments, agent_name, reason, kind, tool_call_id=call_id, tool_call_id_source="script")
    with cc._lock:
        cc._truth.insert(0, cc._truth.pop())
        for seq, entry in enumerate(cc._truth, start=1):
            entry["seq"] = seq


def single_tool() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    ask(agent("calculator", ["multiply"]), "What is 10 times 5?")
    return {}


def single_tool_streaming() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    calculator = agent("calculator", ["multiply"], model=llm(streaming=True))
    for _ in calculator.stream({"messages": [HumanMessage("What is 10 times 5?")]}, stream_mode="messages"):
        pass
    return {"notes": "ChatOpenAI(streaming=True) and agent.stream(stream_mode='messages')."}


def sequential_chain() -> Result:
    server.script(reply(tool_calls=[call("get_user_city", {"user": "alice"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Lyon"})]),
                  reply("Alice is in Lyon: cloudy, 18C."))
    ask(agent("weather_assistant", ["get_user_city", "lookup_weather"]), "What is the weather where alice lives?")
    return {}


def parallel_tools() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 3, "b": 4}), call("lookup_weather", {"city": "Paris"})]),
                  reply("3*4 is 12; Paris is sunny, 21C."))
    ask(agent("assistant", ["multiply", "lookup_weather"]), "3*4, and the weather in Paris?")
    return {"notes": "Both calls of one model turn; the tool node runs them in parallel (Send per call)."}


def repeated_tool() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1)]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"}, 2)]),
                  reply("Paris is sunny, London rainy."))
    ask(agent("weather_assistant", ["lookup_weather"]), "Weather in Paris, then London?")
    return {}


def no_tools() -> Result:
    server.script(reply("Hello! How can I help?"))
    ask(agent("calculator", ["multiply"]), "Hi there")
    return {}


def tool_error() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"})]),
                  reply("The page could not be fetched: the host is unreachable."))
    ask(agent("fetcher", ["fetch_url"], middleware=[ToolErrorMiddleware(on_error=lambda exc, request: f"Error: {exc}")]),
        "Fetch https://primary.example/notes")
    return {"notes": "ToolErrorMiddleware turns the exception into an error tool message; the run goes on."}


def unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("I cannot format disks; 6*7 is 42."))
    ask(agent("calculator", ["multiply"]), "Format the disk, then 6*7")
    refused("format_disk", {"drive": "C:"}, "calculator", "not a valid tool (the tool node answers with an error message)",
            "unknown_tool", cid("format_disk"))
    return {}


def invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten"}, 1)]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
                  reply("10 times 5 is 50."))
    ask(agent("calculator", ["multiply"]), "ten times 5")
    refused("multiply", {"a": "ten"}, "calculator", "arguments fail the tool's schema (the tool node answers with the "
            "validation error)", "invalid_arguments", cid("multiply", 1))
    return {}


def blocked_tool_call_limit() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 1), call("multiply", {"a": 3, "b": 4}, 2)]),
                  reply("10 times 5 is 50; I may not multiply again."))
    limiter = ToolCallLimitMiddleware(run_limit=1, exit_behavior="continue")
    ask(agent("calculator", ["multiply"], middleware=[limiter]), "10 times 5, and 3 times 4?")
    cc.add_refused("multiply", {"a": 3, "b": 4}, "calculator", "ToolCallLimitMiddleware(run_limit=1): limit reached",
                   "limit", tool_call_id=cid("multiply", 2), tool_call_id_source="script")
    return {"notes": "ToolCallLimitMiddleware(run_limit=1, exit_behavior='continue'): of two calls in one turn the "
                     "second is refused, the model is told."}


def blocked_approval_rejected() -> Result:
    server.script(reply(tool_calls=[call("delete_file", {"path": "/srv/report.txt"})]),
                  reply("Understood, I kept the report."))
    janitor = agent("janitor", ["delete_file"], checkpointer=InMemorySaver(),
                    middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})])
    thread = {"configurable": {"thread_id": "mlflc-approval-1"}}
    first = ask(janitor, "Delete /srv/report.txt", **thread)
    if "__interrupt__" not in first:
        raise AssertionError("the approval middleware did not interrupt")
    janitor.invoke(Command(resume={"decisions": [{"type": "reject", "message": "Keep the report."}]}), config=thread)
    cc.add_refused("delete_file", {"path": "/srv/report.txt"}, "janitor", "HumanInTheLoopMiddleware: rejected",
                   "approval_denied", tool_call_id=cid("delete_file"), tool_call_id_source="script")
    return {"notes": "HumanInTheLoopMiddleware: the first invoke interrupts before delete_file, the second resumes "
                     "with Command(resume=reject) on the same thread (two traces)."}


def multi_turn() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, 1)]), reply("6 times 7 is 42."),
                  reply(tool_calls=[call("multiply", {"a": 42, "b": 2}, 2)]), reply("Doubled, that is 84."))
    calculator = agent("calculator", ["multiply"], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "mlflc-conversation-1"}}
    ask(calculator, "What is 6 times 7?", **thread)
    ask(calculator, "And doubled?", **thread)
    return {"notes": "Two invocations on one checkpointer thread (thread_id mlflc-conversation-1)."}


def delegation() -> Result:
    weather_agent = agent("weather_agent", ["lookup_weather"])

    @tool
    def ask_weather_agent(question: str, runtime: ToolRuntime) -> str:
        """Ask the weather agent."""
        cc.record("ask_weather_agent", {"question": question}, "ok", "orchestrator", tool_call_id=runtime.tool_call_id,
                  tool_call_id_source="script", agent_tool=True)
        return ask(weather_agent, question)["messages"][-1].content

    server.script(reply(tool_calls=[call("ask_weather_agent", {"question": "Weather in Paris?"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply("Paris: sunny, 21C."),
                  reply("The weather agent says Paris is sunny, 21C."))
    ask(create_agent(llm(), [ask_weather_agent], name="orchestrator"), "What is the weather in Paris?")
    return {"delegation": {"type": "agent_as_tool", "parent_agent": "orchestrator", "child_agent": "weather_agent",
                           "via_tool": "ask_weather_agent"},
            "notes": "A tool of the orchestrator agent invokes the weather_agent agent."}


def react_single_tool() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
    ask(react("calculator", ["multiply"]), "What is 10 times 5?")
    return {"notes": "LangGraph's prebuilt create_react_agent."}


def react_parallel_tools() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}, 1), call("lookup_weather", {"city": "London"}, 2)]),
                  reply("Paris is sunny, London rainy."))
    ask(react("weather_assistant", ["lookup_weather"]), "Weather in Paris and London?")
    return {"notes": "create_react_agent; two calls of one tool in one model turn, run in parallel."}


def react_tool_error() -> Result:
    server.script(reply(tool_calls=[call("fetch_url", {"url": "https://primary.example/notes"})]),
                  reply("The page could not be fetched: the host is unreachable."))
    ask(react("fetcher", ["fetch_url"]), "Fetch https://primary.example/notes")
    return {"notes": "create_react_agent; ToolNode(handle_tool_errors=True) hands the error to the model."}


def react_unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("I cannot format disks; 6*7 is 42."))
    ask(react("calculator", ["multiply"]), "Format the disk, then 6*7")
    refused("format_disk", {"drive": "C:"}, "calculator", "not a valid tool (ToolNode answers with an error message)",
            "unknown_tool", cid("format_disk"))
    return {"notes": "create_react_agent."}


def react_invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten"}, 1)]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
                  reply("10 times 5 is 50."))
    ask(react("calculator", ["multiply"]), "ten times 5")
    refused("multiply", {"a": "ten"}, "calculator", "arguments fail the tool's schema (ToolNode answers with the "
            "validation error)", "invalid_arguments", cid("multiply", 1))
    return {"notes": "create_react_agent."}


SCENARIOS: dict[str, Callable[[], Result]] = {
    fn.__name__: fn for fn in (single_tool, single_tool_streaming, sequential_chain, parallel_tools, repeated_tool,
                               no_tools, tool_error, unknown_tool, invalid_arguments, blocked_tool_call_limit,
                               blocked_approval_rejected, multi_turn, delegation, react_single_tool, react_parallel_tools,
                               react_tool_error, react_unknown_tool, react_invalid_arguments)
}


def flush() -> None:
    provider = mlflow.tracing.provider.provider.get()  # made at the first span
    if provider is not None:
        provider.force_flush()


if __name__ == "__main__":
    with server:
        for name in sys.argv[1:] or list(SCENARIOS):
            _scenario = name
            cc.reset_truth()
            flush()
            receiver.clear()
            extra = SCENARIOS[name]()
            if server.left():
                raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
            flush()
            otlp_receiver.save(FRAMEWORK, name, receiver.document(),
                               {"tool_executions": cc.truth_snapshot(), "delegation": extra.get("delegation", {}),
                                "notes": extra.get("notes", "")})
    receiver.__exit__()
