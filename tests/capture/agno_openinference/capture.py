"""Capture agno traces, as openinference-instrumentation-agno emits them.

Every agent and team talks to agno's real ``OpenAIChat`` model, pointed (``base_url``, dummy key)
at ``ScriptedOpenAI`` on 127.0.0.1: no key, no network. ``AgnoInstrumentor().instrument(...)``
wraps the model, ``FunctionCall.execute`` and the agent/team runs; agno's own (native) tracing
and telemetry stay off. Tool bodies record the ground truth when they run.

A tool body takes agno's ``fc: FunctionCall`` parameter (agno injects it and leaves it out of the
tool schema): ``fc.call_id`` is the id the scripted model gave the call and
``fc.function._agent.name`` the agent that runs it. Each scenario runs in an empty
``contextvars.Context``: the instrumentation leaks the context of a non-streaming ``Team.run``,
which would otherwise parent the next scenario under an ended team span.

``--traceloop`` traces the same scenarios with OpenLLMetry's opentelemetry-instrumentation-agno and
-openai instead (``agno_traceloop/``; venv and pins: ``tests/capture/agno_traceloop/``).

Run:  /tmp/capture-agno_openinference/bin/python tests/capture/agno_openinference/capture.py [--traceloop] [scenario ...]
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("AGNO_TELEMETRY", "false")  # agno's usage telemetry (a network call) off

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

TRACELOOP = "--traceloop" in sys.argv
FRAMEWORK = "agno_traceloop" if TRACELOOP else "agno_openinference"
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")
logs_provider, logs_exporter = cc.logging_provider(f"corpus-{FRAMEWORK.replace('_', '-')}")
if TRACELOOP:  # OpenLLMetry: its agno and OpenAI instrumentations, as Traceloop.init() sets both up
    from opentelemetry.instrumentation.agno import AgnoInstrumentor  # noqa: E402
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

    AgnoInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logs_provider)
else:
    from openinference.instrumentation import TraceConfig  # noqa: E402
    from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402

    # TraceConfig() is the default: inputs, outputs, messages and tool schemas are all recorded
    # (no OPENINFERENCE_HIDE_* variable is set). Passed explicitly to say so.
    AgnoInstrumentor().instrument(tracer_provider=provider, config=TraceConfig())
_ID_PREFIX = "agnotl" if TRACELOOP else "agnooi"

from agno.agent import Agent  # noqa: E402
from agno.db.in_memory import InMemoryDb  # noqa: E402
from agno.exceptions import RetryAgentRun  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.team import Team  # noqa: E402
from agno.tools import tool  # noqa: E402
from agno.tools.function import FunctionCall  # noqa: E402

_scenario_tag = ""  # set per scenario by run()
_runoutputs: list[Any] = []  # RunOutputs of the scenario, in order (written beside the trace)
_extra_runoutput: dict[str, Any] = {}
# (tool name, canonical arguments) -> scripted id, for calls whose body is agno's (delegation)
_scripted_ids: dict[tuple[str, str], str] = {}


def cid(tool_name: str, n: int = 1) -> str:
    """``call_agnooi_<scenario>_<tool>_<n>``: unique in the whole corpus (the engine joins traces by id)."""
    return f"call_{_ID_PREFIX}_{_scenario_tag}_{tool_name}_{n}"


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


def call(name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
    """A scripted tool call with the corpus-unique id."""
    if isinstance(arguments, dict):
        _scripted_ids[_key(name, arguments)] = cid(name, n)
    return cc.tool_call(name, arguments, cid(name, n))


def calls(*tool_calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return cc.reply(content=content, tool_calls=list(tool_calls))


FAIL = {"__fail__": "scripted HTTP 500"}


class Scripted(cc.ScriptedOpenAI):
    """``ScriptedOpenAI`` that can also answer one request with HTTP 500 (the ``FAIL`` entry)."""

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        message = super()._next(body)
        if "__fail__" in message:
            raise AssertionError(message["__fail__"])  # the handler answers 500
        return message


def agent_of(fc: FunctionCall) -> str:
    owner = fc.function._agent or fc.function._team
    return getattr(owner, "name", None) or "?"


def ran(fc: FunctionCall, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, from inside a tool body, that it ran."""
    cc.record(name, arguments, outcome, agent=agent_of(fc), tool_call_id=fc.call_id, tool_call_id_source="script",
              **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str, n: int = 1) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=cid(name, n), tool_call_id_source="script")


