"""Capture beeai-framework traces, as openinference-instrumentation-beeai emits them.

The agents are beeai's ``RequirementAgent`` (the agent the framework recommends; one extra
scenario uses ``ToolCallingAgent``) with beeai's own ``OpenAIChatModel`` (LiteLLM underneath)
pointed at ``ScriptedOpenAI`` on 127.0.0.1 through ``base_url`` and a dummy key: no network.
``BeeAIInstrumentor`` listens to beeai's root emitter and builds the spans when a root run ends.

Ground truth, recorded inside the tools when their bodies run:
* the call id comes from beeai itself: ``run_tool`` puts the model's tool call message in the
  tool's run context (``RunContext.get().context["tool_call_msg"]``), so a body reads the id the
  script gave (``tool_call_id_source: script``);
* the agent is the one whose runner is running: ``RecordingRunner`` (set as every agent's
  ``runner_cls``) puts ``agent.meta.name`` in ``cc.current_agent`` for the run;
* beeai's built-in ``final_answer`` tool (``FinalAnswerTool``) records itself with
  ``framework_tool=True`` (its ``_run`` is wrapped, class and name unchanged).

Run:  /tmp/capture-beeai/bin/python tests/capture/beeai/capture.py [--genai-semconv] [scenario ...]
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

# LiteLLM would fetch its model price map from the network at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("BEEAI_LOG_LEVEL", "ERROR")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from openinference.instrumentation import TraceConfig  # noqa: E402
from openinference.instrumentation.beeai import BeeAIInstrumentor  # noqa: E402

# --genai-semconv: OpenInference's switch that adds OTel GenAI (gen_ai.*) attributes beside its own,
# written to a folder of its own
GENAI_SEMCONV = "--genai-semconv" in sys.argv[1:]
FRAMEWORK = "beeai_genai_semconv" if GENAI_SEMCONV else "beeai"
provider, exporter = cc.tracing("corpus-" + FRAMEWORK.replace("_", "-"))
# TraceConfig's defaults capture every input, output and message (nothing hidden); stated here so the
# OPENINFERENCE_* variables of the environment cannot change it.
BeeAIInstrumentor().instrument(tracer_provider=provider, config=TraceConfig(
    hide_inputs=False, hide_outputs=False, hide_input_messages=False, hide_output_messages=False,
    hide_llm_invocation_parameters=False, hide_llm_tools=False, enable_genai_semconv=GENAI_SEMCONV))

from beeai_framework.adapters.openai import OpenAIChatModel  # noqa: E402
from beeai_framework.agents.requirement import RequirementAgent  # noqa: E402
from beeai_framework.agents.requirement._runner import RequirementAgentRunner  # noqa: E402
from beeai_framework.agents.requirement.requirements.ask_permission import AskPermissionRequirement  # noqa: E402
from beeai_framework.agents.requirement.requirements.conditional import ConditionalRequirement  # noqa: E402
from beeai_framework.agents.requirement.utils._tool import FinalAnswerTool  # noqa: E402
from beeai_framework.agents.tool_calling import ToolCallingAgent  # noqa: E402
from beeai_framework.agents.tool_calling import agent as _tool_calling_module  # noqa: E402
from beeai_framework.context import RunContext  # noqa: E402
from beeai_framework.memory import UnconstrainedMemory  # noqa: E402
from beeai_framework.tools import AnyTool, tool  # noqa: E402
from beeai_framework.tools.handoff import HandoffTool as BeeaiHandoffTool  # noqa: E402

_scenario_tag = ""  # set per scenario by run()


def cid(tool_name: str, n: int = 1) -> str:
    """``call_beeai_<scenario>_<tool>_<n>``: unique in the whole corpus."""
    return f"call_beeai_{_scenario_tag}_{tool_name}_{n}"


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    return cc.tool_call(name, arguments, cid(name, n))


def final(answer: str, n: int = 1) -> dict[str, Any]:
    """The model calls beeai's built-in final_answer tool."""
    return cc.reply(tool_calls=[call("final_answer", {"response": answer}, n)])


