"""Live agno agents and teams, judged in process, checked against agno's own ReliabilityEval.

Everything is real except the network: agno's ``OpenAIChat`` talks to an
``httpx.MockTransport`` that replays scripted chat-completions responses (tool calls,
then a final text), and ``AgnoInstrumentor`` emits the OpenInference spans our
``ReliabilitySpanProcessor`` judges. For each scenario and configuration the same
run's ``RunOutput`` also goes to ``agno.eval.reliability.ReliabilityEval``: our
verdict's status and Agno's six lists must equal agno's result, and the seventh list
we publish, ``order_violations`` (which agno does not have), must stay empty.

Each run happens in a fresh, empty ``contextvars.Context``: the instrumentation leaks
the ended team span into the caller's context after a non-streaming ``Team.run`` (see
``corpus/AGNO_SPANS.md`` §5), and one test checks that the repair copes with the leak.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import socket
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Callable

import pytest

os.environ.setdefault("AGNO_TELEMETRY", "false")

pytest.importorskip("agno")
pytest.importorskip("openinference.instrumentation.agno")

import httpx
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.eval.reliability import ReliabilityEval
from agno.models.openai import OpenAIChat
from agno.run.agent import RunOutput
from agno.run.team import TeamRunOutput
from agno.team import Team
from agno.tools import tool
from openinference.instrumentation.agno import AgnoInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor, expect
from otel_reliability.results import RunResult
from otel_reliability.stores import open_store

from .corpus import AGNO_FIELDS

AGNO_LISTS = AGNO_FIELDS[1:]
ANNOTATION = "(requested but refused/errored — execution matching, new in 2.8.0)"


# -- a scripted OpenAI chat-completions endpoint -------------------------------------

_ids = count(1)
_scripts: list[list[dict[str, Any]]] = []  # every scripted model's unanswered messages, checked after each test


def tool_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message requesting ``(call_id, name, arguments)`` calls."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for call_id, name, args in calls
        ],
    }


def answer(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def scripted_model(*messages: dict[str, Any], asynchronous: bool = False) -> OpenAIChat:
    """agno's real ``OpenAIChat`` whose HTTP transport replays ``messages``, one per request.

    agno takes one ``http_client`` and uses it only when its type fits the call: an
    ``httpx.Client`` for ``run``, an ``httpx.AsyncClient`` for ``arun``."""
    remaining = list(messages)
    _scripts.append(remaining)
    requests: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/chat/completions"), request.url
        body = json.loads(request.content)
        requests.append(body)
        assert remaining, "the agent asked the model more often than scripted"
        message = remaining.pop(0)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        head = {"id": f"chatcmpl-{next(_ids)}", "created": 1_700_000_000, "model": "gpt-4o-mini"}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if body.get("stream"):  # server-sent events, as the API streams them
            return httpx.Response(
                200,
                content=_sse(head, message, finish, usage),
                headers={"content-type": "text/event-stream"},
            )
        return httpx.Response(
            200,
            json={
                **head,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )

    model = OpenAIChat(
        id="gpt-4o-mini",
        api_key="sk-test-not-used",
        http_client=(httpx.AsyncClient if asynchronous else httpx.Client)(transport=httpx.MockTransport(handler)),
    )
    model._scripted_requests = requests  # type: ignore[attr-defined]  # for assertions on what was sent
    return model


def _sse(head: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, int]) -> bytes:
    chunk = {**head, "object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [
        {"role": "assistant", "tool_calls": [{"index": i, **call}]}
        for i, call in enumerate(message.get("tool_calls") or ())
    ] or [{"role": "assistant", "content": message.get("content")}]
    events = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    events.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    events.append({**chunk, "choices": [], "usage": usage})
    return ("".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n").encode()


# -- tools -------------------------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def lookup_stock_price(symbol: str) -> str:
    """Look up a stock price."""
    raise RuntimeError(f"price backend unreachable for {symbol}")


def flaky_lookup() -> Callable[[str], str]:
    failures = [1]

    def lookup_stock_price(symbol: str) -> str:
        """Look up a stock price."""
        if failures:
            failures.pop()
            raise RuntimeError("price backend timed out")
        return f"{symbol}: 251.20"

    return lookup_stock_price


# -- harness -------------------------------------------------------------------------


@dataclass
class Harness:
    provider: TracerProvider
    exporter: InMemorySpanExporter
    processor: ReliabilitySpanProcessor
    store_path: str

    def run_spans(self) -> list[ReadableSpan]:
        """Exported spans that carry a verdict."""
        return [s for s in self.exporter.get_finished_spans() if "reliability.status" in (s.attributes or {})]


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Everything must be answered by the mock transports: refuse real connections."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("network access attempted in a live agno test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    _scripts.clear()
    yield
    unused = [script for script in _scripts if script]
    _scripts.clear()
    assert not unused, f"scripted model responses never requested: {unused}"


@pytest.fixture
def harness(tmp_path):
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    store_path = str(tmp_path / "reliability.db")
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), store=store_path)
    provider.add_span_processor(processor)
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield Harness(provider, exporter, processor, store_path)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def isolated(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a fresh, empty context (as every captured corpus scenario was)."""
    return contextvars.Context().run(fn)


