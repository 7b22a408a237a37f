"""Capture CrewAI traces, as openinference-instrumentation-crewai emits them.

Agents run in a ``Crew`` (or alone with ``Agent.kickoff``) on CrewAI's own ``LLM`` with the
``openai/`` provider, pointed at ``ScriptedOpenAI`` on 127.0.0.1 with a dummy key: no network.
CrewAI's own telemetry and tracing are switched off before it is imported.

The instrumentation has two modes: its default wrappers (``crewai/``), and an event
listener that also makes LLM spans (``--event-listener``, written to ``crewai_event_listener/``).
``--traceloop`` traces the same scenarios with OpenLLMetry's opentelemetry-instrumentation-crewai
and -openai instead (``crewai_traceloop/``; its venv and pins are ``tests/capture/crewai_traceloop/``).

CrewAI hands a tool neither its call id nor its agent: ids come from the script, found by the
call's name and arguments (unique within a scenario); each tool is built for one agent
(``owned_by``). CrewAI's own delegation tool is recorded by a ``before_tool_call`` hook,
which is the framework saying which agent asked for it.

Run:  /tmp/capture-crewai/bin/python tests/capture/crewai/capture.py [--event-listener] [scenario ...]
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

# before crewai is imported: nothing may leave this machine
os.environ.update(CREWAI_DISABLE_TELEMETRY="true", CREWAI_DISABLE_TRACKING="true", CREWAI_TRACING_ENABLED="false")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

EVENT_LISTENER = "--event-listener" in sys.argv
TRACELOOP = "--traceloop" in sys.argv
FRAMEWORK = "crewai_traceloop" if TRACELOOP else "crewai_event_listener" if EVENT_LISTENER else "crewai"
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")
logs_provider, logs_exporter = cc.logging_provider(f"corpus-{FRAMEWORK.replace('_', '-')}")
if TRACELOOP:  # OpenLLMetry: its CrewAI and OpenAI instrumentations, as Traceloop.init() sets both up
    from opentelemetry.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

    CrewAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logs_provider)
else:
    from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402

    CrewAIInstrumentor().instrument(tracer_provider=provider, use_event_listener=EVENT_LISTENER)

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.hooks import register_before_tool_call_hook, unregister_before_tool_call_hook  # noqa: E402
from crewai.tools import tool  # noqa: E402

_scripted_ids: dict[tuple[str, str], str] = {}


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


_ID_PREFIX = "crewtl" if TRACELOOP else "crewel" if EVENT_LISTENER else "crew"
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


def delete_file(path: str) -> str:
    """Delete a file."""
    ran("delete_file", {"path": path})
    return f"deleted {path}"


def owned_by(agent: str, function: Callable[..., Any], **options: Any) -> Any:
    """``function`` as a CrewAI tool that records itself as ``agent``'s."""
    @functools.wraps(function)
    def as_agent(*args: Any, **kwargs: Any) -> Any:
        token = cc.current_agent.set(agent)
        try:
            return function(*args, **kwargs)
        finally:
            cc.current_agent.reset(token)
    return tool(function.__name__, **options)(as_agent)


# -- agents -----------------------------------------------------------------------------


def llm(server: cc.ScriptedOpenAI) -> LLM:
    return LLM(model=f"openai/{server.model}", base_url=server.base_url, api_key="scripted-no-key", max_retries=0)


def agent(role: str, server: cc.ScriptedOpenAI, tools: list[Any], **kwargs: Any) -> Agent:
    built = [item if hasattr(item, "run") else owned_by(role, item) for item in tools]
    return Agent(role=role, goal=f"answer as the {role}", backstory=f"You are the {role}.", llm=llm(server),
                 tools=built, verbose=False, **kwargs)


def crew(member: Agent, task: str, **kwargs: Any) -> Any:
    job = Task(description=task, expected_output="a short answer", agent=member)
    return Crew(agents=[member], tasks=[job], verbose=False, **kwargs).kickoff()


def final(text: str) -> dict[str, Any]:
    return cc.reply(content=text)


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), final("50"))
        crew(agent("calculator", server, [multiply, add]), "What is 10 times 5?")


def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("get_weather", {"city": "Paris"}, "call_w_paris"),
                                 call("get_weather", {"city": "London"}, "call_w_london")]),
            final("Paris is sunny, London rainy"),
        )
        crew(agent("weather", server, [get_weather]), "Weather in Paris and London?")


def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"}, "call_search_1")]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"}, "call_compute_1")]),
            final("3 widgets cost 126"),
        )
        crew(agent("researcher", server, [search, compute]), "How much do 3 widgets cost?")


def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 0}, "call_div_1")]),
            cc.reply(tool_calls=[call("divide", {"a": 10, "b": 2}, "call_div_2")]),
            final("10 / 2 = 5"),
        )
        crew(agent("calculator", server, [divide]), "Divide 10 by 0, or by something sensible")


def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, "call_mul_1")]),
            final("42"),
        )
        refused("format_disk", {"drive": "C:"}, "no tool of that name", "unknown_tool", "calculator")
        crew(agent("calculator", server, [multiply]), "Format the disk, then multiply 6 by 7")


def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": "ten", "b": 5}, "call_mul_bad")]),
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_good")]),
            final("50"),
        )
        refused("multiply", {"a": "ten", "b": 5}, "the tool's args schema rejects a='ten' (not an integer)",
                "invalid_arguments", "calculator")
        crew(agent("calculator", server, [multiply]), "What is ten times 5?")