# -- ground truth from inside the tools ---------------------------------------------------


def _current_call_id() -> str | None:
    try:
        msg = RunContext.get().context.get("tool_call_msg")
    except RuntimeError:
        return None
    return getattr(msg, "id", None)


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    call_id = _current_call_id()
    source = "script" if call_id and call_id.startswith("call_beeai_") else "framework"
    ids = {"tool_call_id": call_id, "tool_call_id_source": source} if call_id else {}
    cc.record(name, arguments, outcome, cc.current_agent.get(), **ids, **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, call_id: str) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=call_id, tool_call_id_source="script")


class RecordingRunner(RequirementAgentRunner):
    """beeai's own runner; only tells the tool bodies which agent runs them."""

    async def run(self) -> Any:
        token = cc.current_agent.set(self._ctx.instance.meta.name)
        try:
            return await super().run()
        finally:
            cc.current_agent.reset(token)


_final_answer_run = FinalAnswerTool._run


async def _recording_final_answer_run(self: FinalAnswerTool, input: Any, options: Any, context: RunContext) -> Any:
    ran("final_answer", input.model_dump(), framework_tool=True)
    return await _final_answer_run(self, input, options, context)


FinalAnswerTool._run = _recording_final_answer_run  # type: ignore[method-assign]

# ToolCallingAgent makes its final_answer tool inside run() with beeai's @tool decorator (imported there as
# create_tool); the decorator is wrapped so that this one function records itself too.
_create_tool = _tool_calling_module.create_tool


def _recording_create_tool(*args: Any, **kwargs: Any) -> Any:
    decorate = _create_tool(*args, **kwargs)
    if kwargs.get("name") != "final_answer":
        return decorate

    def wrap(fn: Callable[..., Any]) -> Any:
        def final_answer_tool(**arguments: Any) -> Any:
            ran("final_answer", arguments, framework_tool=True)
            return fn(**arguments)

        final_answer_tool.__doc__ = fn.__doc__
        return decorate(final_answer_tool)

    return wrap


_tool_calling_module.create_tool = _recording_create_tool


# -- tools (shared by the agents: the agent comes from cc.current_agent) ------------------------


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
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: float division by zero")
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
    """Search the web for a price."""
    ran("search", {"query": query})
    return "widget price: 42"


@tool
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


@tool
def format_report(total: float) -> str:
    """Format a total as a report line."""
    ran("format_report", {"total": total})
    return f"Total: {total:.2f} EUR"


@tool
def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


@tool
def delete_file(path: str) -> str:
    """Delete a file (needs the user's permission)."""
    ran("delete_file", {"path": path})
    return f"deleted {path}"


# With a base_url, OpenAIChatModel drops "required" from the tool choices it trusts the server with, and
# RequirementAgent then sends no tools at all: it asks for a JSON ``response_format`` holding the call
# instead. The scripted server supports native tool calls with tool_choice "required" (as OpenAI does), so
# the capture declares the full set, as beeai's own error message tells a user to.
TOOL_CHOICE_SUPPORT = {"required", "none", "single", "auto"}


def model(server: cc.ScriptedOpenAI, **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel(server.model, base_url=server.base_url, api_key="scripted-no-key",
                           tool_choice_support=set(TOOL_CHOICE_SUPPORT), **kwargs)


def agent(name: str, server: cc.ScriptedOpenAI, tools: list[AnyTool], **kwargs: Any) -> RequirementAgent:
    llm_kwargs = kwargs.pop("llm_kwargs", {})
    created = RequirementAgent(llm=model(server, **llm_kwargs), tools=tools, name=name, memory=UnconstrainedMemory(),
                               **kwargs)
    created.runner_cls = RecordingRunner
    return created


# -- scenarios ----------------------------------------------------------------------------


async def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), final("50"))
        await agent("calculator", server, [multiply, add]).run("What is 10 times 5?")


