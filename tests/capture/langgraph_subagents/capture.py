"""Capture LangGraph sub-agent, middleware and refusal traces (OpenInference LangChain instrumentation).

What the shared LangGraph corpus lacks: a ``langgraph-supervisor`` supervisor handing off to
two worker agents that each call their own tool, an agent called as a tool by another agent,
langchain's ``create_agent`` middleware that blocks calls (a run-level tool-call limit, a
human-in-the-loop interrupt answered with a rejection, a ``wrap_tool_call`` guard), and the
unknown-tool and invalid-arguments refusals of ``create_agent``.

Offline: every model is a ``FakeMessagesListChatModel`` whose ``bind_tools`` returns itself and
which answers with scripted ``AIMessage(tool_calls=...)``; the call ids are chosen here. Ground
truth is recorded inside the tool bodies, with the call id from ``ToolRuntime``; the agent a
tool records is the one it was built for (``ToolRuntime`` names no agent).

Run:  /tmp/capture-langgraph_subagents/bin/python tests/capture/langgraph_subagents/capture.py
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallLimitMiddleware, ToolErrorMiddleware, wrap_tool_call  # noqa: E402
from langchain.tools import ToolRuntime, tool  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
from langgraph_supervisor import create_supervisor  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402

FRAMEWORK = "langgraph_subagents"
provider, exporter = cc.tracing("corpus-langgraph-subagents")
LangChainInstrumentor().instrument(tracer_provider=provider)


class ScriptedChat(FakeMessagesListChatModel):
    """Answers with the scripted messages in order, once (the parent class cycles); tools bind to itself."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if self.i >= len(self.responses):
            raise AssertionError(f"scripted model has no answer left after {self.i}")
        message = self.responses[self.i]
        self.i += 1
        return ChatResult(generations=[ChatGeneration(message=message)])


def scripted(*turns: AIMessage) -> ScriptedChat:
    return ScriptedChat(responses=list(turns))


def calls(*tool_calls: tuple[str, dict[str, Any], str], content: str = "") -> AIMessage:
    return AIMessage(content=content, tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in tool_calls])


def say(text: str) -> AIMessage:
    return AIMessage(content=text)


def refuse(position: int, *args: Any, **extra: Any) -> None:
    """``cc.add_refused``, placed where the model asked for the call among the executions.

    A scenario adds its refusals after the run; ``position`` is how many truth entries came
    before the refused call, in the order the model requested them.
    """
    cc.add_refused(*args, **extra)
    _place_last_at(position)


def handoff(position: int, target: str, call_id: str) -> None:
    """A ``transfer_to_<target>`` call of the supervisor: it ran, but its body is langgraph-supervisor's."""
    cc.record(f"transfer_to_{target}", {}, "ok", "supervisor", tool_call_id=call_id, handoff=True)
    _place_last_at(position)


def _place_last_at(position: int) -> None:
    with cc._lock:
        cc._truth.insert(position, cc._truth.pop())
        for seq, entry in enumerate(cc._truth, start=1):
            entry["seq"] = seq


# -- tools, one set per agent -----------------------------------------------------------------


def tools_for(agent: str) -> dict[str, Callable[..., Any]]:
    @tool
    def multiply(a: int, b: int, runtime: ToolRuntime) -> int:
        """Multiply two integers."""
        cc.record("multiply", {"a": a, "b": b}, "ok", agent, tool_call_id=runtime.tool_call_id)
        return a * b

    @tool
    def add(a: int, b: int, runtime: ToolRuntime) -> int:
        """Add two integers."""
        cc.record("add", {"a": a, "b": b}, "ok", agent, tool_call_id=runtime.tool_call_id)
        return a + b

    @tool
    def lookup_weather(city: str, runtime: ToolRuntime) -> str:
        """Weather for a city."""
        cc.record("lookup_weather", {"city": city}, "ok", agent, tool_call_id=runtime.tool_call_id)
        return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")

    @tool
    def fetch_url(url: str, runtime: ToolRuntime) -> str:
        """Fetch a URL (always fails: no network here)."""
        cc.record("fetch_url", {"url": url}, "error", agent, tool_call_id=runtime.tool_call_id,
                  error="ConnectionError: network unreachable")
        raise ConnectionError("network unreachable")

    @tool
    def delete_file(path: str, runtime: ToolRuntime) -> str:
        """Delete a file (a person must approve)."""
        cc.record("delete_file", {"path": path}, "ok", agent, tool_call_id=runtime.tool_call_id)
        return f"deleted {path}"

    return {t.name: t for t in (multiply, add, lookup_weather, fetch_url, delete_file)}


