"""``BfclRunner``: a real pydantic-ai agent per entry, traced by its own instrumentation; the
runner reads the calls from the span processor's chain and follows 5 → 50 → all."""

from __future__ import annotations

import random
from typing import Callable

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("bfcl_eval", reason="the dataset ships in bfcl-eval: pip install --no-deps bfcl-eval==2026.3.23")

from pydantic_ai import Agent, Tool  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402

from otel_reliability.bfcl.cases import valid_answer  # noqa: E402
from otel_reliability.bfcl.dataset import Entry, load_category  # noqa: E402
from otel_reliability.bfcl.runner import BfclRunner, function_schemas  # noqa: E402


def scripted_agent(runner: BfclRunner, answer: Callable[[Entry], list]) -> tuple[Callable[[Entry], None], list[str]]:
    """An agent whose model calls the tools ``answer(entry)`` names, then says "done"; returns it and its call log."""
    instrumentation = InstrumentationSettings(tracer_provider=runner.tracer_provider)
    seen: list[str] = []

    def run(entry: Entry) -> None:
        seen.append(entry.id)
        calls = answer(entry)

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if any(isinstance(part, ToolReturnPart) for message in messages for part in getattr(message, "parts", ())):
                return ModelResponse(parts=[TextPart("done")])
            parts = [
                ToolCallPart(name.replace(".", "_"), arguments, tool_call_id=f"call_{index}")
                for index, call in enumerate(calls) for name, arguments in call.items()
            ]
            return ModelResponse(parts=parts or [TextPart("No function fits this request.")])

        tools = [
            Tool.from_schema(lambda **_: "ok", schema["name"], schema["description"], schema["parameters"])
            for schema in function_schemas(entry, underscore_names=True)
        ]
        agent = Agent(FunctionModel(respond), tools=tools, name="scripted")
        agent.instrument = instrumentation
        agent.run_sync(entry.prompt)

    return run, seen


def right(entry: Entry) -> list:
    return valid_answer(entry, random.Random(entry.id))


def wrong(entry: Entry) -> list:
    return [{name: {**arguments, "not_a_parameter": 1}} for call in right(entry) for name, arguments in call.items()]


@pytest.fixture
def runner():
    runner = BfclRunner(underscore_to_dot=True, agent_name="scripted")
    yield runner
    runner.close()
    runner.tracer_provider.shutdown()


def test_a_good_agent_grows_from_5_to_the_whole_category(runner):
    agent, seen = scripted_agent(runner, right)
    run = runner.run(agent, "live_parallel")  # 16 entries: 5, then all (fewer than 50)
    assert [(s.limit, s.judged, s.correct) for s in run.stages] == [(5, 5, 5), (50, 16, 16)]
    assert run.completed and not run.stopped_early
    assert len(seen) == 16  # each entry ran once


def test_the_run_stops_when_a_stage_falls_below_the_threshold(runner):
    agent, seen = scripted_agent(runner, lambda e: right(e) if int(e.id.rsplit("_", 1)[1]) < 10 else wrong(e))
    run = runner.run(agent, "simple_python")
    assert [(s.limit, s.judged, s.correct) for s in run.stages] == [(5, 5, 5), (50, 50, 10)]
    assert run.stopped_early and not run.completed
    assert len(seen) == 50  # the whole category (400) never ran
    assert run.score.samples[10].error_type == "simple_function_checker:unexpected_param"


def test_a_weak_start_stops_after_five(runner):
    agent, seen = scripted_agent(runner, wrong)
    run = runner.run(agent, "simple_python", threshold=0.5)
    assert [(s.judged, s.correct) for s in run.stages] == [(5, 0)] and len(seen) == 5


def test_the_calls_judged_are_the_ones_the_traces_recorded(runner):
    entry = load_category("simple_python")[1]  # math.factorial(number=5)
    agent, _ = scripted_agent(runner, lambda e: [{"math.factorial": {"number": 5}}])
    sample = runner.judge(agent, entry)
    assert sample.prediction == [{"math_factorial": {"number": 5}}]
    assert sample.valid


def test_answering_without_a_call_passes_irrelevance(runner):
    agent, _ = scripted_agent(runner, lambda e: [])
    run = runner.run(agent, "irrelevance", schedule=(5,))
    assert [(s.judged, s.correct) for s in run.stages] == [(5, 5)]
    assert all(s.prediction == [] for s in run.score.samples)


def test_function_schemas_speak_json_schema():
    entry = next(e for e in load_category("simple_python") if any(
        p.get("type") == "float" for d in e.function for p in d["parameters"]["properties"].values()))
    [schema] = function_schemas(entry, underscore_names=True)
    types = {p.get("type") for p in schema["parameters"]["properties"].values()}
    assert schema["parameters"]["type"] == "object" and "number" in types and "float" not in types
    assert "." not in schema["name"]
    java = function_schemas(load_category("simple_java")[1])[0]["parameters"]["properties"]
    assert {p["type"] for p in java.values()} == {"string"}  # Java values are source text