async def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"})]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"})]),
            cc.reply(tool_calls=[call("format_report", {"total": 126.0})]),
            final("Total: 126.00 EUR"),
        )
        await agent("researcher", server, [search, compute, format_report]).run("How much do 3 widgets cost?")


async def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, 1), call("get_weather", {"city": "London"}, 2)]),
            final("Paris is sunny, London rainy"),
        )
        await agent("weather", server, [get_weather], llm_kwargs={"allow_parallel_tool_calls": True}).run(
            "Weather in Paris and London?")


async def repeated_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, 1)]),
            cc.reply(tool_calls=[call("get_weather", {"city": "London"}, 2)]),
            final("Paris is sunny, London rainy"),
        )
        await agent("weather", server, [get_weather]).run("Weather in Paris, then in London?")


async def no_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(final("Hello! How can I help you today?"))
        await agent("greeter", server, [get_weather]).run("Hi there")


async def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 0}, 1)]),
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 2}, 2)]),
            final("10 / 2 = 5"),
        )
        await agent("calculator", server, [divide]).run("Divide 10 by 0, or by something sensible")


async def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
            final("42"),
        )
        refused("format_disk", {"drive": "C:"}, "calculator", _UNKNOWN_REASON, "unknown_tool", cid("format_disk"))
        await agent("calculator", server, [multiply]).run("Format the disk, then multiply 6 by 7")


async def unknown_tool_auto_choice() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
            cc.reply(content="42"),
        )
        refused("format_disk", {"drive": "C:"}, "calculator", _UNKNOWN_REASON, "unknown_tool", cid("format_disk"))
        await agent("calculator", server, [multiply], final_answer_as_tool=False).run(
            "Format the disk, then multiply 6 by 7")


async def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": "ten", "b": 5}, 1)]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 2)]),
            final("50"),
        )
        refused("multiply", {"a": "ten", "b": 5}, "calculator",
                "ToolInputValidationError: Tool input validation error (a: Input should be a valid integer); "
                "raised by Tool.run's input validation before the body", "invalid_arguments", cid("multiply", 1))
        await agent("calculator", server, [multiply]).run("What is ten times 5?")


def _permission(answer: bool) -> Callable[[AnyTool, dict[str, Any]], bool]:
    def handler(asked: AnyTool, arguments: dict[str, Any]) -> bool:
        _asked.append((asked.name, arguments, answer))
        return answer

    return handler


_asked: list[tuple[str, dict[str, Any], bool]] = []


async def approval_approved() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("delete_file", {"path": "/tmp/old.log"})]), final("Deleted /tmp/old.log"))
        await agent("janitor", server, [delete_file],
                    requirements=[AskPermissionRequirement([delete_file], handler=_permission(True))]).run(
            "Delete /tmp/old.log")


async def blocked_approval_rejected() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"})]),
                      final("I was not allowed to delete /etc/passwd"))
        refused("delete_file", {"path": "/etc/passwd"}, "janitor",
                "AskPermissionRequirement: the permission handler said no; beeai answers the call with "
                "'This tool is not allowed to be used.' without running the body", "approval_denied", cid("delete_file"))
        await agent("janitor", server, [delete_file],
                    requirements=[AskPermissionRequirement([delete_file], handler=_permission(False))]).run(
            "Delete /etc/passwd")


async def blocked_tool_call_limit() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, 1)]),
            cc.reply(tool_calls=[call("get_weather", {"city": "London"}, 2)]),
            final("Paris is sunny; I may not look up London"),
        )
        try:
            await agent("weather", server, [get_weather],
                        requirements=[ConditionalRequirement(get_weather, max_invocations=1)]).run(
                "Weather in Paris, then in London?")
        finally:
            # refused after the first call ran, before final_answer
            refused("get_weather", {"city": "London"}, "weather", _LIMIT_REASON, "limit", cid("get_weather", 2))
            _move_last_to(1)


async def max_iterations() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, 1)]),
            cc.reply(tool_calls=[call("get_weather", {"city": "London"}, 2)]),
        )
        await agent("weather", server, [get_weather]).run("Weather in Paris, then in London?", max_iterations=2)