# -- tools ------------------------------------------------------------------------------


@tool
def multiply(a: int, b: int, fc: FunctionCall) -> int:
    """Multiply two integers.

    Args:
        a: the first factor
        b: the second factor
    """
    ran(fc, "multiply", {"a": a, "b": b})
    return a * b


@tool
def add(a: int, b: int, fc: FunctionCall) -> int:
    """Add two integers.

    Args:
        a: the first term
        b: the second term
    """
    ran(fc, "add", {"a": a, "b": b})
    return a + b


@tool
def divide(a: float, b: float, fc: FunctionCall) -> float:
    """Divide a by b.

    Args:
        a: the dividend
        b: the divisor
    """
    if b == 0:
        ran(fc, "divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: float division by zero")
    else:
        ran(fc, "divide", {"a": a, "b": b})
    return a / b


@tool
def get_weather(city: str, fc: FunctionCall) -> str:
    """Current weather for a city.

    Args:
        city: the city's name
    """
    ran(fc, "get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


@tool
def search(query: str, fc: FunctionCall) -> str:
    """Search the web.

    Args:
        query: what to look for
    """
    ran(fc, "search", {"query": query})
    return "widget price: 42"


@tool
def compute(expression: str, fc: FunctionCall) -> float:
    """Evaluate a product of two integers written as 'x * y'.

    Args:
        expression: the product, e.g. '42 * 3'
    """
    ran(fc, "compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


@tool
def format_report(total: float, fc: FunctionCall) -> str:
    """Format a total as a one-line report.

    Args:
        total: the amount
    """
    ran(fc, "format_report", {"total": total})
    return f"Total: {total:.2f} EUR"


@tool
def lookup(term: str, fc: FunctionCall) -> str:
    """Encyclopedia lookup.

    Args:
        term: the term to look up
    """
    ran(fc, "lookup", {"term": term})
    return f"{term}: a statically typed functional language"


@tool(requires_confirmation=True)
def delete_file(path: str, fc: FunctionCall) -> str:
    """Delete a file (asks the user first).

    Args:
        path: the file to delete
    """
    ran(fc, "delete_file", {"path": path})
    return f"deleted {path}"


_flaky_state = {"calls": 0}


@tool
def flaky_search(query: str, fc: FunctionCall) -> str:
    """Search an index that times out on the first try.

    Args:
        query: what to look for
    """
    _flaky_state["calls"] += 1
    if _flaky_state["calls"] == 1:
        ran(fc, "flaky_search", {"query": query}, "error", error="RetryAgentRun: search index timed out, retry")
        raise RetryAgentRun("search index timed out, retry")
    ran(fc, "flaky_search", {"query": query})
    return json.dumps({"query": query, "hits": ["doc-1", "doc-2"]})


# -- agents -----------------------------------------------------------------------------


def model(server: cc.ScriptedOpenAI) -> OpenAIChat:
    # no client retries: a scripted failure is one failed request
    return OpenAIChat(id=server.model, base_url=server.base_url, api_key="scripted-no-key", max_retries=0)


def agent(name: str, server: cc.ScriptedOpenAI, tools: list[Any], **kwargs: Any) -> Agent:
    return Agent(name=name, model=model(server), tools=tools, telemetry=False, **kwargs)


def keep(output: Any) -> Any:
    _runoutputs.append(output)
    return output


def stream_run(runner: Agent | Team, prompt: str, **kwargs: Any) -> Any:
    """Run with stream=True, consuming every event; returns the final RunOutput."""
    final = None
    for event in runner.run(prompt, stream=True, yield_run_output=True, **kwargs):
        if type(event).__name__ in ("RunOutput", "TeamRunOutput"):
            final = event
    return final


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> None:
    with Scripted() as server:
        server.script(calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        keep(agent("Calculator Agent", server, [multiply, add]).run("What is 10 times 5?"))


def single_tool_stream() -> None:
    with Scripted() as server:
        server.script(calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        keep(stream_run(agent("Calculator Agent", server, [multiply, add]), "What is 10 times 5?"))


def sequential_chain() -> None:
    with Scripted() as server:
        server.script(
            calls(call("search", {"query": "widget price"})),
            calls(call("compute", {"expression": "42 * 3"})),
            calls(call("format_report", {"total": 126.0})),
            cc.reply("Total: 126.00 EUR for 3 widgets"),
        )
        keep(agent("Research Agent", server, [search, compute, format_report]).run("How much do 3 widgets cost?"))


def parallel_tools() -> None:
    with Scripted() as server:
        server.script(
            calls(call("get_weather", {"city": "Paris"}, 1), call("get_weather", {"city": "London"}, 2)),
            cc.reply("Paris is sunny, London rainy"),
        )
        keep(agent("Weather Agent", server, [get_weather]).run("Weather in Paris and London?"))


def repeated_tool() -> None:
    with Scripted() as server:
        server.script(
            calls(call("get_weather", {"city": "Paris"}, 1)),
            calls(call("get_weather", {"city": "London"}, 2)),
            cc.reply("Paris is sunny, London rainy"),
        )
        keep(agent("Weather Agent", server, [get_weather]).run("Weather in Paris, then in London?"))


def no_tools() -> None:
    with Scripted() as server:
        server.script(cc.reply("Hello! I can multiply and add numbers for you."))
        keep(agent("Calculator Agent", server, [multiply, add]).run("Hi, what can you do?"))


def tool_error() -> None:
    with Scripted() as server:
        server.script(
            calls(call("divide", {"a": 10, "b": 0}, 1)),
            calls(call("divide", {"a": 10, "b": 2}, 2)),
            cc.reply("10 / 0 is undefined; 10 / 2 = 5"),
        )
        keep(agent("Calculator Agent", server, [divide]).run("Divide 10 by 0, or by something sensible"))


def agent_retry_after_error() -> None:
    _flaky_state["calls"] = 0
    with Scripted() as server:
        server.script(
            calls(call("flaky_search", {"query": "agno evals"}, 1)),
            calls(call("flaky_search", {"query": "agno evals"}, 2)),
            cc.reply("Found doc-1 and doc-2."),
        )
        keep(agent("Search Agent", server, [flaky_search]).run("Search for agno evals"))


def agent_run_retries() -> None:
    with Scripted() as server:
        server.script(FAIL, calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        keep(agent("Calculator Agent", server, [multiply], retries=1, delay_between_retries=0)
             .run("What is 10 times 5?"))


def unknown_tool() -> None:
    with Scripted() as server:
        server.script(
            calls(call("format_disk", {"drive": "C:"})),
            calls(call("multiply", {"a": 6, "b": 7})),
            cc.reply("I cannot format disks; 6 * 7 = 42"),
        )
        refused("format_disk", {"drive": "C:"}, "Calculator Agent", "no tool of that name: agno answers the model "
                "with an error tool message and runs nothing", "unknown_tool")
        keep(agent("Calculator Agent", server, [multiply]).run("Format the disk, then multiply 6 by 7"))


def invalid_arguments() -> None:
    with Scripted() as server:
        server.script(
            calls(call("multiply", {"a": "ten", "b": 5}, 1)),
            calls(call("multiply", {"b": 5}, 2)),
            calls(call("multiply", {"a": 10, "b": 5}, 3)),
            cc.reply("10 * 5 = 50"),
        )
        refused("multiply", {"a": "ten", "b": 5}, "Calculator Agent", "pydantic validate_call: a is not a valid "
                "integer (ValidationError int_parsing); the body never ran", "invalid_arguments", 1)
        refused("multiply", {"b": 5}, "Calculator Agent", "pydantic validate_call: a is missing "
                "(ValidationError missing_argument); the body never ran", "invalid_arguments", 2)
        keep(agent("Calculator Agent", server, [multiply]).run("What is ten times 5?"))


def _approval(confirm: bool) -> None:
    with Scripted() as server:
        server.script(calls(call("delete_file", {"path": "/srv/report.txt"})))
        server.script(cc.reply("Deleted /srv/report.txt." if confirm else "OK, I did not delete /srv/report.txt."))
        files = agent("Files Agent", server, [delete_file], db=InMemoryDb())
        paused = files.run("Delete /srv/report.txt")
        _extra_runoutput["paused_run"] = runoutput_dict(paused)
        for requirement in paused.active_requirements:
            if confirm:
                requirement.confirm()
            else:
                requirement.reject()
        if not confirm:
            refused("delete_file", {"path": "/srv/report.txt"}, "Files Agent", "the user rejected the call "
                    "(requires_confirmation, confirmed=False); agno tells the model "
                    "'Function call was rejected by the user'", "approval_denied")
        keep(files.continue_run(run_response=paused, requirements=paused.requirements))


def approval_approved() -> None:
    _approval(True)


def blocked_approval_rejected() -> None:
    _approval(False)


def blocked_tool_call_limit() -> None:
    with Scripted() as server:
        server.script(
            calls(call("multiply", {"a": 10, "b": 5}, 1), call("multiply", {"a": 6, "b": 7}, 2)),
            calls(call("add", {"a": 50, "b": 42}, 1)),
            cc.reply("10 * 5 = 50; the other calls were not run"),
        )
        keep(agent("Calculator Agent", server, [multiply, add], tool_call_limit=1)
             .run("Compute 10 * 5 and 6 * 7, then add them"))
        # added after the run, in the order they happened: both refusals come after multiply(10, 5) ran
        refused("multiply", {"a": 6, "b": 7}, "Calculator Agent", "tool_call_limit=1: 'Tool call limit reached. "
                "Tool call multiply not executed.'", "limit", 2)
        refused("add", {"a": 50, "b": 42}, "Calculator Agent", "tool_call_limit=1: 'Tool call limit reached. "
                "Tool call add not executed.'", "limit", 1)


def multi_turn() -> None:
    with Scripted() as server:
        server.script(
            calls(call("multiply", {"a": 10, "b": 5})),
            cc.reply("10 * 5 = 50"),
            calls(call("add", {"a": 50, "b": 7})),
            cc.reply("50 + 7 = 57"),
        )
        calculator = agent("Calculator Agent", server, [multiply, add], db=InMemoryDb(), add_history_to_context=True)
        keep(calculator.run("What is 10 times 5?", session_id=f"{_ID_PREFIX}-multi-turn-session"))
        first = len(cc.truth_snapshot())
        keep(calculator.run("Now add 7 to that", session_id=f"{_ID_PREFIX}-multi-turn-session"))
    _number_runs(first)


def team_delegation() -> None:
    with Scripted() as leader_server, Scripted() as member_server:
        member_server.script(calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        leader_server.script(
            calls(call("delegate_task_to_member", {"member_id": "calculator-agent", "task": "Compute 10 * 5"})),
            cc.reply("The calculator says 10 * 5 = 50"),
        )
        calculator = agent("Calculator Agent", member_server, [multiply], role="Performs arithmetic")
        team = Team(name="Math Team", model=model(leader_server), members=[calculator], telemetry=False,
                    tool_hooks=[delegation_recorder])
        keep(team.run("What is 10 times 5?"))


def team_delegation_stream() -> None:
    with Scripted() as leader_server, Scripted() as member_server:
        member_server.script(calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        leader_server.script(
            calls(call("delegate_task_to_member", {"member_id": "calculator-agent", "task": "Compute 10 * 5"})),
            cc.reply("The calculator says 10 * 5 = 50"),
        )
        calculator = agent("Calculator Agent", member_server, [multiply], role="Performs arithmetic")
        team = Team(name="Math Team", model=model(leader_server), members=[calculator], telemetry=False,
                    tool_hooks=[delegation_recorder])
        keep(stream_run(team, "What is 10 times 5?"))


def team_nested() -> None:
    _team_nested(stream=False)


def team_nested_stream() -> None:
    _team_nested(stream=True)


def _team_nested(stream: bool) -> None:
    with Scripted() as outer_server, Scripted() as inner_server, Scripted() as calc_server, \
            Scripted() as research_server:
        calc_server.script(calls(call("multiply", {"a": 10, "b": 5})), cc.reply("10 * 5 = 50"))
        inner_server.script(
            calls(call("delegate_task_to_member", {"member_id": "calculator-agent", "task": "Compute 10 * 5"}, 2)),
            cc.reply("Math says 50"),
        )
        research_server.script(calls(call("lookup", {"term": "OCaml"})), cc.reply("OCaml is a functional language"))
        outer_server.script(
            calls(call("delegate_task_to_member", {"member_id": "math-team", "task": "Compute 10 * 5"}, 1)),
            calls(call("delegate_task_to_member", {"member_id": "research-agent", "task": "What is OCaml?"}, 3)),
            cc.reply("10 * 5 = 50, and OCaml is a functional language"),
        )
        calculator = agent("Calculator Agent", calc_server, [multiply], role="Performs arithmetic")
        researcher = agent("Research Agent", research_server, [lookup], role="Looks terms up")
        math_team = Team(name="Math Team", model=model(inner_server), members=[calculator], telemetry=False,
                         role="Answers math questions", tool_hooks=[delegation_recorder])
        office = Team(name="Office Team", model=model(outer_server), members=[math_team, researcher],
                      telemetry=False, tool_hooks=[delegation_recorder])
        prompt = "What is 10 times 5, and what is OCaml?"
        keep(stream_run(office, prompt) if stream else office.run(prompt))


def delegation_recorder(function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any],
                        team: Any = None) -> Any:
    """A team tool hook: records the leader's delegate_task_to_member call (agno's own tool body)."""
    if function_name.startswith("delegate_task_to_member"):
        cc.record(function_name, dict(arguments), "ok", agent=getattr(team, "name", "?"),
                  tool_call_id=_scripted_ids.get(_key(function_name, dict(arguments))),
                  tool_call_id_source="script", delegation_tool=True)
    return function_call(**arguments)


def _number_runs(first_run_size: int) -> None:
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run_size else 2


# -- run outputs ------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)


def runoutput_dict(output: Any) -> dict[str, Any] | None:
    """RunOutput.tools (the evidence agno's ReliabilityEval reads), messages and member runs."""
    if output is None:
        return None
    document: dict[str, Any] = {
        "type": type(output).__name__,
        "run_id": output.run_id,
        "agent_id": getattr(output, "agent_id", None),
        "agent_name": getattr(output, "agent_name", None),
        "team_id": getattr(output, "team_id", None),
        "team_name": getattr(output, "team_name", None),
        "status": str(output.status),
        "is_paused": bool(getattr(output, "is_paused", False)),
        "content": _jsonable(output.content),
        "tools": [
            {
                "tool_call_id": t.tool_call_id,
                "tool_name": t.tool_name,
                "tool_args": t.tool_args,
                "tool_call_error": t.tool_call_error,
                "result": _jsonable(t.result),
                "requires_confirmation": t.requires_confirmation,
                "confirmed": t.confirmed,
                "requires_user_input": t.requires_user_input,
                "external_execution_required": t.external_execution_required,
                "is_paused": getattr(t, "is_paused", None),
                "child_run_id": getattr(t, "child_run_id", None),
            }
            for t in (output.tools or [])
        ],
        "messages": [
            {
                "role": m.role,
                "from_history": m.from_history,
                "content": _jsonable(m.content),
                "tool_calls": m.tool_calls,
                "tool_call_id": m.tool_call_id,
                "tool_name": m.tool_name,
                "tool_call_error": m.tool_call_error,
            }
            for m in (output.messages or [])
        ],
    }
    members = getattr(output, "member_responses", None)
    if members:
        document["member_responses"] = [runoutput_dict(member) for member in members]
    return document


def _write_runoutputs(scenario: str) -> None:
    outputs = [runoutput_dict(o) for o in _runoutputs]
    if not outputs:
        return
    document: dict[str, Any] = dict(outputs[-1] or {})
    if len(outputs) > 1:
        document["earlier_runs"] = outputs[:-1]  # multi_turn: run 1; the top level is the last run
    document.update(_extra_runoutput)
    path = cc.FIXTURES / FRAMEWORK / f"{scenario}.runoutput.json"
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


# -- the scenario table --------------------------------------------------------------------------

TEAM_NOTE = ("agno's leader delegates with its own tool delegate_task_to_member (recorded by a team tool hook, "
             "delegation_tool: true); the member's AGENT span is a sibling of that TOOL span, inside its interval.")

# team_nested: Office Team -> Math Team (-> Calculator Agent: multiply), then Office Team -> Research Agent (lookup)
NESTED_DELEGATION: dict[str, Any] = {
    "type": "team_member", "parent_agent": "Office Team", "child_agent": "Math Team",
    "via_tool": "delegate_task_to_member", "via_tool_call_id": ("delegate_task_to_member", 1),
    "child_tool_calls": [("delegate_task_to_member", 2), ("multiply", 1)],
    "nested": [
        {"type": "team_member", "parent_agent": "Math Team", "child_agent": "Calculator Agent",
         "via_tool": "delegate_task_to_member", "via_tool_call_id": ("delegate_task_to_member", 2),
         "child_tool_calls": [("multiply", 1)]},
        {"type": "team_member", "parent_agent": "Office Team", "child_agent": "Research Agent",
         "via_tool": "delegate_task_to_member", "via_tool_call_id": ("delegate_task_to_member", 3),
         "child_tool_calls": [("lookup", 1)]},
    ],
}

SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5), then a text answer", single_tool, {}, ""),
    ("single_tool_stream", "single_tool with run(stream=True)", single_tool_stream, {}, ""),
    ("sequential_chain", "search, then compute, then format_report, each in its own model turn", sequential_chain,
     {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {}, ""),
    ("repeated_tool", "get_weather(Paris), then get_weather(London) in the next turn", repeated_tool, {}, ""),
    ("no_tools", "the model answers without a tool call", no_tools, {}, ""),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; agno hands the error to the model, which retries with b=2",
     tool_error, {}, ""),
    ("agent_retry_after_error", "flaky_search raises agno's RetryAgentRun on its first call; agno gives the "
     "message to the model, which calls it again (ok)", agent_retry_after_error, {},
     "RetryAgentRun is agno's way for a tool to ask the model to retry: the first call's body ran and raised"),
    ("agent_run_retries", "Agent(retries=1): the first model request fails with HTTP 500, agno retries the run, "
     "multiply then runs", agent_run_retries, {}, "the failed model attempt and the retry are in the same run"),
    ("unknown_tool", "the model asks for format_disk, which the agent lacks; then multiply", unknown_tool, {}, ""),
    ("invalid_arguments", "multiply(a='ten'), then multiply without a, both fail agno's pydantic validation "
     "(the body never runs); then multiply(a=10, b=5)", invalid_arguments, {}, ""),
    ("approval_approved", "delete_file has requires_confirmation=True: the run pauses, the user confirms, "
     "continue_run executes it", approval_approved, {},
     "two traces in this file: the paused run (<Agent>.run) and the continuation (<Agent>.continue_run), "
     "same agno.run.id"),
    ("blocked_approval_rejected", "delete_file has requires_confirmation=True: the run pauses, the user rejects, "
     "continue_run tells the model", blocked_approval_rejected, {},
     "two traces in this file: the paused run (<Agent>.run) and the continuation (<Agent>.continue_run), "
     "same agno.run.id"),
    ("blocked_tool_call_limit", "tool_call_limit=1: multiply(10,5) runs; the second multiply of the same turn and "
     "the next turn's add are refused", blocked_tool_call_limit, {}, ""),
    ("multi_turn", "two runs in one session (InMemoryDb, add_history_to_context): multiply, then add",
     multi_turn, {}, "two agent runs, two traces in this file, linked only by session.id"),
    ("team_delegation", "Math Team's leader delegates to its member Calculator Agent, which calls multiply",
     team_delegation,
     {"type": "team_member", "parent_agent": "Math Team", "child_agent": "Calculator Agent",
      "via_tool": "delegate_task_to_member", "via_tool_call_id": ("delegate_task_to_member", 1),
      "child_tool_calls": [("multiply", 1)]}, TEAM_NOTE),
    ("team_delegation_stream", "team_delegation with run(stream=True)", team_delegation_stream,
     {"type": "team_member", "parent_agent": "Math Team", "child_agent": "Calculator Agent",
      "via_tool": "delegate_task_to_member", "via_tool_call_id": ("delegate_task_to_member", 1),
      "child_tool_calls": [("multiply", 1)]}, TEAM_NOTE),
    ("team_nested", "Office Team delegates to its member team Math Team (which delegates to Calculator Agent: "
     "multiply), then to Research Agent (lookup)", team_nested,
     NESTED_DELEGATION,
     TEAM_NOTE + " Non-streaming Team.run leaks its context (openinference-instrumentation-agno): after Math Team "
     "returns, Office Team's later spans are parented to the ended Math Team span."),
    ("team_nested_stream", "team_nested with run(stream=True)", team_nested_stream, NESTED_DELEGATION,
     TEAM_NOTE + " Streaming attaches and detaches in order: no mis-parenting here."),
]


def _resolve_ids(node: Any) -> Any:
    if isinstance(node, tuple) and len(node) == 2 and isinstance(node[1], int):
        return cid(*node)
    if isinstance(node, dict):
        return {k: _resolve_ids(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve_ids(v) for v in node]
    return node


def run(scenario: str, description: str, body: Callable[[], None], delegation: dict[str, Any], notes: str) -> None:
    global _scenario_tag
    exporter.clear()
    logs_exporter.clear()
    cc.reset_truth()
    _runoutputs.clear()
    _extra_runoutput.clear()
    _scripted_ids.clear()
    _scenario_tag = scenario
    outcome, error = "ok", None
    try:
        contextvars.Context().run(body)  # an empty context: no leaked span from an earlier scenario
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    logs_provider.force_flush()
    statuses = [str(getattr(o, "status", "")) for o in _runoutputs]
    if outcome == "ok" and any("error" in s.lower() for s in statuses):
        outcome, error = "error", f"agno run status {statuses}"
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": _resolve_ids(delegation),
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
    }, list(logs_exporter.get_finished_logs()))
    _write_runoutputs(scenario)


if __name__ == "__main__":
    chosen = {name for name in sys.argv[1:] if not name.startswith("--")}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
