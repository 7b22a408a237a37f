"""Capture smolagents traces, as openinference-instrumentation-smolagents emits them.

Every agent talks to the real ``OpenAIServerModel`` (smolagents' own OpenAI client model,
which the instrumentation wraps), pointed at ``ScriptedOpenAI`` on 127.0.0.1: no key, no
network. Tool bodies record the ground truth when they run.

smolagents never hands a tool its call id, so a tool body finds the id the script gave
the call with the same name and arguments (each is unique within a scenario); the truth
marks those ids ``tool_call_id_source: script``.

Run:  /tmp/capture-smolagents/bin/python tests/capture/smolagents/capture.py [scenario ...]
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402
from smolagents import CodeAgent, OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402
from smolagents.default_tools import FinalAnswerTool as BuiltinFinalAnswerTool  # noqa: E402

FRAMEWORK = "smolagents"
provider, exporter = cc.tracing("corpus-smolagents")
SmolagentsInstrumentor().instrument(tracer_provider=provider)

# (tool name, canonical arguments) -> the id the script gave that call
_scripted_ids: dict[tuple[str, str], str] = {}


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


_ID_PREFIX = "smol"
_scenario_tag = ""  # set per scenario by run()


def scripted_id(call_id: str) -> str:
    """``call_mul_1`` made unique in the whole corpus: the engine joins traces that share a call id."""
    return f"call_{_ID_PREFIX}_{_scenario_tag}_{call_id.removeprefix('call_')}"


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A scripted tool call whose id the tool body can find again."""
    _scripted_ids[_key(name, arguments)] = scripted_id(call_id)
    return cc.tool_call(name, arguments, scripted_id(call_id))


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, from inside a tool body, that it ran."""
    call_id = _scripted_ids.get(_key(name, arguments))
    ids = {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}
    cc.record(name, arguments, outcome, cc.current_agent.get(), **ids, **extra)


def refused(name: str, arguments: dict[str, Any], reason: str, kind: str, agent: str) -> None:
    call_id = _scripted_ids.get(_key(name, arguments))
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=call_id, tool_call_id_source="script")


# -- tools ------------------------------------------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: the first factor
        b: the second factor
    """
    ran("multiply", {"a": a, "b": b})
    return a * b


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first term
        b: the second term
    """
    ran("add", {"a": a, "b": b})
    return a + b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: the dividend
        b: the divisor
    """
    if b == 0:
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
    else:
        ran("divide", {"a": a, "b": b})
    return a / b


@tool
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: the city's name
    """
    ran("get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@tool
def search(query: str) -> str:
    """Search the web.

    Args:
        query: what to look for
    """
    ran("search", {"query": query})
    return "<td>price</td><td>42</td>"


@tool
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'.

    Args:
        expression: the product, e.g. '42 * 3'
    """
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


@tool
def lookup(term: str) -> str:
    """Encyclopedia lookup.

    Args:
        term: the term to look up
    """
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


class FinalAnswerTool(BuiltinFinalAnswerTool):
    """smolagents' own final_answer tool (same name and class name), recording when it runs."""

    def forward(self, answer: Any) -> Any:
        ran("final_answer", {"answer": answer}, framework_tool=True)
        return super().forward(answer)


# -- agents -----------------------------------------------------------------------------


class RunsAsItself:
    """Tells the tool bodies which agent runs them (mixed into smolagents' agent classes)."""

    name: str

    def run(self, task: str, *args: Any, **kwargs: Any) -> Any:
        token = cc.current_agent.set(self.name)
        try:
            return super().run(task, *args, **kwargs)  # type: ignore[misc]
        finally:
            cc.current_agent.reset(token)


class RecordingAgent(RunsAsItself, ToolCallingAgent):
    """When it is another agent's managed agent, being called is a tool call of the caller:
    that call is recorded as the caller's."""

    def __call__(self, task: str, **kwargs: Any) -> Any:
        ran(self.name, {"task": task, **kwargs}, managed_agent=True)
        return super().__call__(task, **kwargs)