async def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, 1)]),
            final("50", 1),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, 1)]),
            final("57", 2),
        )
        calculator = agent("calculator", server, [multiply, add])
        await calculator.run("What is 10 times 5?")
        first_run = len(cc.truth_snapshot())
        await calculator.run("Now add 7 to that")
    _number_runs(first_run)


async def delegation() -> None:
    with cc.ScriptedOpenAI() as manager_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"})]),
            final("OCaml is a statically typed functional language", 2),
        )
        manager_server.script(
            cc.reply(tool_calls=[call("researcher", {"task": "What is OCaml?"})]),
            final("The researcher says OCaml is statically typed and functional", 1),
        )
        researcher = agent("researcher", researcher_server, [lookup], description="Looks terms up in an encyclopedia.")
        handoff = HandoffTool(researcher)
        await agent("manager", manager_server, [handoff]).run("Tell me about OCaml")


class HandoffTool(BeeaiHandoffTool):
    """beeai's HandoffTool (same class name, so the span's ``metadata.class_name`` is unchanged), recording the
    delegating call as the manager's tool execution before handing off."""

    async def _run(self, input: Any, options: Any, context: RunContext) -> Any:
        ran(self.name, input.model_dump(), handoff=True)
        return await super()._run(input, options, context)


async def tool_calling_agent() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), final("50"))
        created = ToolCallingAgent(llm=model(server), tools=[multiply, add], memory=UnconstrainedMemory())
        token = cc.current_agent.set(created.meta.name)
        try:
            await created.run("What is 10 times 5?")
        finally:
            cc.current_agent.reset(token)


_UNKNOWN_REASON = ("no tool of that name: with tool_choice 'required' beeai's ChatModel rejects the response "
                   "(ChatModelToolCallError: unknown tool) and asks the model again inside the same chat-model run; "
                   "with tool_choice 'auto' run_tool raises ToolError \"Tool 'format_disk' does not exist!\"")
_LIMIT_REASON = ("ConditionalRequirement(get_weather, max_invocations=1): after one call the next request offers only "
                 "final_answer (tool_choice forced to it); beeai's ChatModel rejects the get_weather call "
                 "(ChatModelToolCallError) and asks the model again inside the same chat-model run")


def _move_last_to(index: int) -> None:
    """Put the last truth entry at ``index`` (0-based) and renumber: a refusal recorded after the run."""
    with cc._lock:
        cc._truth.insert(index, cc._truth.pop())
        for seq, entry in enumerate(cc._truth, 1):
            entry["seq"] = seq


def _number_runs(first_run_size: int) -> None:
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run_size else 2


Scenario = tuple[str, str, Callable[[], Awaitable[None]], dict[str, Any], str]
FINAL_NOTE = "final_answer is beeai's built-in closing tool (FinalAnswerTool, framework_tool: true)."

