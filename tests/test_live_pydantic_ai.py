"""Live pydantic-ai agents, judged in process by ``ReliabilitySpanProcessor``.

Real ``pydantic_ai.Agent`` runs with a scripted ``FunctionModel`` and pydantic-ai's own
OpenTelemetry instrumentation (per agent, so nothing global leaks between tests). Each
scenario asserts on what a user sees: ``expect(...).result``, the ``reliability.*``
attributes and the ``gen_ai.evaluation.result`` event on the exported ``invoke_agent``
span, the SQLite results file, and the ``assert_passed()`` message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from otel_reliability import ReliabilitySpanProcessor, expect
from otel_reliability.stores import open_store

RETRY_ANNOTATION = "(requested but refused/errored — execution matching, new in 2.8.0)"


# -- harness ----------------------------------------------------------------------


@dataclass
class Harness:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: ReliabilitySpanProcessor
    store_path: str

    def instrument(self, agent: Agent) -> Agent:
        """Instrument one agent (not ``Agent.instrument_all``, which is global)."""
        agent.instrument = InstrumentationSettings(tracer_provider=self.provider)
        return agent

    def run_span(self, agent_name: str) -> ReadableSpan:
        """The exported top-level ``invoke_agent`` span of the (only) run of ``agent_name``."""
        spans = [
            s
            for s in self.exporter.get_finished_spans()
            if s.name == f"invoke_agent {agent_name}" and s.parent is None
        ]
        assert len(spans) == 1, [s.name for s in self.exporter.get_finished_spans()]
        return spans[0]


@pytest.fixture
def harness(tmp_path) -> Harness:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    store_path = str(tmp_path / "reliability.db")
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), store=store_path)
    provider.add_span_processor(processor)
    yield Harness(provider, exporter, processor, store_path)
    provider.shutdown()


def scripted(*responses: ModelResponse) -> FunctionModel:
    """A model that answers each request with the next scripted response."""
    remaining = list(responses)

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert remaining, "the agent asked the model more often than scripted"
        return remaining.pop(0)

    return FunctionModel(script)


def call(name: str, args: dict[str, Any], call_id: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=call_id)])


def text(content: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content)])


# -- agents -----------------------------------------------------------------------


def calculator_single(h: Harness) -> Agent:
    agent = h.instrument(
        Agent(scripted(call("multiply", {"a": 10, "b": 5}, "call_1"), text("50")), name="calculator")
    )

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    return agent


def calculator_retry(h: Harness) -> Agent:
    """``multiply`` raises ``ModelRetry`` once; the model calls it again and it succeeds."""
    agent = h.instrument(
        Agent(
            scripted(
                call("multiply", {"a": 10, "b": 5}, "call_1"),
                call("multiply", {"a": 10, "b": 5}, "call_2"),
                text("50"),
            ),
            name="calculator",
        )
    )
    attempts: list[int] = []

    @agent.tool_plain(retries=2)
    def multiply(a: int, b: int) -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise ModelRetry("the multiplier is warming up, try again")
        return a * b

    return agent


def calculator_wrong_tool(h: Harness) -> Agent:
    """The model picks ``add`` although the question asks for a product."""
    agent = h.instrument(
        Agent(scripted(call("add", {"a": 10, "b": 5}, "call_1"), text("15")), name="calculator")
    )

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    return agent


def assistant_delegating(h: Harness) -> Agent:
    """``assistant``'s tool ``ask_researcher`` runs the sub-agent ``researcher``, which calls ``lookup``."""
    researcher = h.instrument(
        Agent(
            scripted(call("lookup", {"topic": "otel"}, "call_sub_1"), text("OpenTelemetry is a CNCF project.")),
            name="researcher",
        )
    )

    @researcher.tool_plain
    def lookup(topic: str) -> str:
        return f"{topic}: observability framework"

    assistant = h.instrument(
        Agent(
            scripted(call("ask_researcher", {"question": "What is otel?"}, "call_1"), text("It is a CNCF project.")),
            name="assistant",
        )
    )

    @assistant.tool_plain
    async def ask_researcher(question: str) -> str:
        return (await researcher.run(question)).output

    return assistant


