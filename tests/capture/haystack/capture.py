"""Capture Haystack Agent traces, in two instrumentation modes.

* ``haystack/`` (default): openinference-instrumentation-haystack's ``HaystackInstrumentor``.
* ``haystack_native/`` (``--native``): Haystack's own tracing (``haystack.tracing``) with the
  ``OpenTelemetryTracer`` of the ``opentelemetry-haystack`` integration (Haystack 3.x moved it out of
  ``haystack-ai``), content tracing on (``HAYSTACK_CONTENT_TRACING_ENABLED=true`` and
  ``tracing.tracer.is_content_tracing_enabled = True``).

Every agent is a real ``haystack.components.agents.Agent`` on ``OpenAIChatGenerator`` pointed at
``ScriptedOpenAI`` on 127.0.0.1 (``api_base_url``, dummy key): no key, no network. Haystack's own
usage telemetry is switched off before it is imported.

Haystack never hands a tool its call id or its agent: ids come from the script, found by the call's
name and arguments (unique within a scenario); the running agent is a context variable that the
scenario (or the delegating tool, for a sub-agent) sets. A standalone Haystack ``Agent`` has no name:
the truth names it ``Agent`` (its component class, the only name the framework and both
instrumentations give it); an agent in a ``Pipeline`` is named by its component name, and a sub-agent
by the name of the tool that wraps it.

Run:  /tmp/capture-haystack/bin/python tests/capture/haystack/capture.py [--native] [scenario ...]
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

# before haystack is imported: nothing may leave this machine; content tracing on (native mode reads it)
os.environ.update(HAYSTACK_TELEMETRY_ENABLED="False", HAYSTACK_CONTENT_TRACING_ENABLED="true")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

NATIVE = "--native" in sys.argv
FRAMEWORK = "haystack_native" if NATIVE else "haystack"
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")

# Components must be imported (registered) before HaystackInstrumentor wraps their run methods.
from haystack import Pipeline, tracing  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.builders import ChatPromptBuilder  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.hooks.human_in_the_loop import (  # noqa: E402
    AlwaysAskPolicy,
    BlockingConfirmationStrategy,
    ConfirmationHook,
    ConfirmationUIResult,
)
from haystack.tools import AgentTool, ComponentTool, Tool, tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402

if NATIVE:
    from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer  # noqa: E402

    tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))
    tracing.tracer.is_content_tracing_enabled = True
else:
    from openinference.instrumentation.haystack import HaystackInstrumentor  # noqa: E402

    HaystackInstrumentor().instrument(tracer_provider=provider)

STANDALONE = "Agent"  # what the truth calls a standalone (nameless) Haystack Agent

_scripted_ids: dict[tuple[str, str], str] = {}


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


_ID_PREFIX = "hay"
_scenario_tag = ""  # set per scenario by run(); native_<scenario> in --native mode


def scripted_id(call_id: str) -> str:
    """``call_mul_1`` made unique in the whole corpus: the engine joins traces that share a call id."""
    return f"call_{_ID_PREFIX}_{_scenario_tag}_{call_id.removeprefix('call_')}"


def call(name: str, arguments: dict[str, Any] | str, call_id: str, key_arguments: dict[str, Any] | None = None
         ) -> dict[str, Any]:
    """A scripted tool call whose id the tool body can find again."""
    key_args = key_arguments if key_arguments is not None else arguments
    _scripted_ids[_key(name, key_args)] = scripted_id(call_id)  # type: ignore[arg-type]
    return cc.tool_call(name, arguments, scripted_id(call_id))


def _ids(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    call_id = _scripted_ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, from inside a tool body, that it ran."""
    cc.record(name, arguments, outcome, cc.current_agent.get(), **_ids(name, arguments), **extra)


def refused(name: str, arguments: dict[str, Any], reason: str, kind: str, agent: str) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, **_ids(name, arguments))