class RecordingCodeAgent(RunsAsItself, CodeAgent):
    pass


def model(server: cc.ScriptedOpenAI) -> OpenAIServerModel:
    # no client retries: a scripted failure should be one failed request
    return OpenAIServerModel(model_id=server.model, api_base=server.base_url, api_key="scripted-no-key",
                             client_kwargs={"max_retries": 0})


def agent(name: str, server: cc.ScriptedOpenAI, tools: list[Any], **kwargs: Any) -> RecordingAgent:
    return RecordingAgent(tools=[*tools, FinalAnswerTool()], model=model(server), name=name, verbosity_level=0, **kwargs)


def final(answer: str, call_id: str) -> dict[str, Any]:
    return cc.reply(tool_calls=[call("final_answer", {"answer": answer}, call_id)])


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), final("50", "call_final_1"))
        agent("calculator", server, [multiply, add]).run("What is 10 times 5?")


def single_tool_streaming() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), final("50", "call_final_1"))
        agent("calculator", server, [multiply, add], stream_outputs=True).run("What is 10 times 5?")


def parallel_one_unknown() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_w_paris"),
                                 call("get_forecast", {"city": "Paris"}, "call_forecast_1")]),
            final("Paris is sunny", "call_final_1"),
        )
        refused("get_forecast", {"city": "Paris"}, "no tool of that name (AgentToolExecutionError: Unknown tool)",
                "unknown_tool", "weather")
        agent("weather", server, [get_weather]).run("Weather and forecast for Paris?")


def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_w_paris"),
                                 call("get_weather", {"city": "London"}, "call_w_london")]),
            final("Paris is sunny, London rainy", "call_final_1"),
        )
        agent("weather", server, [get_weather]).run("Weather in Paris and London?")


def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"}, "call_search_1")]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"}, "call_compute_1")]),
            final("3 widgets cost 126", "call_final_1"),
        )
        agent("researcher", server, [search, compute]).run("How much do 3 widgets cost?")


def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 0}, "call_div_1")]),
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 2}, "call_div_2")]),
            final("10 / 2 = 5", "call_final_1"),
        )
        agent("calculator", server, [divide]).run("Divide 10 by 0, or by something sensible")


def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, "call_mul_1")]),
            final("42", "call_final_1"),
        )
        refused("format_disk", {"drive": "C:"}, "no tool of that name (AgentToolExecutionError: Unknown tool)",
                "unknown_tool", "calculator")
        agent("calculator", server, [multiply]).run("Format the disk, then multiply 6 by 7")


def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": "ten", "b": 5}, "call_mul_bad")]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_good")]),
            final("50", "call_final_1"),
        )
        refused("multiply", {"a": "ten", "b": 5}, "validate_tool_arguments: a is a string, the schema wants an integer "
                "(AgentToolCallError)", "invalid_arguments", "calculator")
        agent("calculator", server, [multiply]).run("What is ten times 5?")


def delegation() -> None:
    with cc.ScriptedOpenAI() as manager_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            final("OCaml is a statically typed functional language", "call_final_researcher"),
        )
        manager_server.script(
            cc.reply(tool_calls=[call("researcher", {"task": "What is OCaml?"}, "call_delegate_1")]),
            final("The researcher says OCaml is statically typed and functional", "call_final_manager"),
        )
        researcher = agent("researcher", researcher_server, [lookup], description="Looks terms up in an encyclopedia.")
        agent("manager", manager_server, [], managed_agents=[researcher]).run("Tell me about OCaml")


def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_turn1_mul")]),
            final("50", "call_turn1_final"),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, "call_turn2_add")]),
            final("57", "call_turn2_final"),
        )
        calculator = agent("calculator", server, [multiply, add])
        calculator.run("What is 10 times 5?")
        first_run = len(cc.truth_snapshot())
        calculator.run("Now add 7 to that", reset=False)
    _number_runs(first_run)