# -- scenarios -----------------------------------------------------------------------


def single_tool(asynchronous: bool = False) -> Agent:
    return Agent(
        name="Calculator Agent",
        id="calculator-agent",
        model=scripted_model(
            tool_calls(("call_1", "multiply", {"a": 10, "b": 5})), answer("50"), asynchronous=asynchronous
        ),
        tools=[multiply],
        telemetry=False,
    )


def two_adds_one_turn() -> Agent:
    return Agent(
        name="Calculator Agent",
        id="calculator-agent",
        model=scripted_model(
            tool_calls(("call_1", "add", {"a": 2, "b": 2}), ("call_2", "add", {"a": 3, "b": 3})),
            tool_calls(("call_3", "multiply", {"a": 4, "b": 6})),
            answer("4, 6 and 24"),
        ),
        tools=[multiply, add],
        telemetry=False,
    )


def tool_error() -> Agent:
    return Agent(
        name="Stock Agent",
        id="stock-agent",
        model=scripted_model(
            tool_calls(("call_price_1", "lookup_stock_price", {"symbol": "TSLA"})),
            answer("Sorry, the price service is down."),
        ),
        tools=[lookup_stock_price],
        telemetry=False,
    )


def retry_after_error() -> Agent:
    return Agent(
        name="Stock Agent",
        id="stock-agent",
        model=scripted_model(
            tool_calls(("call_price_1", "lookup_stock_price", {"symbol": "TSLA"})),
            tool_calls(("call_price_2", "lookup_stock_price", {"symbol": "TSLA"})),
            answer("TSLA is at 251.20."),
        ),
        tools=[flaky_lookup()],
        telemetry=False,
    )


def tool_call_limit() -> Agent:
    """``tool_call_limit=1``: agno runs the first request and refuses the second."""
    return Agent(
        name="Calculator Agent",
        id="calculator-agent",
        model=scripted_model(
            tool_calls(("call_1", "multiply", {"a": 10, "b": 5}), ("call_2", "add", {"a": 50, "b": 1})),
            answer("50; I could not add."),
        ),
        tools=[multiply, add],
        tool_call_limit=1,
        telemetry=False,
    )


def paused_for_confirmation(*after_confirmation: dict[str, Any]) -> Agent:
    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    return Agent(
        name="Ops Agent",
        id="ops-agent",
        model=scripted_model(tool_calls(("call_del_1", "delete_file", {"path": "/tmp/x"})), *after_confirmation),
        tools=[delete_file],
        telemetry=False,
    )


