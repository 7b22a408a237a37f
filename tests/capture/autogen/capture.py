"""Capture autogen-agentchat's own GenAI spans (and its runtime's message spans), offline.

The model is autogen-ext's ``ReplayChatCompletionClient``, fed ``CreateResult``s whose
content is ``FunctionCall``s with ids chosen here (ground truth too). autogen takes its
tracer from the global OpenTelemetry provider (``trace.get_tracer("autogen-core")`` for the
GenAI spans, ``get_tracer_provider()`` for a team's ``SingleThreadedAgentRuntime``), so the
provider is set before autogen is imported.

A tool body learns its call id from ``run_json(..., call_id=…)``, which the workbench passes
to every tool; ``RecordedTool`` keeps it in a context variable for the body. The agent that
owns a tool is known from construction: each tool object belongs to one agent.

    /tmp/capture-autogen/bin/python tests/capture/autogen/capture.py [scenario ...]
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import traceback
from pathlib import Path
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
from opentelemetry import trace  # noqa: E402

FRAMEWORK = "autogen"
provider, exporter = cc.tracing("corpus-autogen")
trace.set_tracer_provider(provider)

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.base import Handoff  # noqa: E402
from autogen_agentchat.conditions import MaxMessageTermination, SourceMatchTermination, TextMentionTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat, Swarm  # noqa: E402
from autogen_agentchat.tools import AgentTool  # noqa: E402
from autogen_core import CancellationToken, FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage  # noqa: E402
from autogen_core.tools import FunctionTool, StaticWorkbench, ToolResult, TextResultContent  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

MODEL_INFO = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                       structured_output=False)
USAGE = RequestUsage(prompt_tokens=11, completion_tokens=7)
_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("call_id", default=None)


def calls(*function_calls: tuple[str, str, str]) -> CreateResult:
    """One model turn asking for (name, arguments JSON, call id) calls."""
    return CreateResult(finish_reason="function_calls", usage=USAGE, cached=False,
                        content=[FunctionCall(id=cid, name=name, arguments=args) for name, args, cid in function_calls])


def say(content: str) -> CreateResult:
    return CreateResult(finish_reason="stop", usage=USAGE, cached=False, content=content)


def model(*turns: CreateResult | str) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(turns), model_info=MODEL_INFO)


class RecordedTool(FunctionTool):
    """A FunctionTool whose body can read the call id that the workbench handed to run_json.

    The bodies are coroutines: FunctionTool runs a synchronous function in an executor
    thread, which would not see the context variable.
    """

    def __init__(self, func: Callable[..., Any], **options: Any) -> None:
        super().__init__(func, **{"description": func.__doc__ or func.__name__, **options})

    async def run_json(self, args: Mapping[str, Any], cancellation_token: CancellationToken,
                       call_id: str | None = None) -> Any:
        token = _call_id.set(call_id)
        try:
            return await super().run_json(args, cancellation_token, call_id=call_id)
        finally:
            _call_id.reset(token)


def _record(agent: str, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, agent, tool_call_id=_call_id.get(), **extra)


def toolset(agent: str) -> dict[str, RecordedTool]:
    """Every tool, bound to the agent that will own it (the body records that agent)."""

    async def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        _record(agent, "multiply", {"a": a, "b": b})
        return a * b

    async def add(a: int, b: int) -> int:
        """Add two integers."""
        _record(agent, "add", {"a": a, "b": b})
        return a + b

    async def get_weather(city: str) -> str:
        """Current weather of a city."""
        _record(agent, "get_weather", {"city": city})
        return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")

    async def search(query: str) -> str:
        """Search the catalogue."""
        _record(agent, "search", {"query": query})
        return "widget: 42 EUR"

    async def compute(expression: str) -> int:
        """Evaluate 'a * b'."""
        _record(agent, "compute", {"expression": expression})
        left, right = expression.split("*")
        return int(left) * int(right)

    async def fetch_url(url: str) -> str:
        """Fetch a URL (the network is always unreachable here)."""
        _record(agent, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
        raise ConnectionError("network unreachable")

    async def delete_file(path: str) -> str:
        """Delete a file."""
        _record(agent, "delete_file", {"path": path})
        return f"deleted {path}"

    async def lookup(term: str) -> str:
        """Encyclopedia lookup."""
        _record(agent, "lookup", {"term": term})
        return f"{term}: a statically typed functional language"

    async def refund(order_id: str) -> str:
        """Refund an order."""
        _record(agent, "refund", {"order_id": order_id})
        return f"refunded {order_id}"

    funcs = [multiply, add, get_weather, search, compute, fetch_url, delete_file, lookup, refund]
    return {f.__name__: RecordedTool(f) for f in funcs}


def agent_with(name: str, client: ReplayChatCompletionClient, *tool_names: str, **options: Any) -> AssistantAgent:
    tools = toolset(name)
    return AssistantAgent(name, model_client=client, tools=[tools[t] for t in tool_names], **options)


class RecordedAgentTool(AgentTool):
    """autogen's AgentTool, recording itself when it starts (before the inner agent's tools)."""

    def __init__(self, agent: AssistantAgent, owner: str) -> None:
        super().__init__(agent)
        self.owner = owner

    async def run_json_stream(self, args: Mapping[str, Any], cancellation_token: CancellationToken,
                              call_id: str | None = None) -> AsyncGenerator[Any, None]:
        # AssistantAgent streams every tool call, so a stream tool is entered here, not in run_json.
        cc.record(self.name, dict(args), "ok", self.owner, tool_call_id=call_id, delegates_to=self._agent.name)
        async for item in super().run_json_stream(args, cancellation_token, call_id=call_id):
            yield item


class RecordedHandoff(Handoff):
    """autogen's Handoff, whose tool (autogen runs it like any tool) records itself."""

    owner: str

    @property
    def handoff_tool(self) -> FunctionTool:
        async def handoff() -> str:
            _record(self.owner, self.name, {}, handoff=True, target=self.target)
            return self.message

        return RecordedTool(handoff, name=self.name, description=self.description, strict=True)