# -- scenarios --------------------------------------------------------------------------------


def single_tool() -> None:
    agent = create_agent(scripted(calls(("multiply", {"a": 10, "b": 5}, "call_mul_1")), say("50")),
                         [tools_for("calculator")["multiply"]], name="calculator")
    agent.invoke({"messages": [("user", "What is 10 times 5?")]})


def parallel_tools() -> None:
    own = tools_for("calculator")
    agent = create_agent(scripted(calls(("multiply", {"a": 3, "b": 4}, "call_mul_1"), ("add", {"a": 3, "b": 4}, "call_add_1")),
                                  say("12 and 7")),
                         [own["multiply"], own["add"]], name="calculator")
    agent.invoke({"messages": [("user", "3*4 and 3+4?")]})


def sequential_chain() -> None:
    own = tools_for("planner")
    agent = create_agent(scripted(calls(("lookup_weather", {"city": "Paris"}, "call_weather_1")),
                                  calls(("multiply", {"a": 21, "b": 2}, "call_mul_1")), say("Paris is sunny; 42")),
                         [own["lookup_weather"], own["multiply"]], name="planner")
    agent.invoke({"messages": [("user", "Weather in Paris, and double the temperature")]})


def tool_error() -> None:
    # create_agent's default tool-error handling re-raises a plain exception: the run fails.
    agent = create_agent(scripted(calls(("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")),
                                  say("The page could not be fetched.")),
                         [tools_for("fetcher")["fetch_url"]], name="fetcher")
    agent.invoke({"messages": [("user", "Fetch https://example.invalid/")]})


def tool_error_handled() -> None:
    # ToolErrorMiddleware returns the exception to the model as an error ToolMessage; the run goes on.
    agent = create_agent(scripted(calls(("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")),
                                  calls(("lookup_weather", {"city": "Paris"}, "call_weather_1")),
                                  say("The page could not be fetched; Paris is sunny.")),
                         [tools_for("fetcher")["fetch_url"], tools_for("fetcher")["lookup_weather"]],
                         middleware=[ToolErrorMiddleware(on_error=lambda exc, request: f"Error: {exc}")], name="fetcher")
    agent.invoke({"messages": [("user", "Fetch https://example.invalid/, then the weather in Paris")]})


def unknown_tool() -> None:
    agent = create_agent(scripted(calls(("format_disk", {"drive": "C:"}, "call_unknown_1")),
                                  calls(("multiply", {"a": 6, "b": 7}, "call_mul_1")), say("42")),
                         [tools_for("calculator")["multiply"]], name="calculator")
    agent.invoke({"messages": [("user", "Format the disk, then 6*7")]})
    refuse(0, "format_disk", {"drive": "C:"}, "calculator", "no tool of that name", "unknown_tool",
           tool_call_id="call_unknown_1")


def invalid_arguments() -> None:
    agent = create_agent(scripted(calls(("multiply", {"a": "ten", "b": 5}, "call_mul_bad")),
                                  calls(("multiply", {"a": 10, "b": 5}, "call_mul_1")), say("50")),
                         [tools_for("calculator")["multiply"]], name="calculator")
    agent.invoke({"messages": [("user", "ten times 5")]})
    refuse(0, "multiply", {"a": "ten", "b": 5}, "calculator", "arguments fail the tool's schema (ValidationError)",
           "invalid_arguments", tool_call_id="call_mul_bad")