# -- tools ------------------------------------------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b})
    return a * b


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    ran("add", {"a": a, "b": b})
    return a + b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
    else:
        ran("divide", {"a": a, "b": b})
    return a / b


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    ran("get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@tool
def search(query: str) -> str:
    """Search the web."""
    ran("search", {"query": query})
    return "<td>price</td><td>42</td>"


@tool
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


@tool
def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


@tool
def delete_file(path: str) -> str:
    """Delete the file at the given path."""
    ran("delete_file", {"path": path})
    return f"Deleted {path}."


class _RecordsDelegation:
    """Mixed into ComponentTool / AgentTool around a sub-agent: the call is the caller's tool call; the
    sub-agent then runs as the agent the tool names."""

    name: str

    def invoke(self, **kwargs: Any) -> Any:
        ran(self.name, kwargs, delegates_to_agent=True)
        token = cc.current_agent.set(self.name)
        try:
            return super().invoke(**kwargs)  # type: ignore[misc]
        finally:
            cc.current_agent.reset(token)


class RecordingComponentTool(_RecordsDelegation, ComponentTool):
    pass


class RecordingAgentTool(_RecordsDelegation, AgentTool):
    pass


class ScriptedUI:
    """A confirmation UI whose human answers from a script (``confirm`` / ``reject``)."""

    def __init__(self, *answers: tuple[str, str | None]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def get_user_confirmation(self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
                              ) -> ConfirmationUIResult:
        self.asked.append((tool_name, tool_params))
        action, feedback = self.answers.pop(0)
        return ConfirmationUIResult(action=action, feedback=feedback)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ScriptedUI", "init_parameters": {}}


# -- agents -----------------------------------------------------------------------------


def generator(server: cc.ScriptedOpenAI) -> OpenAIChatGenerator:
    # no client retries: a scripted failure should be one failed request
    return OpenAIChatGenerator(model=server.model, api_base_url=server.base_url,
                               api_key=Secret.from_token("scripted-no-key"), max_retries=0)


def agent(server: cc.ScriptedOpenAI, tools: list[Tool], **kwargs: Any) -> Agent:
    return Agent(chat_generator=generator(server), tools=tools,
                 system_prompt="You are a helpful assistant. Use the tools.", **kwargs)


def run_as(name: str, the_agent: Agent, text: str | list[ChatMessage], **kwargs: Any) -> dict[str, Any]:
    """``the_agent.run`` with the truth's current agent set."""
    token = cc.current_agent.set(name)
    try:
        messages = [ChatMessage.from_user(text)] if isinstance(text, str) else text
        return the_agent.run(messages=messages, **kwargs)
    finally:
        cc.current_agent.reset(token)


def user_says(text: str) -> list[ChatMessage]:
    return [ChatMessage.from_user(text)]


# -- scenarios --------------------------------------------------------------------------

_exit: dict[str, Any] = {}  # what the last run returned, for the truth's notes


def _keep(result: dict[str, Any]) -> None:
    _exit["exit_reason"] = result.get("exit_reason")
    _exit["step_count"] = result.get("step_count")


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_multiply_1")]),
                      cc.reply("10 times 5 is 50."))
        _keep(run_as(STANDALONE, agent(server, [multiply, add]), "What is 10 times 5?"))


def pipeline_agent() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_multiply_1")]),
                      cc.reply("10 times 5 is 50."))
        pipe = Pipeline()
        pipe.add_component("prompt_builder", ChatPromptBuilder(
            template=[ChatMessage.from_user("What is {{x}} times {{y}}?")], required_variables=["x", "y"]))
        pipe.add_component("calculator", agent(server, [multiply, add]))
        pipe.connect("prompt_builder.prompt", "calculator.messages")
        token = cc.current_agent.set("calculator")
        try:
            result = pipe.run({"prompt_builder": {"x": 10, "y": 5}})
        finally:
            cc.current_agent.reset(token)
        _keep(result["calculator"])


def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"}, "call_search_1")]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"}, "call_compute_1")]),
            cc.reply(tool_calls=[call("add", {"a": 126, "b": 10}, "call_add_1")]),
            cc.reply("3 widgets cost 126, 136 with shipping."),
        )
        _keep(run_as(STANDALONE, agent(server, [search, compute, add]),
                     "How much do 3 widgets cost, plus 10 for shipping?"))


def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_get_weather_1"),
                                 call("get_weather", {"city": "London"}, "call_get_weather_2")]),
            cc.reply("Paris is sunny, London rainy."),
        )
        _keep(run_as(STANDALONE, agent(server, [get_weather]), "Weather in Paris and London?"))


def repeated_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_get_weather_1")]),
            cc.reply(tool_calls=[call("get_weather", {"city": "London"}, "call_get_weather_2")]),
            cc.reply("Paris is sunny, London rainy."),
        )
        _keep(run_as(STANDALONE, agent(server, [get_weather]), "Weather in Paris, then in London?"))


def no_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply("Hello! How can I help you today?"))
        _keep(run_as(STANDALONE, agent(server, [multiply]), "Hi there"))


def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 0}, "call_divide_1")]),
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 2}, "call_divide_2")]),
            cc.reply("10 / 2 = 5"),
        )
        _keep(run_as(STANDALONE, agent(server, [divide]), "Divide 10 by 0, or by something sensible"))