class GuardedWorkbench(StaticWorkbench):
    """The workbench is where an AssistantAgent's tool calls go: this one refuses system paths."""

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None,
                        cancellation_token: CancellationToken | None = None, call_id: str | None = None) -> ToolResult:
        if name == "delete_file" and str((arguments or {}).get("path", "")).startswith("/etc"):
            return ToolResult(name=name, is_error=True,
                              result=[TextResultContent(content="policy: deleting system files is not allowed")])
        return await super().call_tool(name, arguments, cancellation_token, call_id)


# -- scenarios ------------------------------------------------------------------------


async def run_alone_or_in_team(agent: AssistantAgent, task: str, in_team: bool) -> None:
    """``agent.run``, or a one-agent team in an application span: a team's runtime traces its messages."""
    if not in_team:
        await agent.run(task=task)
        return
    with trace.get_tracer("corpus-app").start_as_current_span("handle request"):
        await RoundRobinGroupChat([agent], termination_condition=SourceMatchTermination([agent.name])).run(task=task)


async def scenario_single_tool() -> None:
    agent = agent_with("calculator", model(calls(("multiply", '{"a": 10, "b": 5}', "call_mul_1"))), "multiply", "add")
    await agent.run(task="What is 10 times 5?")


async def scenario_parallel_tools() -> None:
    agent = agent_with("weather", model(calls(("get_weather", '{"city": "Paris"}', "call_w_paris"),
                                              ("get_weather", '{"city": "London"}', "call_w_london"))), "get_weather")
    await agent.run(task="Weather in Paris and London?")


async def scenario_sequential_chain() -> None:
    agent = agent_with("shopper", model(calls(("search", '{"query": "widget price"}', "call_search_1")),
                                        calls(("compute", '{"expression": "42*3"}', "call_compute_1")),
                                        say("3 widgets cost 126 EUR")), "search", "compute", max_tool_iterations=3)
    await agent.run(task="How much do 3 widgets cost?")


async def scenario_tool_error() -> None:
    agent = agent_with("fetcher", model(calls(("fetch_url", '{"url": "https://example.invalid/"}', "call_fetch_1")),
                                        calls(("fetch_url", '{"url": "https://mirror.example.invalid/"}', "call_fetch_2")),
                                        say("both fetches failed")), "fetch_url", max_tool_iterations=3)
    await agent.run(task="Fetch the page")