# -- the scenario table -----------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    id: str
    build: Callable[[Harness], Agent]
    agent: str  # the top-level agent's name
    expect: dict[str, Any]
    status: str
    attributes: dict[str, Any]  # expected reliability.* attributes on the exported run span
    chain: list[tuple[tuple[str, ...], str, str]] = field(default_factory=list)  # (agent path, tool, outcome)


SCENARIOS = [
    Scenario(
        id="single_tool_passes",
        build=calculator_single,
        agent="calculator",
        expect=dict(tool_calls=["multiply"], arguments={"multiply": {"a": 10}}),
        status="PASSED",
        attributes={
            "reliability.expectation": "inline",
            "reliability.passed_tool_calls": ("multiply",),
            "reliability.failed_tool_calls": (),
            "reliability.missing_tool_calls": (),
            "reliability.passed_argument_checks": ("multiply",),
            "reliability.failed_argument_checks": (),
            "reliability.tool_calls.total": 1,
            "reliability.tool_calls.errored": 0,
            "reliability.score": 1.0,
        },
        chain=[(("calculator",), "multiply", "ok")],
    ),
    Scenario(
        # Agno semantics: an errored attempt of an expected tool is neither passed nor
        # failed; the clean retry satisfies the expectation.
        id="model_retry_then_success_passes",
        build=calculator_retry,
        agent="calculator",
        expect=dict(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}),
        status="PASSED",
        attributes={
            "reliability.passed_tool_calls": ("multiply",),
            "reliability.failed_tool_calls": (),
            "reliability.missing_tool_calls": (),
            "reliability.passed_argument_checks": ("multiply",),
            "reliability.tool_calls.total": 2,
            "reliability.tool_calls.errored": 1,
            "reliability.tool_calls.refused": 0,
            "reliability.tool_calls.pending": 0,
        },
        chain=[(("calculator",), "multiply", "error"), (("calculator",), "multiply", "ok")],
    ),
    Scenario(
        id="unexpected_tool_fails",
        build=calculator_wrong_tool,
        agent="calculator",
        expect=dict(tool_calls=["multiply"]),
        status="FAILED",
        attributes={
            "reliability.passed_tool_calls": (),
            "reliability.failed_tool_calls": ("add",),
            "reliability.missing_tool_calls": ("multiply",),
            "reliability.additional_tool_calls": (),
            "reliability.tool_calls.total": 1,
            "reliability.tool_calls.errored": 0,
        },
        chain=[(("calculator",), "add", "ok")],
    ),
    Scenario(
        id="unexpected_tool_allowed_when_lenient",
        build=calculator_wrong_tool,
        agent="calculator",
        expect=dict(tool_calls=[], allow_additional=True),
        status="PASSED",
        attributes={
            "reliability.failed_tool_calls": (),
            "reliability.additional_tool_calls": ("add",),
            "reliability.missing_tool_calls": (),
        },
        chain=[(("calculator",), "add", "ok")],
    ),
    Scenario(
        id="delegation_to_sub_agent_passes",
        build=assistant_delegating,
        agent="assistant",
        expect=dict(tool_calls=["ask_researcher", "lookup"], arguments={"lookup": {"topic": "otel"}}),
        status="PASSED",
        attributes={
            "reliability.passed_tool_calls": ("ask_researcher", "lookup"),
            "reliability.failed_tool_calls": (),
            "reliability.missing_tool_calls": (),
            "reliability.passed_argument_checks": ("lookup",),
            "reliability.tool_calls.total": 2,
        },
        chain=[(("assistant",), "ask_researcher", "ok"), (("assistant", "researcher"), "lookup", "ok")],
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_verdict(harness: Harness, scenario: Scenario) -> None:
    agent = scenario.build(harness)
    with expect(**scenario.expect) as check:
        agent.run_sync("Please help.")

    # What expect() hands back.
    result = check.result
    assert result is not None, "no run was judged inside the expect() block"
    assert len(check.results) == 1, "exactly one top-level run (a sub-agent run is a member, not a run)"
    assert result.verdict.eval_status == scenario.status
    assert result.agent == scenario.agent
    assert [(a.agent_path, a.tool, a.outcome) for a in result.verdict.chain] == scenario.chain
    if scenario.status == "PASSED":
        check.assert_passed()
    else:
        with pytest.raises(AssertionError, match="^ReliabilityEval failed: "):
            check.assert_passed()

    # What the exporter receives: the run span, enriched.
    span = harness.run_span(scenario.agent)
    attributes = dict(span.attributes)
    assert attributes["reliability.status"] == scenario.status
    for key, value in scenario.attributes.items():
        assert attributes[key] == value, key
    assert (span.context.trace_id, span.context.span_id) == (result.trace_id, result.run_span_id)
    events = [e for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert len(events) == 1
    event = dict(events[0].attributes)
    assert event["gen_ai.evaluation.name"] == "tool_call_reliability"
    assert event["gen_ai.evaluation.score.label"] == ("pass" if scenario.status == "PASSED" else "fail")
    assert event["gen_ai.evaluation.score.value"] == attributes["reliability.score"] == result.verdict.score
    assert isinstance(event["gen_ai.evaluation.explanation"], str) and event["gen_ai.evaluation.explanation"]

    # Every span reached the exporter exactly once (held run spans are released after judging).
    exported = harness.exporter.get_finished_spans()
    assert len(exported) == len({s.context.span_id for s in exported})
    assert sum("reliability.status" in dict(s.attributes) for s in exported) == 1
    assert harness.processor.stats.dropped == {}


# -- (a) the verdict lands in the SQLite file ------------------------------------


def test_single_tool_verdict_is_stored_in_sqlite(harness: Harness) -> None:
    agent = calculator_single(harness)
    with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10}}) as check:
        agent.run_sync("What is 10 times 5?")
    check.assert_passed()

    span = harness.run_span("calculator")
    store = open_store(harness.store_path)  # a second connection, as another process would open it
    try:
        stored = store.query()
        assert len(stored) == 1
        row = stored[0]
        assert row.trace_id == span.context.trace_id
        assert row.run_span_id == span.context.span_id
        assert row.agent == "calculator"
        assert row.expectation == "inline"
        assert row.verdict.eval_status == "PASSED"
        assert row.verdict.passed_tool_calls == ["multiply"]
        assert row.verdict.passed_argument_checks == ["multiply"]
        assert row.to_json() == check.result.to_json()
        chain = row.to_json()["chain"]
        assert chain == [
            {
                "agent": "calculator",
                "tool": "multiply",
                "arguments": {"a": 10, "b": 5},
                "outcome": "ok",
                "call_id": "call_1",
                "span_id": chain[0]["span_id"],
            }
        ]
        tool_span = next(s for s in harness.exporter.get_finished_spans() if s.name == "execute_tool multiply")
        assert chain[0]["span_id"] == format(tool_span.context.span_id, "016x")
        assert store.query(status="failed") == []
        assert [r.run_span_id for r in store.query(trace_id=format(span.context.trace_id, "032x"))] == [
            span.context.span_id
        ]
    finally:
        store.close()


