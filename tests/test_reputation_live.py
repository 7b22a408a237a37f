"""A live pydantic-ai agent degrades over 200 runs; its grade steps down through every band and the gauge follows.

The agent (a real ``pydantic_ai.Agent`` with a scripted ``FunctionModel`` and
pydantic-ai's own OpenTelemetry instrumentation) answers "weather in Paris?" by calling
``get_weather``. After 100 healthy runs the weather service breaks: ``get_weather``
fails (``ModelRetry``), the model falls back to ``search_web`` — a tool its expectation
does not allow — and answers with a guess. Every run is judged by
``ReliabilitySpanProcessor`` and recorded by ``Reputation`` (window 100, the article's
weights and missing-dimension rule); the gauge is read through a real SDK
``MeterProvider`` and ``InMemoryMetricReader`` after each run.

With b broken runs in the window (b = run − 100), a healthy run gives isnad 2/2,
adalah 2/2, sidq 1/1, dabt 1/1 and a broken one isnad 0/2, adalah 1/2, sidq 0/1, dabt
1/1 (it fails once, when the chain first changes), so the standing is
0.3(100−b) + 0.2·99 + 0.3(100−b) + 0.2(100−b/2) = 99.8 − 0.7b.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.expectations import Expectation, ExpectedOutput
from otel_reliability.reputation import Grade, Reputation

RUNS = 200
HEALTHY_RUNS = 100

WEATHER = Expectation(
    name="weather",
    match={"agent": "forecaster"},
    expected_tool_calls=["get_weather"],
    allowed_tools=["get_weather"],
    expected_output=ExpectedOutput(contains=["25°C"]),
)


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Ask for the weather; on a failure fall back to a web search; answer with what came back."""
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    for part in parts:
        # A tool's ModelRetry comes back as a RetryPromptPart, or (newer pydantic-ai) a
        # ToolReturnPart whose outcome says it was retried.
        failed = isinstance(part, RetryPromptPart) or getattr(part, "outcome", "success") not in ("success", None)
        if failed and part.tool_name == "get_weather":
            return ModelResponse(parts=[ToolCallPart("search_web", {"query": "weather Paris"}, tool_call_id="fallback")])
        if isinstance(part, ToolReturnPart) and part.tool_name == "get_weather":
            return ModelResponse(parts=[TextPart(f"Paris: {part.content}")])
        if isinstance(part, ToolReturnPart) and part.tool_name == "search_web":
            return ModelResponse(parts=[TextPart("Paris: probably around 18°C")])
    return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="weather")])


def gauge(reader: InMemoryMetricReader) -> list[tuple[str, float, str]]:
    found = []
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "agent.reliability.reputation.score":
                    for point in metric.data.data_points:
                        found.append((point.attributes["gen_ai.agent.name"], point.value, point.attributes["reliability.grade"]))
    return found


def test_degrading_agent_steps_down_through_every_grade_and_the_gauge_follows(tmp_path):
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    reputation = Reputation(str(tmp_path / "reliability.db"), expectations=[WEATHER], meter_provider=meters)
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), reputation=reputation, meter_provider=meters)
    provider.add_span_processor(processor)

    service = {"up": True}
    agent = Agent(FunctionModel(model), name="forecaster")
    agent.instrument = InstrumentationSettings(tracer_provider=provider)

    @agent.tool_plain(retries=1)
    def get_weather(city: str) -> str:
        if not service["up"]:
            raise ModelRetry("weather service unavailable")
        return "25°C, sunny"

    @agent.tool_plain
    def search_web(query: str) -> str:
        return "forum post: Paris is mild this time of year"

    history = []
    try:
        for run in range(1, RUNS + 1):
            service["up"] = run <= HEALTHY_RUNS
            output = agent.run_sync("What is the weather in Paris?").output
            assert ("25°C" in output) is service["up"]
            processor.drain()
            standing = reputation.standing("forecaster", fresh=True)
            assert gauge(reader) == [("forecaster", standing.score, standing.grade.value)], f"run {run}"
            history.append((run, standing.score, standing.grade))
    finally:
        provider.shutdown()
        reputation.close()

    healthy = [(score, grade) for run, score, grade in history if 2 <= run <= HEALTHY_RUNS]
    assert set(healthy) == {(100.0, Grade.THIQAH)}
    for run, score, _ in history[HEALTHY_RUNS:]:
        broken = run - HEALTHY_RUNS
        assert score == pytest.approx(99.8 - 0.7 * broken, abs=1e-6), f"run {run}"

    bands = [grade for _, _, grade in history[HEALTHY_RUNS - 1:]]
    stepped = [grade for i, grade in enumerate(bands) if i == 0 or grade is not bands[i - 1]]
    assert stepped == [Grade.THIQAH, Grade.SADUQ, Grade.SADUQ_HADITH, Grade.DAIF, Grade.MATRUK]
    first_run_in = {grade: next(run for run, _, g in history if g is grade and run > 1) for grade in stepped}
    assert first_run_in == {
        Grade.THIQAH: 2,
        Grade.SADUQ: HEALTHY_RUNS + 15,  # 99.8 − 0.7·15 = 89.3
        Grade.SADUQ_HADITH: HEALTHY_RUNS + 36,  # 74.6
        Grade.DAIF: HEALTHY_RUNS + 57,  # 59.9
        Grade.MATRUK: HEALTHY_RUNS + 86,  # 39.6
    }
    final = history[-1]
    assert (final[1], final[2]) == (pytest.approx(29.8), Grade.MATRUK)


def test_guarded_pydantic_ai_tool_is_blocked_and_its_span_marked(tmp_path):
    from otel_reliability.reputation import AccessPolicy

    policy = AccessPolicy(grades={Grade.THIQAH: {"allowed_actions": ["*"]}})  # unrated agents: Matruk, denied
    reputation = Reputation(str(tmp_path / "reliability.db"), policy=policy)
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), reputation=reputation)
    provider.add_span_processor(processor)

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        for part in last.parts if isinstance(last, ModelRequest) else []:
            if isinstance(part, ToolReturnPart):
                return ModelResponse(parts=[TextPart(f"Tool said: {part.content}")])
        return ModelResponse(parts=[ToolCallPart("delete_files", {"path": "/srv"}, tool_call_id="rm")])

    agent = Agent(FunctionModel(script), name="janitor")
    agent.instrument = InstrumentationSettings(tracer_provider=provider)
    ran = []

    @agent.tool_plain
    @reputation.guard(agent="janitor", on_denied=lambda denied: f"denied: {denied.decision.reason}")
    def delete_files(path: str) -> str:
        ran.append(path)
        return "deleted"

    try:
        output = agent.run_sync("Clean up /srv").output
        processor.drain()
    finally:
        provider.shutdown()
        reputation.close()
    assert ran == []
    assert output == "Tool said: denied: grade Matruk (unrated) has no rule; the policy's default is deny (Thiqah or better may delete_files)"
    [tool_span] = [s for s in exporter.get_finished_spans() if s.name == "execute_tool delete_files"]
    assert tool_span.attributes["reliability.policy.denied"] is True
    assert tool_span.attributes["reliability.grade"] == "Matruk"