SCENARIOS: list[Scenario] = [
    ("single_tool", "RequirementAgent: multiply(a=10, b=5), then final_answer", single_tool, {}, ""),
    ("sequential_chain", "search, then compute, then format_report, each after the previous result, then final_answer",
     sequential_chain, {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn (allow_parallel_tool_calls=True)", parallel_tools, {},
     "beeai runs the calls of one turn as concurrent asyncio tasks; seq is start order"),
    ("repeated_tool", "get_weather(Paris), then get_weather(London) in the next turn", repeated_tool, {}, ""),
    ("no_tools", "the model answers at once through final_answer, calling none of the agent's tools", no_tools, {},
     "RequirementAgent sends tool_choice=required, so even a direct answer is a final_answer tool call; a plain-text "
     "reply would be a tool-choice violation that beeai retries inside the chat model"),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the error goes back to the model, which retries with b=2",
     tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which the agent does not have; then multiply", unknown_tool, {},
     "the refused call is nowhere in the trace: with tool_choice 'required' beeai's ChatModel rejects the response "
     "and asks again inside the same chat-model run (two HTTP requests, one LLM span showing only the second "
     "response, no retry event, no error status); see unknown_tool_auto_choice for the other path"),
    ("unknown_tool_auto_choice", "unknown_tool with RequirementAgent(final_answer_as_tool=False): tool_choice is "
     "'auto', so the unknown call reaches beeai's run_tool, which refuses it; the model ends in plain text",
     unknown_tool_auto_choice, {}, "the closing final_answer call is made by beeai from the model's text, with an id "
     "beeai generates (call_<8 random chars>, tool_call_id_source: framework) that no LLM span carries"),
    ("invalid_arguments", "multiply(a='ten') fails the tool's pydantic input schema (the body never runs); retry with "
     "a=10", invalid_arguments, {}, ""),
    ("approval_approved", "AskPermissionRequirement on delete_file; the permission handler says yes; the tool runs",
     approval_approved, {}, "the permission is asked in-process (handler callback) within the same run: one trace"),
    ("blocked_approval_rejected", "AskPermissionRequirement on delete_file; the handler says no; beeai answers the call "
     "with 'This tool is not allowed to be used.' and the model gives up", blocked_approval_rejected, {},
     "one trace; the refused call still gets a TOOL span (OK status) whose output is the refusal text"),
    ("blocked_tool_call_limit", "ConditionalRequirement(get_weather, max_invocations=1): the second get_weather call "
     "is refused", blocked_tool_call_limit, {},
     "the refused call is nowhere in the trace: the chat model rejects it and asks again within one chat-model run "
     "(one LLM span, showing only the final_answer response); the limit itself shows as the requirement's span "
     "ConditionGet_weather whose output rule says allowed: false, and the LLM span's tool list holding only "
     "final_answer"),
    ("max_iterations", "run(max_iterations=2): get_weather runs twice, then the third iteration raises AgentError "
     "before any model call", max_iterations, {}, "the run fails (run_outcome error); no requested call is refused: "
     "the limit stops the loop between iterations"),
    ("multi_turn", "the same RequirementAgent run twice (memory kept): multiply, then add", multi_turn, {},
     "two agent runs, two traces in this file (no session id links them)"),
    ("delegation", "manager hands off to researcher through beeai's HandoffTool; researcher calls lookup", delegation,
     {"type": "handoff_tool", "parent_agent": "manager", "via_tool": "researcher", "child_agent": "researcher",
      "via_tool_call": ("researcher", 1), "child_calls": [("lookup", 1), ("final_answer", 2)]},
     "the HandoffTool is named after the target agent (researcher), so tool name and child agent name are the same; "
     "HandoffTool clones the target agent and gives it the manager's memory"),
    ("tool_calling_agent", "ToolCallingAgent (the older tool-calling agent): multiply, then final_answer",
     tool_calling_agent, {}, "ToolCallingAgent takes no name: its meta.name is the class name 'ToolCallingAgent'; "
     "its final_answer is its own tool (not FinalAnswerTool of RequirementAgent)"),
]


def run(scenario: str, description: str, body: Callable[[], Awaitable[None]], delegation_truth: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    cc.reset_truth()
    _asked.clear()
    _scenario_tag = scenario
    outcome, error = "ok", None
    try:
        asyncio.run(body())
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    extra = {"permission_asked": [{"tool": n, "arguments": a, "granted": g} for n, a, g in _asked]} if _asked else {}
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _delegation(delegation_truth),
        "run_outcome": outcome,
        "run_error": error,
        "notes": " ".join(filter(None, [notes, FINAL_NOTE])),
        **extra,
    })


def _delegation(truth: dict[str, Any]) -> dict[str, Any]:
    if not truth:
        return {}
    truth = dict(truth)
    name, n = truth.pop("via_tool_call")
    truth["via_tool_call_id"] = cid(name, n)
    truth["child_tool_calls"] = [cid(name, n) for name, n in truth.pop("child_calls")]
    return truth


if __name__ == "__main__":
    chosen = set(sys.argv[1:]) - {"--genai-semconv"}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