def test_run_without_expectation_is_still_judged_and_stored(harness: Harness) -> None:
    """No expect(): the default checks apply (``fail_on: [error, refused]``), so the
    ModelRetry error fails the run although the retry succeeded, and the verdict is stored."""
    calculator_retry(harness).run_sync("What is 10 times 5?")
    harness.processor.drain()
    span = harness.run_span("calculator")
    attributes = dict(span.attributes)
    assert attributes["reliability.expectation"] == "default"
    assert attributes["reliability.status"] == "FAILED"
    assert attributes["reliability.tool_calls.errored"] == 1
    assert attributes["reliability.passed_tool_calls"] == ("multiply",)
    (event,) = span.events
    assert "errored" in event.attributes["gen_ai.evaluation.explanation"]
    store = open_store(harness.store_path)
    try:
        (row,) = store.query()
        assert row.expectation == "default"
        assert row.verdict.eval_status == "FAILED"
        assert row.verdict.errored_tool_calls == ["multiply"]
        assert row.verdict.policy_violations
    finally:
        store.close()


# -- (d) delegation: the chain names the sub-agent --------------------------------


def test_delegation_chain_attributes_lookup_to_researcher(harness: Harness) -> None:
    agent = assistant_delegating(harness)
    with expect(tool_calls=["ask_researcher", "lookup"]) as check:
        output = agent.run_sync("What is otel?").output
    assert output == "It is a CNCF project."
    check.assert_passed()

    by_tool = {a.tool: a for a in check.result.verdict.chain}
    assert by_tool["lookup"].agent == "researcher"
    assert by_tool["lookup"].agent_path == ("assistant", "researcher")
    assert by_tool["ask_researcher"].agent == "assistant"
    assert by_tool["lookup"].call_id == "call_sub_1"

    # The sub-agent's own invoke_agent span is exported unchanged: only the top-level run is judged.
    sub = [s for s in harness.exporter.get_finished_spans() if s.name == "invoke_agent researcher"]
    assert len(sub) == 1 and sub[0].parent is not None
    assert "reliability.status" not in dict(sub[0].attributes)
    assert harness.processor.stats.runs_judged == 1


