"""A hand-written tool-calling agent loop, for tracing SDKs that trace code rather than a framework.

Langfuse's ``@observe`` and MLflow's ``@mlflow.trace`` are how teams trace an agent they wrote
themselves: a loop that asks the model, runs the tools it asked for, and tells it the results.
This module is that loop, with the usual scenarios, and a ``Tracing`` the capture script fills
with its SDK's decorators (the agent's run, each tool, the approval decision) and its SDK's
traced model call. Every refusal (unknown tool, invalid arguments, limit, denied approval) is
the loop's own decision, added to the truth where the model asked for the call; every tool
body records itself with the call id the model gave it.

Only the standard library, ``capture_common`` and the ``openai`` client are imported.
"""

from __future__ import annotations

import contextvars
import inspect
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import capture_common as cc
from capture_common import reply

call_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("call_id", default=None)
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass
class Tracing:
    """What a capture script's SDK supplies: decorators and its traced chat completion."""

    agent: Callable[[str], Decorator]  # the run of the named agent
    tool: Callable[[str], Decorator]  # one tool execution
    decision: Callable[[str], Decorator]  # a human (or policy) decision on a call
    chat: Callable[..., dict[str, Any]]  # (messages, tools, stream) -> assistant message dict
    conversation: Callable[[str], Any]  # context manager: runs of one conversation (session id)
    framework: str = ""
    prefix: str = ""


@dataclass
class Agent:
    name: str
    tools: dict[str, Callable[..., Any]]
    instructions: str = "Use the tools."
    max_tool_calls: int | None = None
    needs_approval: frozenset[str] = frozenset()
    approver: Callable[[str, dict[str, Any]], tuple[bool, str]] | None = None
    parallel: bool = False
    stream: bool = False
    history: list[dict[str, Any]] = field(default_factory=list)


def schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI function schema of a plain Python function (ints, floats, strings)."""
    kinds = {int: "integer", float: "number", str: "string"}
    params = inspect.signature(fn, eval_str=True).parameters
    properties = {name: {"type": kinds.get(p.annotation, "string")} for name, p in params.items()}
    return {"type": "function", "function": {"name": fn.__name__, "description": (fn.__doc__ or "").strip(),
                                             "parameters": {"type": "object", "properties": properties,
                                                            "required": list(params)}}}


def bound(fn: Callable[..., Any], arguments: dict[str, Any]) -> str | None:
    """Why the arguments do not fit the tool (missing, unexpected or mistyped), or None."""
    try:
        inspect.signature(fn, eval_str=True).bind(**arguments)
    except TypeError as exc:
        return str(exc)
    for name, value in arguments.items():
        kind = inspect.signature(fn, eval_str=True).parameters[name].annotation
        if kind in (int, float) and not isinstance(value, (int, float)):
            return f"{name} must be a number, not {value!r}"
    return None


class Loop:
    """Runs agents against ``server`` with ``tracing``; scenarios live in ``SCENARIOS``."""

    def __init__(self, tracing: Tracing, server: cc.ScriptedOpenAI) -> None:
        self.tracing = tracing
        self.server = server
        self.scenario = ""
        self.agents = contextvars.ContextVar("agent", default="?")

    def cid(self, tool: str, n: int = 1) -> str:
        return f"call_{self.tracing.prefix}_{self.scenario}_{tool}_{n}"

    def call(self, name: str, arguments: dict[str, Any] | str, n: int = 1) -> dict[str, Any]:
        return cc.tool_call(name, arguments, self.cid(name, n))

    def ran(self, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
        cc.record(name, arguments, outcome, self.agents.get(), tool_call_id=call_id_var.get(),
                  tool_call_id_source="script", **extra)

    def run(self, agent: Agent, question: str) -> str:
        @self.tracing.agent(agent.name)
        def run_agent(question: str) -> str:
            self.agents.set(agent.name)
            return self._turns(agent, question)

        return contextvars.copy_context().run(run_agent, question)

    def _turns(self, agent: Agent, question: str) -> str:
        opening = agent.history or [{"role": "system", "content": agent.instructions}]
        messages = [*opening, {"role": "user", "content": question}]
        schemas = [schema(fn) for fn in agent.tools.values()] or None
        calls_made = 0
        while True:
            message = self.tracing.chat(messages, schemas, agent.stream)
            messages.append(message)
            requested = message.get("tool_calls") or []
            if not requested:
                agent.history[:] = messages
                return message.get("content") or ""
            answers: dict[str, str] = {}
            runnable = []
            for call in requested:
                name, call_id = call["function"]["name"], call["id"]
                arguments = json.loads(call["function"]["arguments"] or "{}")
                refusal = self._refusal(agent, name, arguments, calls_made)
                if refusal is not None:
                    reason, kind = refusal
                    cc.add_refused(name, arguments, agent.name, reason, kind, tool_call_id=call_id,
                                   tool_call_id_source="script")
                    answers[call_id] = f"Error: {reason}"
                    continue
                calls_made += 1
                if agent.parallel:  # run together after the turn's refusals
                    runnable.append((call_id, name, arguments))
                else:  # run now: the truth keeps the order the model asked in
                    answers.update(self._execute(agent, [(call_id, name, arguments)]))
            answers.update(self._execute(agent, runnable))
            messages.extend({"role": "tool", "tool_call_id": c["id"], "content": answers[c["id"]]} for c in requested)

    def _refusal(self, agent: Agent, name: str, arguments: dict[str, Any], calls_made: int) -> tuple[str, str] | None:
        if name not in agent.tools:
            return f"no tool named {name!r}", "unknown_tool"
        problem = bound(agent.tools[name], arguments)
        if problem is not None:
            return f"invalid arguments for {name}: {problem}", "invalid_arguments"
        if agent.max_tool_calls is not None and calls_made >= agent.max_tool_calls:
            return f"tool call limit of {agent.max_tool_calls} reached", "limit"
        if name in agent.needs_approval and agent.approver is not None:
            approved, why = self.tracing.decision("approve_tool_call")(agent.approver)(name, arguments)
            if not approved:
                return f"approval denied: {why}", "approval_denied"
        return None

    def _execute(self, agent: Agent, calls: list[tuple[str, str, dict[str, Any]]]) -> list[tuple[str, str]]:
        def one(call_id: str, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
            call_id_var.set(call_id)
            try:
                return call_id, json.dumps(self.tracing.tool(name)(agent.tools[name])(**arguments))
            except Exception as exc:  # the model is told, the run goes on
                return call_id, f"Error: {type(exc).__name__}: {exc}"

        if agent.parallel and len(calls) > 1:
            with ThreadPoolExecutor(max_workers=len(calls)) as pool:
                futures = [pool.submit(contextvars.copy_context().run, one, *c) for c in calls]
                return [f.result() for f in futures]
        return [contextvars.copy_context().run(one, *c) for c in calls]


def accumulate(chunks: Any) -> dict[str, Any]:
    """The assistant message of a streamed chat completion (chunks of the openai client)."""
    content, calls = "", {}
    for chunk in chunks:
        for choice in chunk.choices or ():
            delta = choice.delta
            content += delta.content or ""
            for part in delta.tool_calls or ():
                entry = calls.setdefault(part.index, {"id": part.id, "type": "function",
                                                      "function": {"name": "", "arguments": ""}})
                entry["id"] = part.id or entry["id"]
                entry["function"]["name"] += part.function.name or ""
                entry["function"]["arguments"] += part.function.arguments or ""
    return reply(content or None, [calls[i] for i in sorted(calls)] or None)


def as_message(completion: Any) -> dict[str, Any]:
    """The assistant message of a chat completion, as the loop keeps it."""
    message = completion.choices[0].message
    calls = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
             for c in message.tool_calls or ()]
    return reply(message.content, calls or None)


# -- tools ------------------------------------------------------------------------------------

WEATHER = {"Paris": "sunny, 21C", "London": "rain, 14C", "Lyon": "cloudy, 18C"}


def tools(loop: Loop) -> dict[str, Callable[..., Any]]:
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        loop.ran("multiply", {"a": a, "b": b})
        return a * b

    def lookup_weather(city: str) -> str:
        """Current weather for a city."""
        loop.ran("lookup_weather", {"city": city})
        return WEATHER.get(city, "unknown")

    def get_user_city(user: str) -> str:
        """The city a user lives in."""
        loop.ran("get_user_city", {"user": user})
        return {"alice": "Lyon"}.get(user, "Paris")

    def celsius_to_fahrenheit(celsius: float) -> float:
        """Convert a temperature from Celsius to Fahrenheit."""
        loop.ran("celsius_to_fahrenheit", {"celsius": celsius})
        return celsius * 9 / 5 + 32

    def fetch_url(url: str) -> str:
        """Fetch a URL. The primary host is down."""
        if "mirror" not in url:
            loop.ran("fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
            raise ConnectionError("network unreachable")
        loop.ran("fetch_url", {"url": url})
        return "<html>release notes: v2 is out</html>"

    def delete_file(path: str) -> str:
        """Delete a file."""
        loop.ran("delete_file", {"path": path})
        return f"deleted {path}"

    return {fn.__name__: fn for fn in (multiply, lookup_weather, get_user_city, celsius_to_fahrenheit, fetch_url, delete_file)}


# -- scenarios --------------------------------------------------------------------------------


def scenarios(loop: Loop) -> dict[str, Callable[[], dict[str, Any]]]:
    t = tools(loop)
    s, c = loop.server, loop.call

    def pick(*names: str) -> dict[str, Callable[..., Any]]:
        return {n: t[n] for n in names}

    def single_tool() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
        loop.run(Agent("calculator", pick("multiply")), "What is 10 times 5?")
        return {}

    def single_tool_streaming() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("multiply", {"a": 10, "b": 5})]), reply("10 times 5 is 50."))
        loop.run(Agent("calculator", pick("multiply"), stream=True), "What is 10 times 5?")
        return {"notes": "The model is asked with stream=true (server-sent events); the loop joins the chunks."}

    def sequential_chain() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("get_user_city", {"user": "alice"})]),
                 reply(tool_calls=[c("lookup_weather", {"city": "Lyon"})]),
                 reply(tool_calls=[c("celsius_to_fahrenheit", {"celsius": 18.0})]),
                 reply("Alice is in Lyon: cloudy, 64.4F."))
        loop.run(Agent("weather_assistant", pick("get_user_city", "lookup_weather", "celsius_to_fahrenheit")),
                 "What is the weather where alice lives, in Fahrenheit?")
        return {}

    def parallel_tools() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("multiply", {"a": 3, "b": 4}), c("lookup_weather", {"city": "Paris"})]),
                 reply("3*4 is 12; Paris is sunny, 21C."))
        loop.run(Agent("assistant", pick("multiply", "lookup_weather"), parallel=True), "3*4, and the weather in Paris?")
        return {"notes": "Both calls of the turn run in two threads at once; seq is the order the bodies ran."}

    def repeated_tool() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("lookup_weather", {"city": "Paris"}, 1)]),
                 reply(tool_calls=[c("lookup_weather", {"city": "London"}, 2)]),
                 reply("Paris is sunny, London rainy."))
        loop.run(Agent("weather_assistant", pick("lookup_weather")), "Weather in Paris, then London?")
        return {}

    def no_tools() -> dict[str, Any]:
        s.script(reply("Hello! How can I help?"))
        loop.run(Agent("calculator", pick("multiply")), "Hi there")
        return {}

    def tool_error() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("fetch_url", {"url": "https://primary.example/notes"})]),
                 reply("The page could not be fetched: the host is unreachable."))
        loop.run(Agent("fetcher", pick("fetch_url")), "Fetch https://primary.example/notes")
        return {"notes": "fetch_url raises ConnectionError; the loop tells the model 'Error: ...' and goes on."}

    def error_retry() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("fetch_url", {"url": "https://primary.example/notes"}, 1)]),
                 reply(tool_calls=[c("fetch_url", {"url": "https://mirror.example/notes"}, 2)]),
                 reply("v2 is out (from the mirror)."))
        loop.run(Agent("fetcher", pick("fetch_url")), "Fetch the release notes; use the mirror if the primary fails")
        return {}

    def unknown_tool() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("format_disk", {"drive": "C:"})]),
                 reply(tool_calls=[c("multiply", {"a": 6, "b": 7})]),
                 reply("I cannot format disks; 6*7 is 42."))
        loop.run(Agent("calculator", pick("multiply")), "Format the disk, then 6*7")
        return {"notes": "The loop has no tool format_disk: no tool is traced, the model is told 'Error: no tool named ...'."}

    def invalid_arguments() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("multiply", {"a": "ten"}, 1)]),
                 reply(tool_calls=[c("multiply", {"a": 10, "b": 5}, 2)]),
                 reply("10 times 5 is 50."))
        loop.run(Agent("calculator", pick("multiply")), "ten times 5")
        return {"notes": "The loop binds the arguments to the tool's signature first: b is missing, the body never runs."}

    def blocked_tool_call_limit() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("lookup_weather", {"city": "Paris"}, 1), c("lookup_weather", {"city": "London"}, 2)]),
                 reply("Paris is sunny; I may not look up London."))
        loop.run(Agent("weather_assistant", pick("lookup_weather"), max_tool_calls=1), "Weather in Paris and London?")
        return {"notes": "max_tool_calls=1: the second call of the turn is refused by the loop; the model is told."}

    def blocked_approval_denied() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("delete_file", {"path": "/etc/passwd"}, 1)]),
                 reply(tool_calls=[c("delete_file", {"path": "/srv/scratch.txt"}, 2)]),
                 reply("Deleted the scratch file; /etc/passwd was refused."))

        def operator(name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            """The operator's decision on a call that needs approval."""
            if arguments.get("path", "").startswith("/etc/"):
                return False, "system files may not be deleted"
            return True, "ok"

        loop.run(Agent("janitor", pick("delete_file"), needs_approval=frozenset({"delete_file"}), approver=operator),
                 "Delete /etc/passwd and /srv/scratch.txt")
        return {"notes": "delete_file needs approval: the traced decision denies /etc/passwd (the body never runs) "
                         "and approves /srv/scratch.txt."}

    def multi_turn() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("multiply", {"a": 2, "b": 3}, 1)]), reply("2*3 is 6."),
                 reply(tool_calls=[c("multiply", {"a": 6, "b": 7}, 2)]), reply("6*7 is 42."))
        calculator = Agent("calculator", pick("multiply"))
        with loop.tracing.conversation(f"{loop.tracing.prefix}-conversation-1"):
            loop.run(calculator, "What is 2*3?")
            loop.run(calculator, "And 6*7?")
        return {"notes": "Two runs of one agent, the second with the first's history, in one conversation (session)."}

    def delegation() -> dict[str, Any]:
        s.script(reply(tool_calls=[c("ask_weather_agent", {"question": "Weather in Paris?"})]),
                 reply(tool_calls=[c("lookup_weather", {"city": "Paris"})]),
                 reply("Paris is sunny, 21C."),
                 reply("The weather agent says Paris is sunny, 21C."))
        weather_agent = Agent("weather_agent", pick("lookup_weather"))

        def ask_weather_agent(question: str) -> str:
            """Ask the weather agent."""
            loop.ran("ask_weather_agent", {"question": question}, agent_tool=True)
            return loop.run(weather_agent, question)

        loop.run(Agent("orchestrator", {"ask_weather_agent": ask_weather_agent}), "What is the weather in Paris?")
        return {"delegation": {"from": "orchestrator", "to": "weather_agent", "via_tool": "ask_weather_agent"},
                "notes": "Agent as tool: the orchestrator's tool ask_weather_agent runs the weather agent's own loop inside."}

    return {fn.__name__: fn for fn in (single_tool, single_tool_streaming, sequential_chain, parallel_tools, repeated_tool,
                                       no_tools, tool_error, error_retry, unknown_tool, invalid_arguments,
                                       blocked_tool_call_limit, blocked_approval_denied, multi_turn, delegation)}


def run_all(loop: Loop, wanted: list[str], clear: Callable[[], None], save: Callable[[str, dict[str, Any]], None]) -> None:
    """Run the wanted scenarios (all when none named); ``save(scenario, truth)`` writes each one."""
    table = scenarios(loop)
    for name in wanted or list(table):
        loop.scenario = name
        cc.reset_truth()
        clear()
        extra = table[name]()
        if loop.server.left():
            raise AssertionError(f"{name}: {loop.server.left()} scripted answers left unused")
        save(name, {"tool_executions": cc.truth_snapshot(), **extra})
