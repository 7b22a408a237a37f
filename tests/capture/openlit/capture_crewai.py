"""Capture OpenLIT over CrewAI: ``openlit.init`` auto-instrumenting Crews on a scripted model.

As in ``capture_langgraph.py``, ``openlit.init`` reuses the global in-memory tracer and logger
providers of ``capture_common`` (no OTLP endpoint; metrics off). CrewAI's own telemetry and
tracing are switched off before it is imported. Agents use CrewAI's ``LLM`` with the
``openai/`` provider pointed at ``ScriptedOpenAI`` on 127.0.0.1.

CrewAI hands a tool neither its call id nor its agent: each tool is built for one agent, and
the id is the script's, found again by the call's name and arguments (unique in a scenario).
Calls CrewAI refuses (unknown tool, bad arguments, a spent usage limit, a hook's veto) are
added by the scenario. Written to ``tests/fixtures/corpus/openlit_crewai/``.

Run:  /tmp/capture-openlit/bin/python tests/capture/openlit/capture_crewai.py [scenario ...]
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("OPENLIT_", "OPENAI_", "OTEL_", "CREWAI_"))]:
    del os.environ[key]
os.environ.update(CREWAI_DISABLE_TELEMETRY="true", CREWAI_DISABLE_TRACKING="true", CREWAI_TRACING_ENABLED="false")

import capture_common as cc  # noqa: E402
from capture_common import reply  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

FRAMEWORK = "openlit_crewai"
provider, exporter = cc.tracing("corpus-openlit-crewai")
logger_provider, log_exporter = cc.logging_provider("corpus-openlit-crewai")
trace.set_tracer_provider(provider)
_logs.set_logger_provider(logger_provider)

import openlit  # noqa: E402

PRICING = Path(__file__).with_name("pricing.json")  # no prices: else openlit.init fetches its table from the web

openlit.init(application_name="corpus-openlit-crewai", environment="capture", disable_metrics=True,
             capture_message_content=True, pricing_json=str(PRICING))

from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.hooks import register_before_tool_call_hook, unregister_before_tool_call_hook  # noqa: E402
from crewai.tools import tool  # noqa: E402

server = cc.ScriptedOpenAI()
_scenario = ""
_ids: dict[tuple[str, str], str] = {}
Result = dict[str, Any]


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    """A call found again by name and arguments; CrewAI hands ``10`` to a float parameter as ``10.0``."""
    plain = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in arguments.items()}
    return name, json.dumps(plain, sort_keys=True)


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A scripted call, numbered per tool in the scenario (ids must be unique in the whole corpus)."""
    n = 1 + sum(1 for known, _ in _ids if known == name)
    call_id = f"call_olc_{_scenario}_{name}_{n}"
    _ids[_key(name, arguments)] = call_id
    return cc.tool_call(name, arguments, call_id)


def _id_of(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call_id = _ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, cc.current_agent.get(), **_id_of(name, arguments), **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, **_id_of(name, arguments))


# -- tools ------------------------------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b})
    return a * b


def lookup_weather(city: str) -> str:
    """Current weather for a city."""
    ran("lookup_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}.get(city, "unknown")


def get_user_city(user: str) -> str:
    """The city a user lives in."""
    ran("get_user_city", {"user": user})
    return {"alice": "Lyon"}.get(user, "Paris")


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        ran("divide", {"a": a, "b": b}, "error", error="ZeroDivisionError: division by zero")
    else:
        ran("divide", {"a": a, "b": b})
    return a / b


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


def llm(stream: bool = False) -> LLM:
    return LLM(model=f"openai/{server.model}", base_url=server.base_url, api_key="x", max_retries=0, stream=stream)


def agent(role: str, tools: list[Any], **options: Any) -> Agent:
    built = [item if hasattr(item, "run") else owned_by(role, item) for item in tools]
    return Agent(role=role, goal=f"answer as the {role}", backstory=f"You are the {role}.",
                 llm=options.pop("llm", llm()), tools=built, verbose=False, **options)


def crew(member: Agent, task: str, **options: Any) -> Any:
    job = Task(description=task, expected_output="a short answer", agent=member)
    return Crew(agents=[member], tasks=[job], verbose=False, **options).kickoff()


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("50"))
    crew(agent("calculator", [multiply]), "What is 10 times 5?")
    return {}


def single_tool_streaming() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("50"))
    crew(agent("calculator", [multiply], llm=llm(stream=True)), "What is 10 times 5?")
    return {"notes": "LLM(stream=True): the model is asked with stream=true."}


def sequential_chain() -> Result:
    server.script(reply(tool_calls=[call("get_user_city", {"user": "alice"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "Lyon"})]),
                  reply("Alice is in Lyon: cloudy, 18C."))
    crew(agent("weather_assistant", [get_user_city, lookup_weather]), "What is the weather where alice lives?")
    return {}


def parallel_tools() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"}), call("lookup_weather", {"city": "London"})]),
                  reply("Paris is sunny, London rainy."))
    crew(agent("weather_assistant", [lookup_weather]), "Weather in Paris and London?")
    return {"notes": "Two calls of one tool in one model turn."}


def repeated_tool() -> Result:
    server.script(reply(tool_calls=[call("lookup_weather", {"city": "Paris"})]),
                  reply(tool_calls=[call("lookup_weather", {"city": "London"})]),
                  reply("Paris is sunny, London rainy."))
    crew(agent("weather_assistant", [lookup_weather]), "Weather in Paris, then London?")
    return {}


def no_tools() -> Result:
    server.script(reply("Hello! How can I help?"))
    crew(agent("calculator", [multiply]), "Say hello")
    return {}