def test_delegation_expecting_only_the_parent_tool_fails_on_the_sub_agents_call(harness: Harness) -> None:
    """Strict mode sees the member's tool calls: ``lookup`` is unexpected when only ``ask_researcher`` is."""
    agent = assistant_delegating(harness)
    with expect(tool_calls=["ask_researcher"]) as check:
        agent.run_sync("What is otel?")
    verdict = check.result.verdict
    assert verdict.eval_status == "FAILED"
    assert verdict.failed_tool_calls == ["lookup"]
    assert verdict.passed_tool_calls == ["ask_researcher"]


# -- (e) assert_passed() says expected against got, field by field ----------------


def test_assert_passed_message_says_expected_against_got(harness: Harness) -> None:
    agent = calculator_wrong_tool(harness)
    with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10}}) as check:
        agent.run_sync("What is 10 times 5?")
    with pytest.raises(AssertionError) as info:
        check.assert_passed()
    head, *lines = str(info.value).splitlines()
    assert head.startswith("ReliabilityEval failed: agent 'calculator', expectation 'inline', score ")
    assert format(check.result.trace_id, "032x") in head
    assert lines[:5] == [
        "tool calls:", "  expected:   ['multiply']", "  got:        ['add']", "  missing:    ['multiply']",
        "  unexpected: ['add']",
    ]


def test_assert_passed_message_carries_the_retry_annotation(harness: Harness) -> None:
    """A tool that only ever raises ModelRetry: the missing entry says it was attempted."""
    agent = h_always_retry(harness)
    with expect(tool_calls=["multiply"]) as check:
        agent.run_sync("What is 10 times 5?")
    assert check.result.verdict.missing_tool_calls == [f"multiply {RETRY_ANNOTATION}"]
    assert dict(harness.run_span("calculator").attributes)["reliability.tool_calls.errored"] == 2
    with pytest.raises(AssertionError, match="execution matching, new in 2.8.0"):
        check.assert_passed()


def h_always_retry(h: Harness) -> Agent:
    agent = h.instrument(
        Agent(
            scripted(
                call("multiply", {"a": 10, "b": 5}, "call_1"),
                call("multiply", {"a": 10, "b": 5}, "call_2"),
                text("I could not multiply."),
            ),
            name="calculator",
        )
    )

    @agent.tool_plain(retries=5)
    def multiply(a: int, b: int) -> int:
        raise ModelRetry("still warming up")

    return agent