def team_delegation() -> Team:
    member = Agent(
        name="Calculator Agent",
        id="calculator-agent",
        model=scripted_model(tool_calls(("call_m1", "multiply", {"a": 6, "b": 7})), answer("42")),
        tools=[multiply],
        telemetry=False,
    )
    return Team(
        name="Math Team",
        id="math-team",
        members=[member],
        model=scripted_model(
            tool_calls(
                ("call_t1", "delegate_task_to_member", {"member_id": "calculator-agent", "task": "Multiply 6 by 7"})
            ),
            answer("6 times 7 is 42."),
        ),
        telemetry=False,
    )


@dataclass(frozen=True)
class Config:
    """One ReliabilityEval configuration; the same fields feed ``expect(...)``."""

    expected_tool_calls: list[str] | None = None
    allow_additional_tool_calls: bool = False
    expected_tool_call_arguments: dict[str, Any] | None = None
    status: str | None = None  # agno's status, written down so the table reads on its own

    def label(self) -> str:
        parts = [f"expected={self.expected_tool_calls}"]
        if self.allow_additional_tool_calls:
            parts.append("lenient")
        if self.expected_tool_call_arguments:
            parts.append(f"args={json.dumps(self.expected_tool_call_arguments, sort_keys=True)}")
        return ",".join(parts)


@dataclass(frozen=True)
class Scenario:
    id: str
    build: Callable[[], Agent | Team]
    prompt: str
    configs: list[Config] = field(default_factory=list)


SCENARIOS = [
    Scenario(
        "single_tool",
        single_tool,
        "What is 10 times 5?",
        [
            Config(["multiply"], status="PASSED"),
            Config(["multiply"], expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}}, status="PASSED"),
            Config(["multiply"], expected_tool_call_arguments={"multiply": {"a": 3}}, status="FAILED"),
            Config(["add"], status="FAILED"),  # multiply unexpected (strict), add missing
            Config([], allow_additional_tool_calls=True, status="PASSED"),
            Config(None, expected_tool_call_arguments={"multiply": {"b": 5.0}}, status="PASSED"),  # 5 == 5.0
        ],
    ),
    Scenario(
        "argument_spec_lists",
        two_adds_one_turn,
        "Add 2+2 and 3+3, then multiply 4 by 6.",
        [
            Config(["add", "multiply"], expected_tool_call_arguments={"add": [{"a": 2, "b": 2}, {"a": 3, "b": 3}]},
                   status="PASSED"),
            Config(["add", "multiply"], expected_tool_call_arguments={"add": [{"a": 2}, {"a": 9}]}, status="FAILED"),
            Config(["add"], status="FAILED"),  # strict: multiply is unexpected
            Config(["add"], allow_additional_tool_calls=True, status="PASSED"),
            Config(["add", "add", "divide"], status="FAILED"),  # divide never attempted: bare missing entry
        ],
    ),
    Scenario(
        "tool_error",
        tool_error,
        "What is the TSLA price?",
        [
            Config(["lookup_stock_price"], status="FAILED"),  # annotated missing
            Config(None, allow_additional_tool_calls=True,
                   expected_tool_call_arguments={"lookup_stock_price": {"symbol": "TSLA"}}, status="FAILED"),
            Config([], status="FAILED"),  # strict mode fails the errored attempt too
            Config([], allow_additional_tool_calls=True, status="PASSED"),
        ],
    ),
    Scenario(
        "retry_after_error",
        retry_after_error,
        "What is the TSLA price?",
        [
            Config(["lookup_stock_price"], status="PASSED"),
            Config(["lookup_stock_price"], expected_tool_call_arguments={"lookup_stock_price": {"symbol": "TSLA"}},
                   status="PASSED"),
        ],
    ),
    Scenario(
        "tool_call_limit",
        tool_call_limit,
        "Multiply 10 by 5, then add 1.",
        [
            Config(["multiply"], status="FAILED"),  # the refused add is an unexpected attempt
            Config(["multiply"], allow_additional_tool_calls=True, status="PASSED"),
            Config(["multiply", "add"], status="FAILED"),  # add annotated missing
        ],
    ),
    Scenario(
        "paused_for_confirmation",
        paused_for_confirmation,
        "Delete /tmp/x.",
        [
            Config(["delete_file"], status="FAILED"),  # paused: not clean, annotated missing
            Config([], allow_additional_tool_calls=True, status="PASSED"),
        ],
    ),
    Scenario(
        "team_delegation",
        team_delegation,
        "What is 6 times 7?",
        [
            Config(["delegate_task_to_member", "multiply"], status="PASSED"),
            Config(["multiply"], status="FAILED"),  # the leader's delegate call is unexpected
            Config(["multiply"], allow_additional_tool_calls=True,
                   expected_tool_call_arguments={"multiply": {"a": 6, "b": 7}}, status="PASSED"),
            Config(["add"], allow_additional_tool_calls=True, status="FAILED"),
        ],
    ),
]