def blocked_tool_call_limit() -> None:
    # run_limit=1 on multiply: of two calls in one turn, the first runs, the second is blocked.
    agent = create_agent(
        scripted(calls(("multiply", {"a": 2, "b": 3}, "call_mul_1"), ("multiply", {"a": 4, "b": 5}, "call_mul_2")),
                 say("6; the second product was not allowed")),
        [tools_for("calculator")["multiply"]],
        middleware=[ToolCallLimitMiddleware(tool_name="multiply", run_limit=1, exit_behavior="continue")],
        name="calculator",
    )
    agent.invoke({"messages": [("user", "2*3 and 4*5")]})
    refuse(1, "multiply", {"a": 4, "b": 5}, "calculator", "ToolCallLimitMiddleware run_limit=1 for multiply", "limit",
           tool_call_id="call_mul_2")


def blocked_wrap_tool_call() -> None:
    @wrap_tool_call
    def no_deletes(request: Any, handler: Callable[[Any], Any]) -> Any:
        """Policy guard: delete_file never runs; everything else goes through."""
        call = request.tool_call
        if call["name"] == "delete_file":
            return ToolMessage(content="Blocked by policy: deleting files is not allowed.", tool_call_id=call["id"],
                               name=call["name"], status="error")
        return handler(request)

    own = tools_for("janitor")
    agent = create_agent(
        scripted(calls(("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_1")),
                 calls(("lookup_weather", {"city": "Paris"}, "call_weather_1")), say("Not deleted; Paris is sunny.")),
        [own["delete_file"], own["lookup_weather"]], middleware=[no_deletes], name="janitor",
    )
    agent.invoke({"messages": [("user", "Delete /srv/scratch.txt, then the weather in Paris")]})
    refuse(0, "delete_file", {"path": "/srv/scratch.txt"}, "janitor", "wrap_tool_call guard returned an error ToolMessage",
           "policy_guard", tool_call_id="call_delete_1")


def _hitl(decision: dict[str, Any]) -> None:
    agent = create_agent(
        scripted(calls(("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_1")),
                 say("Deleted." if decision["type"] == "approve" else "I was not allowed to delete it.")),
        [tools_for("janitor")["delete_file"]],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})],
        checkpointer=InMemorySaver(), name="janitor",
    )
    config = {"configurable": {"thread_id": f"hitl-{decision['type']}"}}
    first = agent.invoke({"messages": [("user", "Delete /srv/scratch.txt")]}, config)
    if "__interrupt__" not in first:
        raise AssertionError("the human-in-the-loop middleware did not interrupt")
    agent.invoke(Command(resume={"decisions": [decision]}), config)


def blocked_hitl_rejected() -> None:
    _hitl({"type": "reject", "message": "scratch file is still in use"})
    refuse(0, "delete_file", {"path": "/srv/scratch.txt"}, "janitor",
           "HumanInTheLoopMiddleware interrupt answered with a reject decision", "approval_denied",
           tool_call_id="call_delete_1")


def hitl_approved() -> None:
    _hitl({"type": "approve"})


def delegation_supervisor() -> dict[str, Any]:
    math_agent = create_agent(scripted(calls(("multiply", {"a": 6, "b": 7}, "call_mul_1")), say("6*7 is 42")),
                              [tools_for("math_agent")["multiply"]], name="math_agent")
    weather_agent = create_agent(scripted(calls(("lookup_weather", {"city": "Paris"}, "call_weather_1")), say("Paris: sunny")),
                                 [tools_for("weather_agent")["lookup_weather"]], name="weather_agent")
    supervisor_model = scripted(
        calls(("transfer_to_math_agent", {}, "call_handoff_math")),
        calls(("transfer_to_weather_agent", {}, "call_handoff_weather")),
        say("6*7 is 42 and Paris is sunny."),
    )
    workflow = create_supervisor([math_agent, weather_agent], model=supervisor_model, supervisor_name="supervisor")
    final = workflow.compile(name="supervisor_graph").invoke({"messages": [("user", "What is 6*7, and the weather in Paris?")]})
    # The handoff tools are langgraph-supervisor's own, so the scenario records them, in the
    # order they ran. The library also writes a transfer_back call into the history that no
    # model made and no tool ran; its ids are random, so they are read from the result.
    handoff(0, "math_agent", "call_handoff_math")
    handoff(2, "weather_agent", "call_handoff_weather")
    return {"synthetic_tool_calls_in_history": [
        {"name": call["name"], "tool_call_id": call["id"], "written_as": message.name}
        for message in final["messages"] if isinstance(message, AIMessage)
        for call in message.tool_calls if call["name"] == "transfer_back_to_supervisor"
    ]}