def blocked_usage_limit() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 50, "b": 2}, "call_mul_2")]),
            final("50, and I may not multiply again"),
        )
        calculator = agent("calculator", server, [owned_by("calculator", multiply, max_usage_count=1)])
        try:
            crew(calculator, "What is 10 times 5, times 2?")
        finally:  # the second call came after the first ran
            refused("multiply", {"a": 50, "b": 2}, "max_usage_count=1 already spent", "limit", "calculator")


def blocked_hook() -> None:
    def no_deletes(context: Any) -> bool | None:
        return False if context.tool_name == "delete_file" else None

    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"}, "call_del_1")]),
            final("I was not allowed to delete it."),
        )
        refused("delete_file", {"path": "/etc/passwd"}, "a before_tool_call hook returned False",
                "policy_guard", "janitor")
        register_before_tool_call_hook(no_deletes)
        try:
            crew(agent("janitor", server, [delete_file]), "Delete /etc/passwd")
        finally:
            unregister_before_tool_call_hook(no_deletes)


def delegation() -> None:
    delegate_name = "delegate_work_to_coworker"
    delegate_args = {"task": "Look up OCaml", "context": "the user asks what OCaml is", "coworker": "researcher"}

    def record_delegation(context: Any) -> None:
        if context.tool_name == delegate_name:
            cc.record(delegate_name, dict(context.tool_input), "ok", context.agent.role,
                      **_ids(delegate_name, delegate_args), framework_tool=True,
                      recorded_by="before_tool_call hook")

    with cc.ScriptedOpenAI() as lead_server, cc.ScriptedOpenAI() as researcher_server:
        lead_server.script(
            cc.reply(tool_calls=[call(delegate_name, delegate_args, "call_delegate_1")]),
            final("The researcher says OCaml is statically typed and functional"),
        )
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            final("OCaml is a statically typed functional language"),
        )
        lead = agent("lead", lead_server, [], allow_delegation=True)
        researcher = agent("researcher", researcher_server, [lookup])
        job = Task(description="Tell me about OCaml", expected_output="a short answer", agent=lead)
        register_before_tool_call_hook(record_delegation)
        try:
            Crew(agents=[lead, researcher], tasks=[job], process=Process.sequential, verbose=False).kickoff()
        finally:
            unregister_before_tool_call_hook(record_delegation)


def delegation_hierarchical() -> None:
    delegate_name = "delegate_work_to_coworker"
    delegate_args = {"task": "Look up OCaml", "context": "the user asks what OCaml is", "coworker": "researcher"}

    def record_delegation(context: Any) -> None:
        if context.tool_name == delegate_name:
            cc.record(delegate_name, dict(context.tool_input), "ok", context.agent.role,
                      **_ids(delegate_name, delegate_args), framework_tool=True,
                      recorded_by="before_tool_call hook")

    with cc.ScriptedOpenAI() as manager_server, cc.ScriptedOpenAI() as researcher_server:
        manager_server.script(
            cc.reply(tool_calls=[call(delegate_name, delegate_args, "call_delegate_1")]),
            final("OCaml is statically typed and functional"),
        )
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            final("OCaml is a statically typed functional language"),
        )
        researcher = agent("researcher", researcher_server, [lookup])
        job = Task(description="Tell me about OCaml", expected_output="a short answer")
        register_before_tool_call_hook(record_delegation)
        try:
            Crew(agents=[researcher], tasks=[job], process=Process.hierarchical, manager_llm=llm(manager_server),
                 verbose=False).kickoff()
        finally:
            unregister_before_tool_call_hook(record_delegation)


def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_turn1_mul")]), final("50"),
            cc.reply(tool_calls=[call("add", {"a": 50, "b": 7}, "call_turn2_add")]), final("57"),
        )
        calculator = agent("calculator", server, [multiply, add])
        first = calculator.kickoff("What is 10 times 5?")
        first_run = len(cc.truth_snapshot())
        history = [{"role": "user", "content": "What is 10 times 5?"}, {"role": "assistant", "content": str(first.raw)},
                   {"role": "user", "content": "Now add 7 to that"}]
        calculator.kickoff(history)
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run else 2


SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "a one-task Crew: multiply(a=10, b=5), then text", single_tool, {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {}, ""),
    ("sequential_chain", "search, then compute in the next turn, then text", sequential_chain, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; the model retries with b=2", tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which the agent lacks; then multiply", unknown_tool, {}, ""),
    ("invalid_arguments", "multiply(a='ten') fails the tool's argument schema; retry with a=10", invalid_arguments,
     {}, ""),
    ("blocked_usage_limit", "multiply has max_usage_count=1; the model's second multiply is refused",
     blocked_usage_limit, {}, ""),
    ("blocked_hook", "a before_tool_call hook returns False for delete_file", blocked_hook, {}, ""),
    ("delegation", "lead (allow_delegation=True) delegates to researcher, which calls lookup", delegation,
     {"type": "delegate_work_to_coworker", "parent_agent": "lead", "via_tool": "delegate_work_to_coworker",
      "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]},
     "the delegation tool is CrewAI's own; its entry comes from a before_tool_call hook, not a tool body"),
    ("delegation_hierarchical", "Process.hierarchical: CrewAI's own manager agent (manager_llm) delegates the task "
     "to researcher, which calls lookup", delegation_hierarchical,
     {"type": "hierarchical manager", "parent_agent": "Crew Manager", "via_tool": "delegate_work_to_coworker",
      "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]},
     "the manager agent is CrewAI's; its delegation entry comes from a before_tool_call hook"),
    ("multi_turn", "Agent.kickoff twice; the second gets the first exchange as messages", multi_turn, {},
     "two agent runs"),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation_truth: dict[str, Any],
        notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    logs_exporter.clear()
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
    logs_provider.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _with_scripted_ids(delegation_truth),
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