def code_agent() -> None:
    code = "product = multiply(a=10, b=5)\ntotal = add(a=product, b=7)\nfinal_answer(total)"
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(content=f"Thought: multiply, then add.\n<code>\n{code}\n</code>"))
        RecordingCodeAgent(tools=[multiply, add, FinalAnswerTool()], model=model(server), name="coder",
                           verbosity_level=0).run("What is 10 times 5, plus 7?")


def run_error() -> None:
    # The instrumentation neither ends nor detaches the run span of a run that raises, so the
    # run happens in a thread of its own: the leaked context must not parent later scenarios.
    failure: list[BaseException] = []

    def failing_run() -> None:
        with cc.ScriptedOpenAI() as server:
            server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]))
            try:
                agent("calculator", server, [multiply]).run("What is 10 times 5?")
            except BaseException as exc:  # noqa: BLE001 - handed to the scenario
                failure.append(exc)

    worker = threading.Thread(target=failing_run)
    worker.start()
    worker.join()
    if failure:
        raise failure[0]


def _number_runs(first_run_size: int) -> None:
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run_size else 2


SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5), then final_answer", single_tool, {}, ""),
    ("single_tool_streaming", "single_tool with ToolCallingAgent(stream_outputs=True)", single_tool_streaming, {}, ""),
    ("parallel_one_unknown", "one model turn asks for get_weather (exists) and get_forecast (does not)",
     parallel_one_unknown, {}, "the unknown call fails the whole step; seq of the refused entry is the scenario's, "
     "not an execution order"),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "smolagents runs the calls of one turn in a thread pool; seq is start order and may vary between reruns"),
    ("sequential_chain", "search, then compute in the next turn, then final_answer", sequential_chain, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the error goes back to the model, which retries with b=2",
     tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which no agent has; then multiply", unknown_tool, {}, ""),
    ("invalid_arguments", "multiply(a='ten') fails smolagents' argument validation (the body never runs); "
     "retry with a=10", invalid_arguments, {}, ""),
    ("delegation", "manager calls its managed agent researcher as a tool; researcher calls lookup", delegation,
     {"type": "managed_agent", "parent_agent": "manager", "via_tool": "researcher",
      "via_tool_call_id": "call_delegate_1", "child_agent": "researcher",
      "child_tool_calls": ["call_lookup_1", "call_final_researcher"]},
     "the managed agent is called as a tool but is not a smolagents Tool: no TOOL span for that call"),
    ("multi_turn", "run 1 multiplies; run 2 (reset=False, same memory) adds", multi_turn, {},
     "two agent runs, two traces"),
    ("run_error", "multiply runs, then the model call fails (HTTP 500): AgentGenerationError ends the run",
     run_error, {}, "the run raised: openinference-instrumentation-smolagents never ends the run span of a run that "
     "raises, so the trace has no AGENT span and its Step spans point to a parent that is not in the trace"),
    ("code_agent", "a CodeAgent whose one code action calls multiply, add and final_answer", code_agent, {},
     "tools called from model-written code: the model message has no tool calls, so there are no call ids at all; "
     "tool_call_id is absent from the truth"),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation_truth: dict[str, Any], notes: str) -> None:
    global _scenario_tag
    exporter.clear()
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
    notes = " ".join(filter(None, [notes, "final_answer is smolagents' built-in closing tool (framework_tool: true)."]))
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _with_scripted_ids(delegation_truth),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
    })



def _with_scripted_ids(delegation: dict[str, Any]) -> dict[str, Any]:
    if not delegation:
        return {}
    return {**delegation, "via_tool_call_id": scripted_id(delegation["via_tool_call_id"]),
            "child_tool_calls": [scripted_id(call_id) for call_id in delegation["child_tool_calls"]]}


if __name__ == "__main__":
    chosen = set(sys.argv[1:])
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