def delegation_agent_as_tool() -> None:
    researcher = create_agent(scripted(calls(("lookup_weather", {"city": "London"}, "call_weather_sub_1")),
                                       say("London: rain, 14C")),
                              [tools_for("researcher")["lookup_weather"]], name="researcher")

    @tool
    def ask_researcher(question: str, runtime: ToolRuntime) -> str:
        """Ask the research agent a question."""
        cc.record("ask_researcher", {"question": question}, "ok", "orchestrator", tool_call_id=runtime.tool_call_id,
                  delegates_to="researcher")
        result = researcher.invoke({"messages": [("user", question)]})
        return result["messages"][-1].content

    orchestrator = create_agent(scripted(calls(("ask_researcher", {"question": "Weather in London?"}, "call_research_1")),
                                         say("It rains in London.")),
                                [ask_researcher], name="orchestrator")
    orchestrator.invoke({"messages": [("user", "What is the weather in London?")]})


def multi_turn() -> None:
    agent = create_agent(
        scripted(calls(("multiply", {"a": 10, "b": 5}, "call_mul_1")), say("50"),
                 calls(("add", {"a": 50, "b": 1}, "call_add_1")), say("51")),
        list(tools_for("calculator").values())[:2], checkpointer=InMemorySaver(), name="calculator",
    )
    config = {"configurable": {"thread_id": "multi-turn-1"}}
    for run, question in enumerate(("What is 10 times 5?", "And plus 1?"), start=1):
        agent.invoke({"messages": [("user", question)]}, config)
        _tag_run(run)


def _tag_run(run: int) -> None:
    with cc._lock:
        for entry in cc._truth:
            entry.setdefault("run", run)


SUPERVISOR_DELEGATION = {
    "parent": "supervisor",
    "children": ["math_agent", "weather_agent"],
    "mechanism": "langgraph-supervisor handoff tools transfer_to_<agent> (Command(goto=..., graph=PARENT))",
    "handoff_call_ids": {"math_agent": "call_handoff_math", "weather_agent": "call_handoff_weather"},
    "child_call_ids": {"math_agent": ["call_mul_1"], "weather_agent": ["call_weather_1"]},
}

SCENARIOS: list[tuple[str, str, Callable[[], dict[str, Any] | None], dict[str, Any], str]] = [
    ("single_tool", "create_agent: multiply(a=10, b=5), then final text", single_tool, {}, ""),
    ("parallel_tools", "create_agent: multiply(3, 4) and add(3, 4) in one model turn, then text", parallel_tools, {},
     "seq is the real start order of the two bodies."),
    ("sequential_chain", "create_agent: lookup_weather(Paris), then multiply(21, 2), then text", sequential_chain, {}, ""),
    ("tool_error", "fetch_url raises; create_agent's default error handling re-raises, so the run fails", tool_error, {}, ""),
    ("tool_error_handled", "fetch_url raises; ToolErrorMiddleware hands the error to the model; then lookup_weather; "
     "then text", tool_error_handled, {}, ""),
    ("unknown_tool", "model asks for format_disk (not a tool of the agent); then multiply(6, 7); then text",
     unknown_tool, {}, ""),
    ("invalid_arguments", "multiply(a='ten', b=5) fails the schema (body never runs); then multiply(10, 5); then text",
     invalid_arguments, {}, ""),
    ("blocked_tool_call_limit", "ToolCallLimitMiddleware(multiply, run_limit=1): two multiply calls in one turn, "
     "the second is blocked", blocked_tool_call_limit, {}, ""),
    ("blocked_wrap_tool_call", "@wrap_tool_call guard blocks delete_file (error ToolMessage, handler never called); "
     "then lookup_weather runs", blocked_wrap_tool_call, {}, ""),
    ("blocked_hitl_rejected", "HumanInTheLoopMiddleware interrupts delete_file; resumed with a reject decision",
     blocked_hitl_rejected, {}, "Two invocations on one thread (checkpointer): the interrupt, then the resume."),
    ("hitl_approved", "HumanInTheLoopMiddleware interrupts delete_file; resumed with an approve decision, so it runs",
     hitl_approved, {}, "Two invocations on one thread (checkpointer): the interrupt, then the resume."),
    ("delegation_supervisor", "langgraph-supervisor: supervisor hands off to math_agent (multiply) and then to "
     "weather_agent (lookup_weather), then answers", delegation_supervisor, SUPERVISOR_DELEGATION,
     "transfer_to_* are langgraph-supervisor's handoff tools (handoff: true), recorded by the scenario since their "
     "body is the library's. transfer_back_to_supervisor is written into the history by the library: no model asked "
     "for it and no tool ran, so it is no tool execution (delegation.synthetic_tool_calls_in_history)."),
    ("delegation_agent_as_tool", "orchestrator's tool ask_researcher invokes the researcher agent, which calls "
     "lookup_weather", delegation_agent_as_tool,
     {"parent": "orchestrator", "child": "researcher", "delegating_tool": "ask_researcher",
      "delegating_call_id": "call_research_1", "child_call_ids": ["call_weather_sub_1"],
      "mechanism": "agent invoked inside a tool body"}, ""),
    ("multi_turn", "two user turns on one thread (checkpointer): multiply(10, 5), then add(50, 1)", multi_turn, {},
     "Each invoke is its own trace; session.id carries the thread_id."),
]