def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"}, "call_format_disk_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, "call_multiply_1")]),
            cc.reply("6 times 7 is 42; I cannot format disks."),
        )
        refused("format_disk", {"drive": "C:"}, "no tool of that name: ToolNotFoundException, sent back to the "
                "model as an error tool result", "unknown_tool", STANDALONE)
        _keep(run_as(STANDALONE, agent(server, [multiply]), "Format the disk, then multiply 6 by 7"))


def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10}, "call_multiply_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_multiply_2")]),
            cc.reply("10 times 5 is 50."),
        )
        refused("multiply", {"a": 10}, "b is missing: calling the function raised TypeError (missing 1 required "
                "positional argument: 'b') before its body ran; Tool.invoke wrapped it in ToolInvocationError, "
                "sent back to the model as an error tool result", "invalid_arguments", STANDALONE)
        _keep(run_as(STANDALONE, agent(server, [multiply]), "What is 10 times 5?"))


def _approval_agent(server: cc.ScriptedOpenAI, ui: ScriptedUI) -> Agent:
    hook = ConfirmationHook(confirmation_strategies={
        "delete_file": BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ui)})
    return agent(server, [delete_file, get_weather], hooks={"before_tool": [hook]})


def approval_approved() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("delete_file", {"path": "/tmp/old.log"}, "call_delete_file_1")]),
            cc.reply("Deleted /tmp/old.log."),
        )
        ui = ScriptedUI(("confirm", None))
        _keep(run_as(STANDALONE, _approval_agent(server, ui), "Delete /tmp/old.log"))
        assert ui.asked == [("delete_file", {"path": "/tmp/old.log"})], ui.asked


def blocked_approval_rejected() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"}, "call_delete_file_1")]),
            cc.reply("I was not allowed to delete /etc/passwd."),
        )
        ui = ScriptedUI(("reject", "never touch /etc"))
        refused("delete_file", {"path": "/etc/passwd"}, "ConfirmationHook (BlockingConfirmationStrategy, "
                "AlwaysAskPolicy): the human rejected it; the call was replaced by a tool result \"Tool execution "
                "for 'delete_file' was rejected by the user. With user feedback: never touch /etc\"",
                "approval_denied", STANDALONE)
        _keep(run_as(STANDALONE, _approval_agent(server, ui), "Delete /etc/passwd"))
        assert ui.asked == [("delete_file", {"path": "/etc/passwd"})], ui.asked


def blocked_tool_call_limit() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_get_weather_1")]),
            cc.reply(tool_calls=[call("get_weather", {"city": "London"}, "call_get_weather_2")]),
            cc.reply(tool_calls=[call("get_weather", {"city": "Rome"}, "call_get_weather_3")]),  # never asked for
        )
        _keep(run_as(STANDALONE, agent(server, [get_weather], max_agent_steps=2),
                     "Weather in Paris, London and Rome, one at a time?"))
        assert server.left() == 1, server.left()


def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_multiply_1")]),
            cc.reply("10 times 5 is 50."),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, "call_add_1")]),
            cc.reply("50 plus 7 is 57."),
        )
        calculator = agent(server, [multiply, add])
        first = run_as(STANDALONE, calculator, "What is 10 times 5?")
        first_run = len(cc.truth_snapshot())
        history = [m for m in first["messages"] if m.role.value != "system"]
        _keep(run_as(STANDALONE, calculator, [*history, ChatMessage.from_user("Now add 7 to that")]))
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run else 2


def _researcher(server: cc.ScriptedOpenAI) -> Agent:
    return Agent(chat_generator=generator(server), tools=[lookup],
                 system_prompt="You are a research specialist. Look terms up.")


def delegation() -> None:
    task = {"messages": [{"role": "user", "content": [{"text": "What is OCaml?"}]}]}
    with cc.ScriptedOpenAI() as coordinator_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            cc.reply("OCaml is a statically typed functional language."),
        )
        coordinator_server.script(
            cc.reply(tool_calls=[call("researcher", task, "call_researcher_1")]),
            cc.reply("The researcher says OCaml is statically typed and functional."),
        )
        researcher = RecordingComponentTool(component=_researcher(researcher_server), name="researcher",
                                            description="Looks terms up in an encyclopedia.")
        _keep(run_as(STANDALONE, agent(coordinator_server, [researcher]), "Tell me about OCaml"))


def delegation_agent_tool() -> None:
    task = {"messages": [{"role": "user", "content": "What is OCaml?"}]}
    with cc.ScriptedOpenAI() as coordinator_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            cc.reply("OCaml is a statically typed functional language."),
        )
        coordinator_server.script(
            cc.reply(tool_calls=[call("researcher", task, "call_researcher_1")]),
            cc.reply("The researcher says OCaml is statically typed and functional."),
        )
        researcher = RecordingAgentTool(agent=_researcher(researcher_server), name="researcher",
                                        description="Research a question and report the findings.")
        _keep(run_as(STANDALONE, agent(coordinator_server, [researcher]), "Tell me about OCaml"))