CASES = [
    pytest.param(scenario, config, id=f"{scenario.id}[{config.label()}]")
    for scenario in SCENARIOS
    for config in scenario.configs
]


def agno_verdict(output: Any, config: Config) -> dict[str, Any]:
    key = "team_response" if isinstance(output, TeamRunOutput) else "agent_response"
    evaluation = ReliabilityEval(
        **{key: output},
        expected_tool_calls=config.expected_tool_calls,
        allow_additional_tool_calls=config.allow_additional_tool_calls,
        expected_tool_call_arguments=config.expected_tool_call_arguments,
        telemetry=False,
        show_spinner=False,
    )
    result = evaluation.run()
    assert result is not None
    return {"eval_status": result.eval_status, **{name: list(getattr(result, name)) for name in AGNO_LISTS}}


def ours(result: RunResult) -> dict[str, Any]:
    verdict = result.verdict
    return {"eval_status": verdict.eval_status, **{name: list(getattr(verdict, name)) for name in AGNO_LISTS}}


@pytest.mark.parametrize(("scenario", "config"), CASES)
def test_verdict_equals_agno_reliability_eval(harness: Harness, scenario: Scenario, config: Config) -> None:
    runner = scenario.build()

    def run():
        with expect(
            tool_calls=config.expected_tool_calls,
            arguments=config.expected_tool_call_arguments,
            allow_additional=config.allow_additional_tool_calls,
        ) as check:
            output = runner.run(scenario.prompt)
        return check, output

    check, output = isolated(run)
    assert len(check.results) == 1, [r.agent for r in check.results]
    expected = agno_verdict(output, config)
    assert expected["eval_status"] == config.status, f"agno itself says {expected}"
    assert ours(check.result) == expected
    assert check.result.verdict.order_violations == []

    # The exported run span says the same.
    (span,) = harness.run_spans()
    attributes = dict(span.attributes)
    assert attributes["reliability.status"] == expected["eval_status"]
    for name in AGNO_LISTS:
        assert list(attributes[f"reliability.{name}"]) == expected[name], name
    assert attributes["reliability.order_violations"] == ()
    (event,) = [e for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert event.attributes["gen_ai.evaluation.score.label"] == ("pass" if config.status == "PASSED" else "fail")


# -- details a user sees beyond the Agno lists ----------------------------------------


def test_single_tool_run_span_and_store(harness: Harness) -> None:
    agent = single_tool()

    def run():
        with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10}}) as check:
            output = agent.run("What is 10 times 5?")
        return check, output

    check, output = isolated(run)
    check.assert_passed()
    assert output.content == "50"
    assert len(agent.model._scripted_requests) == 2  # everything was answered by the mock transport

    (span,) = harness.run_spans()
    assert span.name == "Calculator_Agent.run"
    attributes = dict(span.attributes)
    assert attributes["agno.run.id"] == output.run_id
    assert attributes["reliability.expectation"] == "inline"
    assert attributes["reliability.tool_calls.total"] == 1
    assert attributes["reliability.tool_calls.errored"] == 0
    assert check.result.agent == "Calculator Agent"
    assert [(a.tool, a.arguments, a.outcome, a.call_id) for a in check.result.verdict.chain] == [
        ("multiply", {"a": 10, "b": 5}, "ok", "call_1")
    ]

    store = open_store(harness.store_path)
    try:
        (row,) = store.query()
        assert (row.trace_id, row.run_span_id) == (span.context.trace_id, span.context.span_id)
        assert row.to_json() == check.result.to_json()
    finally:
        store.close()


