"""``otel-reliability demo``: real pydantic-ai agents, a scripted model, real tracing.

Each agent runs pydantic-ai's real agent loop and its own OpenTelemetry
instrumentation; only the model is a script (``FunctionModel``), so no API key or
network is needed. Spans go through ``ReliabilitySpanProcessor`` exactly as in an
app; the verdicts, and the agents' standings, land in the store every other command reads
by default, so ``report`` and ``reputation`` work right after.

``degrade=True`` (``demo --degrade``) runs a worse version of the same agents, to try
``compare`` on: the calculator is given an ``add`` tool and calls it instead of
``multiply`` (a wrong tool), and the divider divides by zero twice before it gets it
right (more errors than its expectation allows). The other two agents behave as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from rich.console import Console

from .emitters.table import render_results
from .expectations import Expectation, Match
from .processor import ReliabilitySpanProcessor
from .reputation import Reputation
from .results import RunResult
from .stores.spec import parse_store_spec

STORE_KINDS = {"sqlite": "SQLite", "jsonl": "JSON Lines", "postgres": "PostgreSQL"}
STANDINGS_KINDS = ("sqlite", "postgres")

EXPECTATIONS = [
    Expectation(
        name="calculator multiplies",
        match=Match(agent="calculator"),
        expected_tool_calls=["multiply"],
        expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}},
    ),
    Expectation(
        name="divider recovers from a bad divisor",
        match=Match(agent="divider"),
        expected_tool_calls=["divide"],
        max_errors=1,
    ),
    Expectation(
        name="support agent only looks things up",
        match=Match(agent="support"),
        expected_tool_calls=["lookup_order"],
        forbidden_tools=["refund_order"],
    ),
    Expectation(
        name="router delegates the lookup",
        match=Match(agent="router"),
        expected_tool_calls=["ask_researcher", "lookup"],
        expected_tool_calls_by_agent={"researcher": ["lookup"]},
        order="in_order",
        expected_chain=["ask_researcher", "lookup"],
    ),
]


def _script(*turns: list[ToolCallPart] | str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """A model that answers each request with the next scripted turn."""
    remaining = list(turns)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = remaining.pop(0) if remaining else "done"
        return ModelResponse(parts=[TextPart(turn)] if isinstance(turn, str) else list(turn))

    return respond


def _agents(instrumentation: InstrumentationSettings, degrade: bool) -> list[tuple[Agent, str]]:
    calculator_call = ToolCallPart("add" if degrade else "multiply", {"a": 10, "b": 5}, tool_call_id="c1")
    calculator = Agent(FunctionModel(_script([calculator_call], "15" if degrade else "50")), name="calculator")

    @calculator.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    if degrade:

        @calculator.tool_plain
        def add(a: int, b: int) -> int:
            return a + b

    bad_divisions = 2 if degrade else 1
    divider = Agent(
        FunctionModel(
            _script(
                *([ToolCallPart("divide", {"a": 10, "b": 0}, tool_call_id=f"d{n}")] for n in range(bad_divisions)),
                [ToolCallPart("divide", {"a": 10, "b": 2}, tool_call_id="ok")],
                "5",
            )
        ),
        name="divider",
        retries=bad_divisions,  # pydantic-ai gives up on a tool after this many retries
    )

    @divider.tool_plain
    def divide(a: float, b: float) -> float:
        if b == 0:
            raise ModelRetry("b must not be zero")
        return a / b

    support = Agent(
        FunctionModel(
            _script(
                [ToolCallPart("lookup_order", {"order_id": "A-17"}, tool_call_id="s1")],
                [ToolCallPart("refund_order", {"order_id": "A-17"}, tool_call_id="s2")],
                "Refunded.",
            )
        ),
        name="support",
    )

    @support.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "delivered"}

    @support.tool_plain
    def refund_order(order_id: str) -> str:
        return f"refunded {order_id}"

    researcher = Agent(
        FunctionModel(_script([ToolCallPart("lookup", {"term": "OpenTelemetry"}, tool_call_id="r1")], "A CNCF project.")),
        name="researcher",
    )

    @researcher.tool_plain
    def lookup(term: str) -> str:
        return f"{term}: observability framework"

    router = Agent(
        FunctionModel(_script([ToolCallPart("ask_researcher", {"question": "What is OpenTelemetry?"}, tool_call_id="q1")], "Answered.")),
        name="router",
    )

    @router.tool_plain
    async def ask_researcher(question: str) -> str:
        return (await researcher.run(question)).output

    for agent in (calculator, divider, support, researcher, router):
        agent.instrument = instrumentation
    return [
        (calculator, "What is 10 times 5?"),
        (divider, "Divide 10 by something sensible."),
        (support, "Where is order A-17?"),
        (router, "What is OpenTelemetry?"),
    ]


def run_demo(store: str | Path, console: Console | None = None, *, degrade: bool = False) -> int:
    """Run the scripted agents (their worse version with ``degrade``), print their verdicts,
    keep them in ``store``."""
    console = console or Console()
    results: list[RunResult] = []
    provider = TracerProvider()
    kind = parse_store_spec(store).kind
    reputation = Reputation(str(store)) if kind in STANDINGS_KINDS else None  # JSON Lines keeps verdicts only
    processor = ReliabilitySpanProcessor(
        SimpleSpanProcessor(InMemorySpanExporter()),
        expectations=EXPECTATIONS,
        store=str(store),
        on_result=results.append,
        reputation=reputation,
    )
    provider.add_span_processor(processor)
    for agent, prompt in _agents(InstrumentationSettings(tracer_provider=provider), degrade):
        agent.run_sync(prompt)
    processor.drain()
    render_results(results, console)
    kept = "verdicts and standings" if reputation is not None else "verdicts"
    console.print(f"{kept.capitalize()} stored in {store} ({STORE_KINDS[kind]}). The support agent fails on purpose: it refunded an order.")
    if degrade:
        console.print("Degraded: the calculator added instead of multiplying; the divider divided by zero twice.")
    provider.shutdown()
    if reputation is not None:
        reputation.close()
    console.print("Next: the verdicts as a report" + (", and each agent's standing and grade:" if reputation else ":"))
    console.print(f"  otel-reliability report --store {store}", highlight=False, soft_wrap=True)
    if reputation is not None:
        console.print(f"  otel-reliability reputation --store {store}", highlight=False, soft_wrap=True)
    return 0
