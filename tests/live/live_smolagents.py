"""Live smolagents agents (``ToolCallingAgent`` with ``OpenAIServerModel`` on the scripted
model), traced by ``openinference-instrumentation-smolagents`` into ``ReliabilitySpanProcessor``:
each run is judged as the captured scenario of the same name (tests/capture/smolagents/).
"""

from __future__ import annotations

import pytest

from .harness import Harness, assert_judged_as_captured

import capture_common as cc  # noqa: E402 - on the path from harness
from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from smolagents import OpenAIServerModel, ToolCallingAgent, tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: the first factor
        b: the second factor
    """
    return a * b


@tool
def lookup(term: str) -> str:
    """Encyclopedia lookup.

    Args:
        term: the term to look up
    """
    return f"{term}: a statically typed functional language"


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: the dividend
        b: the divisor
    """
    return a / b


def final(answer: str, call_id: str) -> dict:
    return cc.reply(tool_calls=[cc.tool_call("final_answer", {"answer": answer}, call_id)])


def agent(name: str, server: cc.ScriptedOpenAI, tools: list, **kwargs) -> ToolCallingAgent:
    model = OpenAIServerModel(model_id=server.model, api_base=server.base_url, api_key="scripted-no-key",
                              client_kwargs={"max_retries": 0})
    return ToolCallingAgent(tools=tools, model=model, name=name, verbosity_level=0, **kwargs)


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 10, "b": 5}, "call_mul_1")]),
                      final("50", "call_final_1"))
        agent("calculator", server, [multiply]).run("What is 10 times 5?")


def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 0}, "call_div_1")]),
                      cc.reply(tool_calls=[cc.tool_call("divide", {"a": 10, "b": 2}, "call_div_2")]),
                      final("10 / 2 = 5", "call_final_1"))
        agent("calculator", server, [divide]).run("Divide 10 by 0, or by something sensible")


def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[cc.tool_call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
                      cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 6, "b": 7}, "call_mul_1")]),
                      final("42", "call_final_1"))
        agent("calculator", server, [multiply]).run("Format the disk, then multiply 6 by 7")


def delegation() -> None:
    with cc.ScriptedOpenAI() as manager_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(cc.reply(tool_calls=[cc.tool_call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
                                 final("OCaml is a statically typed functional language", "call_final_r"))
        manager_server.script(
            cc.reply(tool_calls=[cc.tool_call("researcher", {"task": "What is OCaml?"}, "call_delegate_1")]),
            final("The researcher says OCaml is statically typed and functional", "call_final_m"),
        )
        researcher = agent("researcher", researcher_server, [lookup], description="Looks terms up in an encyclopedia.")
        agent("manager", manager_server, [], managed_agents=[researcher]).run("Tell me about OCaml")


@pytest.fixture(scope="module")
def harness():
    harness = Harness()
    SmolagentsInstrumentor().instrument(tracer_provider=harness.provider)
    yield harness
    SmolagentsInstrumentor().uninstrument()
    harness.provider.shutdown()


@pytest.mark.parametrize("scenario", [single_tool, tool_error, unknown_tool, delegation], ids=lambda s: s.__name__)
def test_a_live_run_is_judged_as_its_captured_scenario(harness, scenario):
    harness.clear()
    scenario()
    assert_judged_as_captured(harness, "smolagents", scenario.__name__)