async def scenario_unknown_tool(in_team: bool = False) -> None:
    agent = agent_with("calculator", model(calls(("format_disk", '{"drive": "C:"}', "call_unknown_1")),
                                           calls(("multiply", '{"a": 6, "b": 7}', "call_mul_after_unknown")),
                                           say("42")), "multiply", "add", max_tool_iterations=3)
    cc.add_refused("format_disk", {"drive": "C:"}, "calculator", "tool not registered: AssistantAgent answers "
                   "\"Error: tool 'format_disk' not found in any workbench\"", "unknown_tool", tool_call_id="call_unknown_1")
    await run_alone_or_in_team(agent, "Format the disk, then multiply 6 by 7", in_team)


async def scenario_invalid_arguments() -> None:
    agent = agent_with("calculator", model(calls(("multiply", '{"a": "ten", "b": 5}', "call_mul_bad")),
                                           calls(("multiply", '{"a": 10, "b": 5}', "call_mul_good")),
                                           say("50")), "multiply", "add", max_tool_iterations=3)
    cc.add_refused("multiply", {"a": "ten", "b": 5}, "calculator", "pydantic validation of the arguments failed "
                   "(a is not an int) before the function was called", "invalid_arguments", tool_call_id="call_mul_bad")
    await agent.run(task="What is ten times 5?")


async def scenario_blocked_workbench(in_team: bool = False) -> None:
    tools = toolset("janitor")
    agent = AssistantAgent("janitor", max_tool_iterations=3, workbench=GuardedWorkbench([tools["delete_file"]]),
                           model_client=model(calls(("delete_file", '{"path": "/etc/passwd"}', "call_del_1")),
                                              calls(("delete_file", '{"path": "/tmp/scratch.txt"}', "call_del_2")),
                                              say("removed the scratch file only")))
    cc.add_refused("delete_file", {"path": "/etc/passwd"}, "janitor", "a Workbench subclass answered the call with "
                   "is_error=True without running the tool", "policy_guard", tool_call_id="call_del_1")
    await run_alone_or_in_team(agent, "Delete /etc/passwd and /tmp/scratch.txt", in_team)


async def scenario_delegation_agent_tool() -> None:
    researcher = agent_with("researcher", model(calls(("lookup", '{"term": "OCaml"}', "call_lookup_1")),
                                                say("OCaml is a statically typed functional language")),
                            "lookup", description="Answers encyclopedia questions.", max_tool_iterations=2)
    router = AssistantAgent("router", tools=[RecordedAgentTool(researcher, owner="router")],
                            model_client=model(calls(("researcher", '{"task": "What is OCaml?"}', "call_delegate_1")),
                                               say("The researcher says OCaml is statically typed and functional")),
                            max_tool_iterations=2)
    await router.run(task="Tell me about OCaml")


async def scenario_delegation_swarm_handoff() -> None:
    triage = AssistantAgent("triage", handoffs=[RecordedHandoff(target="billing", owner="triage")], model_client=model(
        calls(("transfer_to_billing", "{}", "call_transfer_1"))))
    billing = agent_with("billing", model(calls(("refund", '{"order_id": "A-17"}', "call_refund_1")),
                                          say("Order A-17 is refunded. TERMINATE")), "refund", max_tool_iterations=2)
    team = Swarm([triage, billing], termination_condition=TextMentionTermination("TERMINATE") | MaxMessageTermination(12))
    await team.run(task="Refund order A-17")


async def scenario_delegation_round_robin() -> None:
    planner = agent_with("planner", model(calls(("search", '{"query": "widget price"}', "call_search_1"))), "search")
    calculator = agent_with("calculator", model(calls(("multiply", '{"a": 42, "b": 3}', "call_mul_1"))), "multiply")
    team = RoundRobinGroupChat([planner, calculator], termination_condition=SourceMatchTermination(["calculator"]))
    await team.run(task="Price of 3 widgets?")


