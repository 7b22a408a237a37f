"""Live autogen-agentchat agents (``AssistantAgent`` with autogen-ext's
``ReplayChatCompletionClient``), traced by autogen's own GenAI spans into
``ReliabilitySpanProcessor``: each run is judged as the captured scenario of the same name
(tests/capture/autogen/).
"""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace

from .harness import Harness, assert_judged_as_captured

# autogen takes its tracer from the global provider, as the capture does: set before import.
HARNESS = Harness()
trace.set_tracer_provider(HARNESS.provider)

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.conditions import SourceMatchTermination  # noqa: E402
from autogen_agentchat.teams import RoundRobinGroupChat  # noqa: E402
from autogen_agentchat.tools import AgentTool  # noqa: E402
from autogen_core import FunctionCall  # noqa: E402
from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage  # noqa: E402
from autogen_core.tools import FunctionTool  # noqa: E402
from autogen_ext.models.replay import ReplayChatCompletionClient  # noqa: E402

MODEL_INFO = ModelInfo(vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN,
                       structured_output=False)
USAGE = RequestUsage(prompt_tokens=11, completion_tokens=7)


def calls(*function_calls: tuple[str, str, str]) -> CreateResult:
    """One model turn asking for (name, arguments JSON, call id) calls."""
    return CreateResult(finish_reason="function_calls", usage=USAGE, cached=False,
                        content=[FunctionCall(id=cid, name=name, arguments=args) for name, args, cid in function_calls])


def say(content: str) -> CreateResult:
    return CreateResult(finish_reason="stop", usage=USAGE, cached=False, content=content)


def model(*turns: CreateResult) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(turns), model_info=MODEL_INFO)


async def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def fetch_url(url: str) -> str:
    """Fetch a URL (the network is always unreachable here)."""
    raise ConnectionError("network unreachable")


async def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    return f"{term}: a statically typed functional language"


def tools(*funcs) -> list[FunctionTool]:
    return [FunctionTool(f, description=f.__doc__) for f in funcs]


async def single_tool() -> None:
    agent = AssistantAgent("calculator", model_client=model(calls(("multiply", '{"a": 10, "b": 5}', "call_mul_1"))),
                           tools=tools(multiply, add))
    await agent.run(task="What is 10 times 5?")


async def tool_error() -> None:
    agent = AssistantAgent("fetcher", tools=tools(fetch_url), max_tool_iterations=3, model_client=model(
        calls(("fetch_url", '{"url": "https://example.invalid/"}', "call_fetch_1")),
        calls(("fetch_url", '{"url": "https://mirror.example.invalid/"}', "call_fetch_2")),
        say("both fetches failed")))
    await agent.run(task="Fetch the page")


async def invalid_arguments() -> None:
    agent = AssistantAgent("calculator", tools=tools(multiply, add), max_tool_iterations=3, model_client=model(
        calls(("multiply", '{"a": "ten", "b": 5}', "call_mul_bad")),
        calls(("multiply", '{"a": 10, "b": 5}', "call_mul_good")),
        say("50")))
    await agent.run(task="What is ten times 5?")


async def delegation_agent_tool() -> None:
    researcher = AssistantAgent("researcher", tools=tools(lookup), description="Answers encyclopedia questions.",
                                max_tool_iterations=2, model_client=model(
                                    calls(("lookup", '{"term": "OCaml"}', "call_lookup_1")),
                                    say("OCaml is a statically typed functional language")))
    router = AssistantAgent("router", tools=[AgentTool(researcher)], max_tool_iterations=2, model_client=model(
        calls(("researcher", '{"task": "What is OCaml?"}', "call_delegate_1")),
        say("The researcher says OCaml is statically typed and functional")))
    await router.run(task="Tell me about OCaml")


async def unknown_tool_team() -> None:
    # a one-agent team inside an application span: the runtime's message spans record the call
    agent = AssistantAgent("calculator", tools=tools(multiply, add), max_tool_iterations=3, model_client=model(
        calls(("format_disk", '{"drive": "C:"}', "call_unknown_1")),
        calls(("multiply", '{"a": 6, "b": 7}', "call_mul_after_unknown")),
        say("42")))
    with trace.get_tracer("app").start_as_current_span("handle request"):
        team = RoundRobinGroupChat([agent], termination_condition=SourceMatchTermination(["calculator"]))
        await team.run(task="Format the disk, then multiply 6 by 7")


@pytest.mark.parametrize("scenario", [single_tool, tool_error, invalid_arguments, delegation_agent_tool,
                                      unknown_tool_team],
                         ids=lambda s: s.__name__)
def test_a_live_run_is_judged_as_its_captured_scenario(scenario):
    HARNESS.clear()
    asyncio.run(scenario())
    assert_judged_as_captured(HARNESS, "autogen", scenario.__name__)