def with_tool_spans(executions: list[dict[str, Any]], spans: list[Any]) -> list[dict[str, Any]]:
    """Each call's tool span, found by the call id its parent ``tools`` span was given.

    A TOOL span carries no call id itself; the ``tools`` node span that ran the call has the
    tool call (with its id) as ``input.value``. An executed call gets ``execution_span``; a
    refused one that still has a tool span (invalid arguments) gets ``tool_span_despite_refusal``.
    """
    by_parent: dict[int, list[Any]] = {}
    for span in spans:
        if span.parent is not None:
            by_parent.setdefault(span.parent.span_id, []).append(span)
    tool_span_of: dict[str, Any] = {}
    for span in spans:
        if span.name != "tools":
            continue
        given = json.loads(str(span.attributes.get("input.value", "null")))
        # create_agent sends [tool_call]; create_react_agent (the supervisor) sends
        # {"__type": "tool_call_with_context", "tool_call": …, "state": <history>}.
        calls = given if isinstance(given, list) else [given.get("tool_call")] if isinstance(given, dict) else []
        children = [c for c in by_parent.get(span.context.span_id, []) if "tool.name" in c.attributes]
        if len(calls) == 1 and len(children) == 1 and isinstance(calls[0], dict):
            tool_span_of[calls[0]["id"]] = children[0]
    annotated = []
    for entry in executions:
        span = tool_span_of.get(entry.get("tool_call_id", ""))
        found = span and {"span_id": f"{span.context.span_id:016x}", "span_name": span.name,
                          "status": span.status.status_code.name,
                          "matched_by": "tool_call id in the parent tools span's input.value"}
        key = "tool_span_despite_refusal" if entry["outcome"] == "refused" else "execution_span"
        annotated.append({**entry, key: found or None})
    return annotated


def main() -> None:
    only = set(sys.argv[1:])
    for name, description, body, delegation, notes in SCENARIOS:
        if only and name not in only:
            continue
        exporter.clear()
        cc.reset_truth()
        outcome, error = "ok", None
        seen_in_run: dict[str, Any] = {}
        try:
            seen_in_run = body() or {}
        except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        provider.force_flush()
        spans = list(exporter.get_finished_spans())
        truth = {"description": description, "run_outcome": outcome, "run_error": error,
                 "tool_executions": with_tool_spans(cc.truth_snapshot(), spans),
                 "delegation": {**delegation, **seen_in_run}, "notes": notes}
        cc.save_scenario(FRAMEWORK, name, spans, truth)


if __name__ == "__main__":
    main()