def in_outer_span(team_scenario: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """The same team run inside an application span, as a web request would wrap it."""

    async def run() -> None:
        with trace.get_tracer("corpus-app").start_as_current_span("handle request"):
            await team_scenario()

    return run


async def scenario_multi_turn() -> None:
    agent = agent_with("calculator", model(calls(("multiply", '{"a": 10, "b": 5}', "call_turn1_mul")),
                                           calls(("add", '{"a": 50, "b": 7}', "call_turn2_add"))), "multiply", "add")
    await agent.run(task="What is 10 times 5?")
    await agent.run(task="Now add 7 to that")


AGENT_TOOL = {"type": "agent-as-tool (AgentTool)", "parent_agent": "router", "via_tool": "researcher",
              "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}
SWARM = {"type": "handoff (Swarm, handoffs=[...])", "parent_agent": "triage", "via_tool": "transfer_to_billing",
         "via_tool_call_id": "call_transfer_1", "child_agent": "billing", "child_tool_calls": ["call_refund_1"]}
ROUND_ROBIN = {"type": "team turn-taking (RoundRobinGroupChat)", "agents": ["planner", "calculator"],
               "note": "no agent delegates: the team gives each agent a turn"}

SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[None]], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5); AssistantAgent returns the tool summary (max_tool_iterations=1)",
     scenario_single_tool, {}, ""),
    ("parallel_tools", "two get_weather calls in one model response", scenario_parallel_tools, {},
     "AssistantAgent runs the calls of one response concurrently (asyncio.gather)"),
    ("sequential_chain", "search, then compute, one call per model turn (max_tool_iterations=3)",
     scenario_sequential_chain, {}, ""),
    ("tool_error", "fetch_url raises twice; the workbench turns each exception into an error result for the model",
     scenario_tool_error, {}, "autogen never lets a tool exception end the run"),
    ("unknown_tool", "model asks for format_disk (not registered), then multiply", scenario_unknown_tool, {}, ""),
    ("unknown_tool_team", "unknown_tool with the agent in a one-agent RoundRobinGroupChat, inside an application span",
     lambda: scenario_unknown_tool(in_team=True), {}, "the team's runtime spans carry the messages, the requested "
     "call included"),
    ("invalid_arguments", "multiply(a='ten') fails pydantic validation, then multiply(10, 5)",
     scenario_invalid_arguments, {}, ""),
    ("blocked_workbench", "a StaticWorkbench subclass refuses delete_file(/etc/passwd); delete_file(/tmp/scratch.txt) "
     "runs", scenario_blocked_workbench, {}, "agentchat has no tool hook or approval for AssistantAgent tool calls; "
     "the workbench is the extension point every call goes through"),
    ("blocked_workbench_team", "blocked_workbench with the agent in a one-agent RoundRobinGroupChat, inside an "
     "application span", lambda: scenario_blocked_workbench(in_team=True), {}, ""),
    ("delegation_agent_tool", "router calls AgentTool(researcher); researcher calls lookup",
     scenario_delegation_agent_tool, AGENT_TOOL, "the AgentTool records itself when it starts"),
    ("delegation_swarm_handoff", "Swarm: triage calls transfer_to_billing (a handoff), billing calls refund",
     scenario_delegation_swarm_handoff, SWARM, "the handoff tool is a Handoff subclass "
     "whose tool records itself and returns autogen's default handoff message"),
    ("delegation_swarm_handoff_outer_span", "the Swarm handoff run inside an application span",
     in_outer_span(scenario_delegation_swarm_handoff), SWARM, "without an enclosing span every runtime message "
     "starts a trace of its own; with one, the whole team run is one trace"),
    ("delegation_round_robin", "RoundRobinGroupChat: planner calls search, then calculator calls multiply",
     scenario_delegation_round_robin, ROUND_ROBIN, ""),
    ("delegation_round_robin_outer_span", "the RoundRobinGroupChat run inside an application span",
     in_outer_span(scenario_delegation_round_robin), ROUND_ROBIN, ""),
    ("multi_turn", "the same AssistantAgent run twice: multiply, then add", scenario_multi_turn, {},
     "two agent runs: two traces"),
]


def capture(name: str, description: str, body: Callable[[], Awaitable[None]], delegation: dict[str, Any], notes: str) -> None:
    exporter.clear()
    cc.reset_truth()
    outcome, error = "ok", None
    try:
        asyncio.run(body())
    except Exception as exc:  # noqa: BLE001 - a failed run is part of the ground truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    truth = {"description": description, "run_outcome": outcome, "run_error": error,
             "tool_executions": cc.truth_snapshot(), "delegation": delegation, "notes": notes}
    cc.save_scenario(FRAMEWORK, name, list(exporter.get_finished_spans()), truth)


if __name__ == "__main__":
    for name, description, body, delegation, notes in SCENARIOS:
        if not sys.argv[1:] or name in sys.argv[1:]:
            capture(name, description, body, delegation, notes)