def test_tool_error_and_refusal_counts_on_the_run_span(harness: Harness) -> None:
    isolated(lambda: retry_after_error().run("What is the TSLA price?"))
    isolated(lambda: tool_call_limit().run("Multiply 10 by 5, then add 1."))
    harness.processor.drain()
    by_name = {s.name: dict(s.attributes) for s in harness.run_spans()}
    stock, calc = by_name["Stock_Agent.run"], by_name["Calculator_Agent.run"]
    assert (stock["reliability.tool_calls.total"], stock["reliability.tool_calls.errored"]) == (2, 1)
    assert (calc["reliability.tool_calls.total"], calc["reliability.tool_calls.refused"]) == (2, 1)
    # No expectation: the default checks fail errored and refused attempts.
    assert stock["reliability.status"] == calc["reliability.status"] == "FAILED"
    assert stock["reliability.expectation"] == calc["reliability.expectation"] == "default"


def test_paused_run_is_pending_then_continue_run_completes_it(harness: Harness) -> None:
    agent = paused_for_confirmation(answer("Deleted /tmp/x."))
    agent.db = InMemoryDb()

    def first():
        with expect(tool_calls=["delete_file"]) as check:
            output = agent.run("Delete /tmp/x.")
        return check, output

    check, paused = isolated(first)
    assert paused.is_paused
    verdict = check.result.verdict
    assert verdict.eval_status == "FAILED"
    assert verdict.missing_tool_calls == [f"delete_file {ANNOTATION}"]
    assert [a.outcome for a in verdict.chain] == ["pending"]
    assert dict(harness.run_spans()[0].attributes)["reliability.tool_calls.pending"] == 1

    for requirement in paused.active_requirements:
        requirement.confirm()

    def second():
        with expect(tool_calls=["delete_file"]) as check:
            output = agent.continue_run(run_response=paused)
        return check, output

    check, done = isolated(second)
    assert not done.is_paused and done.run_id == paused.run_id
    check.assert_passed()
    assert check.result.verdict.passed_tool_calls == ["delete_file"]
    assert agno_verdict(done, Config(["delete_file"]))["eval_status"] == "PASSED"


def test_team_chain_names_the_member(harness: Harness) -> None:
    team = team_delegation()

    def run():
        with expect(tool_calls=["delegate_task_to_member", "multiply"]) as check:
            output = team.run("What is 6 times 7?")
        return check, output

    check, output = isolated(run)
    check.assert_passed()
    assert len(output.member_responses) == 1
    chain = [(a.agent_path, a.tool, a.outcome) for a in check.result.verdict.chain]
    assert chain == [
        (("Math Team",), "delegate_task_to_member", "ok"),
        (("Math Team", "Calculator Agent"), "multiply", "ok"),
    ]
    (span,) = harness.run_spans()  # only the team run is judged; the member run is part of it
    assert span.name == "Math_Team.run"
    assert check.result.agent == "Math Team"


