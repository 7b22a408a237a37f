"""Live openai-agents runs (``OpenAIChatCompletionsModel`` on the scripted model), traced by
``openinference-instrumentation-openai-agents`` into ``ReliabilitySpanProcessor``: each run is
judged as the captured scenario of the same name (tests/capture/openai_agents_guardrails/),
tool guardrails included.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from .harness import Harness, assert_judged_as_captured

import capture_common as cc  # noqa: E402 - on the path from harness
from agents import Agent, OpenAIChatCompletionsModel, Runner, ToolGuardrailFunctionOutput, function_tool, tool_input_guardrail
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

os.environ.pop("OPENAI_API_KEY", None)  # the instrumentor replaces the SDK's exporter; nothing goes to OpenAI


@tool_input_guardrail
def halt_on_system_paths(data) -> ToolGuardrailFunctionOutput:
    """Raises on a delete under /etc: the run ends, the tool never runs."""
    if "/etc/" in (data.context.tool_arguments or ""):
        return ToolGuardrailFunctionOutput.raise_exception(output_info="system path")
    return ToolGuardrailFunctionOutput.allow()


@function_tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@function_tool
def fetch_url(url: str) -> str:
    """Fetch a URL (always fails: no network here)."""
    raise ConnectionError("network unreachable")


@function_tool(name_override="delete_file", tool_input_guardrails=[halt_on_system_paths])
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def agent(server: cc.ScriptedOpenAI, name: str, tools: list) -> Agent:
    client = AsyncOpenAI(base_url=server.base_url, api_key="scripted-no-key", max_retries=0)
    return Agent(name=name, instructions="Use the tools.", tools=tools,
                 model=OpenAIChatCompletionsModel(model="scripted-model", openai_client=client))


async def single_tool(server: cc.ScriptedOpenAI) -> None:
    server.script(cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), cc.reply("50"))
    await Runner.run(agent(server, "calculator", [multiply]), "What is 10 times 5?")


async def tool_error(server: cc.ScriptedOpenAI) -> None:
    server.script(cc.reply(tool_calls=[cc.tool_call("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")]),
                  cc.reply("The page could not be fetched."))
    await Runner.run(agent(server, "fetcher", [fetch_url]), "Fetch https://example.invalid/")


async def unknown_tool(server: cc.ScriptedOpenAI) -> None:
    server.script(cc.reply(tool_calls=[cc.tool_call("format_disk", {"drive": "C:"}, "call_unknown_1")]))
    await Runner.run(agent(server, "calculator", [multiply]), "Format the disk")  # the SDK fails the run


async def blocked_tool_input_guardrail_raise(server: cc.ScriptedOpenAI) -> None:
    server.script(cc.reply(tool_calls=[cc.tool_call("delete_file", {"path": "/etc/passwd"}, "call_delete_1")]))
    await Runner.run(agent(server, "janitor", [delete_file]), "Delete /etc/passwd")  # the guardrail ends the run


@pytest.fixture(scope="module")
def harness():
    harness = Harness()
    OpenAIAgentsInstrumentor().instrument(tracer_provider=harness.provider)
    yield harness
    OpenAIAgentsInstrumentor().uninstrument()
    harness.provider.shutdown()


@pytest.mark.parametrize("scenario", [single_tool, tool_error, unknown_tool, blocked_tool_input_guardrail_raise],
                         ids=lambda s: s.__name__)
def test_a_live_run_is_judged_as_its_captured_scenario(harness, scenario):
    harness.clear()
    with cc.ScriptedOpenAI() as server:
        try:
            asyncio.run(scenario(server))
        except Exception:  # noqa: BLE001 - a run the SDK fails is part of the scenario; its spans tell
            pass
    assert_judged_as_captured(harness, "openai_agents_guardrails", scenario.__name__)