def tool_error() -> Result:
    server.script(reply(tool_calls=[call("divide", {"a": 10, "b": 0})]),
                  reply(tool_calls=[call("divide", {"a": 10, "b": 2})]),
                  reply("10 / 2 = 5"))
    crew(agent("calculator", [divide]), "Divide 10 by 0, or by something sensible")
    return {"notes": "divide(b=0) raises ZeroDivisionError; CrewAI tells the model, which retries with b=2."}


def unknown_tool() -> Result:
    server.script(reply(tool_calls=[call("format_disk", {"drive": "C:"})]),
                  reply(tool_calls=[call("multiply", {"a": 6, "b": 7})]),
                  reply("42"))
    refused("format_disk", {"drive": "C:"}, "calculator", "no tool of that name", "unknown_tool")
    crew(agent("calculator", [multiply]), "Format the disk, then multiply 6 by 7")
    return {}


def invalid_arguments() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": "ten", "b": 5})]),
                  reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]),
                  reply("50"))
    refused("multiply", {"a": "ten", "b": 5}, "calculator", "the tool's args schema rejects a='ten'",
            "invalid_arguments")
    crew(agent("calculator", [multiply]), "What is ten times 5?")
    return {}


def blocked_usage_limit() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]),
                  reply(tool_calls=[call("multiply", {"a": 50, "b": 2})]),
                  reply("50, and I may not multiply again"))
    crew(agent("calculator", [owned_by("calculator", multiply, max_usage_count=1)]), "What is 10 times 5, times 2?")
    refused("multiply", {"a": 50, "b": 2}, "calculator", "max_usage_count=1 already spent", "limit")
    return {"notes": "tool(max_usage_count=1): CrewAI refuses the second call and tells the model."}


def blocked_hook() -> Result:
    def no_system_paths(context: Any) -> bool | None:
        return False if "/etc/" in str(context.tool_input) else None

    server.script(reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"})]),
                  reply(tool_calls=[call("delete_file", {"path": "/srv/scratch.txt"})]),
                  reply("Deleted the scratch file; /etc/passwd was refused."))
    refused("delete_file", {"path": "/etc/passwd"}, "janitor", "a before_tool_call hook returned False",
            "policy_guard")
    register_before_tool_call_hook(no_system_paths)
    try:
        crew(agent("janitor", [delete_file]), "Delete /etc/passwd, then /srv/scratch.txt")
    finally:
        unregister_before_tool_call_hook(no_system_paths)
    return {"notes": "A before_tool_call hook vetoes the /etc call (the body never runs); CrewAI's approval point."}


def delegation() -> Result:
    name = "delegate_work_to_coworker"
    arguments = {"task": "Look up OCaml", "context": "the user asks what OCaml is", "coworker": "researcher"}

    def record_delegation(context: Any) -> None:
        if context.tool_name == name:
            cc.record(name, dict(context.tool_input), "ok", context.agent.role, **_id_of(name, arguments),
                      framework_tool=True, recorded_by="before_tool_call hook")

    server.script(reply(tool_calls=[call(name, arguments)]),
                  reply(tool_calls=[call("lookup", {"term": "OCaml"})]),
                  reply("OCaml is a statically typed functional language"),
                  reply("The researcher says OCaml is statically typed and functional"))
    lead = agent("lead", [], allow_delegation=True)
    researcher = agent("researcher", [lookup])
    job = Task(description="Tell me about OCaml", expected_output="a short answer", agent=lead)
    register_before_tool_call_hook(record_delegation)
    try:
        Crew(agents=[lead, researcher], tasks=[job], process=Process.sequential, verbose=False).kickoff()
    finally:
        unregister_before_tool_call_hook(record_delegation)
    return {"delegation": {"type": "delegate_work_to_coworker", "parent_agent": "lead", "child_agent": "researcher",
                           "via_tool": name, "via_tool_call_id": _ids[_key(name, arguments)]},
            "notes": "lead (allow_delegation=True) delegates with CrewAI's own tool; recorded by a before_tool_call hook."}


def multi_turn() -> Result:
    server.script(reply(tool_calls=[call("multiply", {"a": 10, "b": 5})]), reply("50"),
                  reply(tool_calls=[call("multiply", {"a": 50, "b": 2})]), reply("100"))
    calculator = agent("calculator", [multiply])
    first = calculator.kickoff("What is 10 times 5?")
    calculator.kickoff([{"role": "user", "content": "What is 10 times 5?"}, {"role": "assistant", "content": str(first.raw)},
                        {"role": "user", "content": "Now double it"}])
    return {"notes": "Agent.kickoff twice, the second with the first exchange as messages."}


SCENARIOS: dict[str, Callable[[], Result]] = {
    fn.__name__: fn for fn in (single_tool, single_tool_streaming, sequential_chain, parallel_tools, repeated_tool,
                               no_tools, tool_error, unknown_tool, invalid_arguments, blocked_usage_limit, blocked_hook,
                               delegation, multi_turn)
}

if __name__ == "__main__":
    with server:
        for name in sys.argv[1:] or list(SCENARIOS):
            _scenario = name
            _ids.clear()
            cc.reset_truth()
            exporter.clear()
            log_exporter.clear()
            extra = SCENARIOS[name]()
            if server.left():
                raise AssertionError(f"{name}: {server.left()} scripted answers were never asked for")
            provider.force_flush()
            logger_provider.force_flush()
            cc.save_scenario(FRAMEWORK, name, list(exporter.get_finished_spans()),
                             {"tool_executions": cc.truth_snapshot(), "delegation": extra.get("delegation", {}),
                              "notes": extra.get("notes", "")}, list(log_exporter.get_finished_logs()))