def test_agent_run_after_team_run_survives_the_context_leak(harness: Harness) -> None:
    """openinference-instrumentation-agno 1.0.15 leaves the ended team span current after
    ``Team.run``: a later ``Agent.run`` in the same context is parented under it. The two
    runs must still be judged separately, each with its own tools."""
    team, agent = team_delegation(), single_tool()

    def both():
        with expect(tool_calls=["delegate_task_to_member", "multiply"]) as team_check:
            team.run("What is 6 times 7?")
        with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}) as agent_check:
            agent.run("What is 10 times 5?")
        return team_check, agent_check

    team_check, agent_check = isolated(both)
    team_check.assert_passed()
    agent_check.assert_passed()
    assert [a.tool for a in agent_check.result.verdict.chain] == ["multiply"]
    assert agent_check.result.agent == "Calculator Agent"
    assert [a.arguments for a in team_check.result.verdict.chain] == [
        {"member_id": "calculator-agent", "task": "Multiply 6 by 7"},
        {"a": 6, "b": 7},
    ]
    spans = {s.name: s for s in harness.run_spans()}
    # The leak is real (the agent span hangs under the ended team span) ...
    assert spans["Calculator_Agent.run"].parent is not None
    assert spans["Calculator_Agent.run"].parent.span_id == spans["Math_Team.run"].context.span_id
    # ... and both got their own verdict.
    assert spans["Calculator_Agent.run"].attributes["reliability.status"] == "PASSED"
    assert spans["Math_Team.run"].attributes["reliability.status"] == "PASSED"


def test_async_agent_run(harness: Harness) -> None:
    agent = single_tool(asynchronous=True)

    async def main():
        with expect(tool_calls=["multiply"], arguments={"multiply": {"a": 10, "b": 5}}) as check:
            output = await agent.arun("What is 10 times 5?")
        return check, output

    check, output = isolated(lambda: asyncio.run(main()))
    check.assert_passed()
    assert output.content == "50" and len(agent.model._scripted_requests) == 2
    assert ours(check.result) == agno_verdict(
        output, Config(["multiply"], expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}})
    )
    (span,) = harness.run_spans()
    assert span.name == "Calculator_Agent.arun"


@pytest.mark.parametrize(
    ("build", "config", "span_name"),
    [
        (single_tool, Config(["multiply"], expected_tool_call_arguments={"multiply": {"a": 10, "b": 5}}),
         "Calculator_Agent.run"),
        (tool_error, Config(["lookup_stock_price"]), "Stock_Agent.run"),
        (team_delegation, Config(["delegate_task_to_member", "multiply"]), "Math_Team.run"),
        (team_delegation, Config(["multiply"]), "Math_Team.run"),
    ],
    ids=["agent_single_tool", "agent_tool_error", "team_delegation", "team_delegation_strict"],
)
def test_streaming_run_equals_agno(harness: Harness, build, config: Config, span_name: str) -> None:
    """``run(stream=True)``: server-sent events, ``invoke_stream`` spans, same verdict as agno."""
    runner = build()

    def run():
        with expect(
            tool_calls=config.expected_tool_calls, arguments=config.expected_tool_call_arguments
        ) as check:
            outputs = [
                event
                for event in runner.run("Please help.", stream=True, yield_run_output=True)
                if isinstance(event, (RunOutput, TeamRunOutput))
            ]
        return check, outputs[-1]

    check, output = isolated(run)
    assert ours(check.result) == agno_verdict(output, config)
    (span,) = harness.run_spans()
    assert span.name == span_name
    assert dict(span.attributes)["reliability.status"] == check.result.verdict.eval_status
    names = {s.name for s in harness.exporter.get_finished_spans()}
    assert "OpenAIChat.invoke_stream" in names and "OpenAIChat.invoke" not in names


def test_assert_passed_message_says_expected_against_got(harness: Harness) -> None:
    check = isolated(lambda: _run_with_expect(tool_error(), ["lookup_stock_price"], "What is the TSLA price?"))
    with pytest.raises(AssertionError) as info:
        check.assert_passed()
    message = str(info.value)
    assert message.startswith("ReliabilityEval failed: agent ")
    assert "  expected:   ['lookup_stock_price']" in message
    assert f"  missing:    ['lookup_stock_price {ANNOTATION}']" in message
    assert "errored: ['lookup_stock_price']" in message


def _run_with_expect(runner: Agent | Team, tool_names: list[str], prompt: str):
    with expect(tool_calls=tool_names) as check:
        runner.run(prompt)
    return check