_DELEGATION = {"parent_agent": STANDALONE, "via_tool": "researcher", "via_tool_call_id": "call_researcher_1",
               "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}

_STANDALONE_NOTE = ("The agent is a standalone haystack Agent, which has no name: the truth calls it 'Agent' "
                    "(its component class).")

SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "standalone Agent: multiply(a=10, b=5), then a text answer", single_tool, {}, _STANDALONE_NOTE),
    ("pipeline_agent", "a Pipeline: ChatPromptBuilder -> Agent component 'calculator'; multiply(a=10, b=5), then text",
     pipeline_agent, {}, "The agent is the Pipeline component named 'calculator'."),
    ("sequential_chain", "search, then compute, then add, each in its own model turn, then text", sequential_chain,
     {}, _STANDALONE_NOTE),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "Haystack runs the calls of one turn in a thread pool (tool_concurrency_limit=4): seq is the order the bodies "
     "started and may vary between reruns. " + _STANDALONE_NOTE),
    ("repeated_tool", "get_weather(Paris), then get_weather(London) in the next turn", repeated_tool, {},
     _STANDALONE_NOTE),
    ("no_tools", "the model answers in text without calling its tool", no_tools, {}, _STANDALONE_NOTE),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the error goes back to the model, which retries with b=2",
     tool_error, {}, "raise_on_tool_invocation_failure=False (the default): the failure is an error tool result "
     "for the model. " + _STANDALONE_NOTE),
    ("unknown_tool", "the model asks for format_disk, which the agent lacks; then multiply", unknown_tool, {},
     _STANDALONE_NOTE),
    ("invalid_arguments", "multiply(a=10) without b: the call fails before the body runs; retry with b=5",
     invalid_arguments, {}, "Haystack validates no tool arguments against the schema: an ill-typed argument would "
     "reach the body. A missing one fails the Python call itself (TypeError inside Tool.invoke). " + _STANDALONE_NOTE),
    ("approval_approved", "ConfirmationHook(before_tool) with AlwaysAskPolicy on delete_file; the human confirms",
     approval_approved, {}, "The approval is blocking: the whole flow is one run, one trace. " + _STANDALONE_NOTE),
    ("blocked_approval_rejected", "as approval_approved, but the human rejects (with feedback); the model answers "
     "in text", blocked_approval_rejected, {}, "The approval is blocking: the whole flow is one run, one trace. "
     + _STANDALONE_NOTE),
    ("blocked_tool_call_limit", "max_agent_steps=2: get_weather(Paris) in step 1, get_weather(London) in step 2, "
     "then the run stops before a third model call", blocked_tool_call_limit, {},
     "Haystack's max_agent_steps stops the loop after the step's tool calls ran: no requested call is refused (both "
     "ran), the model is simply not asked again (its scripted third answer, get_weather(Rome), was never requested) "
     "and the run ends with exit_reason 'max_agent_steps' and no final text. " + _STANDALONE_NOTE),
    ("multi_turn", "two Agent.run calls on one agent: run 1 multiplies; run 2 gets run 1's messages plus a new user "
     "turn and adds", multi_turn, {}, "two agent runs, two traces (Haystack has no session or conversation id); run 2's "
     "input repeats run 1's tool call and result as history. " + _STANDALONE_NOTE),
    ("delegation", "the coordinator Agent calls a ComponentTool 'researcher' wrapping another Agent, which calls lookup",
     delegation, {"type": "component_tool", **_DELEGATION},
     "The coordinator is standalone (named 'Agent' in the truth); the sub-agent is named by its tool, 'researcher'. "
     "The delegating call's entry is recorded in the ComponentTool's invoke (its 'body' is the sub-agent's run)."),
    ("delegation_agent_tool", "as delegation, with Haystack's AgentTool (a ComponentTool subclass whose task is one "
     "user message and whose result is the reply text)", delegation_agent_tool, {"type": "agent_tool", **_DELEGATION},
     "The coordinator is standalone (named 'Agent' in the truth); the sub-agent is named by its tool, 'researcher'. "
     "The delegating call's entry is recorded in the AgentTool's invoke (its 'body' is the sub-agent's run)."),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation_truth: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    cc.reset_truth()
    _scripted_ids.clear()
    _exit.clear()
    _scenario_tag = f"native_{scenario}" if NATIVE else scenario
    outcome, error = "ok", None
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    if _exit:
        notes = f"{notes} The (last) run returned exit_reason={_exit['exit_reason']!r}, step_count={_exit['step_count']}."
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _with_scripted_ids(delegation_truth),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes.strip(),
    })


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
