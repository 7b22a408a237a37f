"""``ReliabilitySpanProcessor`` with the real SDK: forwarding, enrichment, bounds, and never raising."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, set_span_in_context

from otel_reliability import Expectation, ReliabilitySpanProcessor, expect
from otel_reliability.stores import open_store


class Harness:
    def __init__(self, **options):
        self.exporter = InMemorySpanExporter()
        self.results = []
        options.setdefault("store", None)
        options.setdefault("on_result", self.results.append)
        self.processor = ReliabilitySpanProcessor(SimpleSpanProcessor(self.exporter), **options)
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("test")

    def agent_run(self, agent="calculator", calls=(("multiply", {"a": 10, "b": 5}, None),), attributes=None, member=None):
        """One agent run: a model call requesting the calls, then their executions."""
        with self.tracer.start_as_current_span(
            f"invoke_agent {agent}",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent, **(attributes or {})},
        ):
            parts = [{"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": args} for i, (name, args, _) in enumerate(calls)]
            with self.tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
            }):
                pass
            for i, (name, args, error) in enumerate(calls):
                with self.tracer.start_as_current_span(f"execute_tool {name}", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": f"call_{i}", "gen_ai.tool.call.arguments": json.dumps(args),
                }) as tool_span:
                    if error:
                        tool_span.set_status(Status(StatusCode.ERROR, error))
                    if member is not None and i == 0:
                        member()

    def settle(self):
        self.processor.drain()
        return self.exporter.get_finished_spans()


def run_span(spans, agent="calculator"):
    [span] = [s for s in spans if s.name == f"invoke_agent {agent}"]
    return span


def test_every_span_is_forwarded_and_the_run_span_carries_the_verdict():
    harness = Harness(expectations=[Expectation(name="calc", expected_tool_calls=["multiply"])])
    harness.agent_run()
    spans = harness.settle()
    assert sorted(s.name for s in spans) == ["chat model", "execute_tool multiply", "invoke_agent calculator"]
    span = run_span(spans)
    assert span.attributes["reliability.status"] == "PASSED"
    assert span.attributes["reliability.expectation"] == "calc"
    assert span.attributes["reliability.passed_tool_calls"] == ("multiply",)
    assert span.attributes["gen_ai.agent.name"] == "calculator"  # the original attributes stay
    [event] = [e for e in span.events if e.name == "gen_ai.evaluation.result"]
    assert event.attributes["gen_ai.evaluation.score.label"] == "pass"


def test_a_delegated_member_run_is_judged_only_as_part_of_its_top_level_run():
    harness = Harness(expectations=[Expectation(name="team", expected_tool_calls=["ask_researcher", "lookup"])])
    harness.agent_run(
        agent="router",
        calls=(("ask_researcher", {"q": "x"}, None),),
        member=lambda: harness.agent_run(agent="researcher", calls=(("lookup", {"term": "x"}, None),)),
    )
    spans = harness.settle()
    assert [(r.agent, r.verdict.eval_status) for r in harness.results] == [("router", "PASSED")]
    assert "reliability.status" not in run_span(spans, "researcher").attributes
    assert [(a.tool, a.agent) for a in harness.results[0].verdict.chain] == [("ask_researcher", "router"), ("lookup", "researcher")]


def test_an_errored_call_fails_a_run_that_no_expectation_selects():
    harness = Harness()
    harness.agent_run(calls=(("multiply", {"a": 1}, "boom"),))
    span = run_span(harness.settle())
    assert span.attributes["reliability.status"] == "FAILED"
    assert span.attributes["reliability.tool_calls.errored"] == 1


def test_span_attribute_expectation_is_used_when_no_inline_one_applies():
    harness = Harness()
    harness.agent_run(attributes={"reliability.expect.tool_calls": ("divide",)})
    span = run_span(harness.settle())
    assert span.attributes["reliability.missing_tool_calls"] == ("divide",)
    assert span.attributes["reliability.failed_tool_calls"] == ("multiply",)


def test_inline_expect_beats_span_attributes():
    harness = Harness()
    with expect(tool_calls=["multiply"]) as check:
        harness.agent_run(attributes={"reliability.expect.tool_calls": ("divide",)})
    check.assert_passed()
    assert check.result.expectation == "inline"


@pytest.mark.parametrize(
    "expected, lines",
    [
        pytest.param(dict(tool_calls=["divide"], arguments={"divide": {"a": 1}}),
                     ["tool calls:", "  expected:   ['divide']", "  got:        ['multiply']", "  missing:    ['divide']",
                      "  unexpected: ['multiply']"], id="wrong-tool"),
        pytest.param(dict(tool_calls=["multiply"], arguments={"multiply": {"a": 3, "c": 1}}),
                     ["arguments of multiply (subset):", "  a: expected 3, got 10", "  c: expected 1, got nothing"],
                     id="wrong-arguments"),
    ],
)
def test_assert_passed_says_expected_against_got_per_field(expected, lines):
    """The same text the pytest fixture gives (issue 23 point 5), not the result's repr."""
    harness = Harness()
    with expect(**expected) as check:
        harness.agent_run()
    with pytest.raises(AssertionError) as failure:
        check.assert_passed()
    head, *rest = str(failure.value).splitlines()
    assert head.startswith("ReliabilityEval failed: agent 'calculator', expectation 'inline', score ")
    assert rest == lines


def test_verdicts_land_in_the_sqlite_store(tmp_path):
    path = tmp_path / "results.db"
    harness = Harness(store=str(path))
    harness.agent_run()
    harness.settle()
    harness.processor.shutdown()
    [stored] = open_store(path).query()
    assert (stored.agent, stored.verdict.eval_status, stored.verdict.passed_tool_calls) == ("calculator", "PASSED", ["multiply"])


def test_metrics_count_evaluations_and_tool_call_outcomes():
    reader = InMemoryMetricReader()
    harness = Harness(meter_provider=MeterProvider(metric_readers=[reader]))
    harness.agent_run(calls=(("multiply", {"a": 1}, None), ("divide", {"a": 1}, "zero")))
    harness.settle()
    points = {
        metric.name: [(dict(p.attributes), getattr(p, "value", None)) for p in metric.data.data_points]
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
    }
    assert points["agent.reliability.evaluations"] == [
        ({"gen_ai.agent.name": "calculator", "reliability.status": "FAILED", "reliability.expectation": "default"}, 1)
    ]
    outcomes = {(a["gen_ai.tool.name"], a["reliability.outcome"]): v for a, v in points["agent.reliability.tool_calls"]}
    assert outcomes == {("multiply", "ok"): 1, ("divide", "error"): 1}


def test_a_failing_callback_never_reaches_the_app():
    def explode(result):
        raise RuntimeError("callback bug")

    harness = Harness(on_result=explode)
    harness.agent_run()  # would raise here if the processor let it through
    spans = harness.settle()
    assert run_span(spans).attributes["reliability.status"] == "PASSED"


def test_an_unreadable_span_is_still_forwarded_and_the_trace_still_judged():
    harness = Harness()
    with harness.tracer.start_as_current_span("invoke_agent calculator", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator",
    }):
        with harness.tracer.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.output.messages": '[{"parts": 5}, "junk", {"parts": [7]}]',
        }):
            pass
    spans = harness.settle()
    assert len(spans) == 2
    assert run_span(spans).attributes["reliability.tool_calls.total"] == 0


def test_traces_beyond_the_buffer_bound_are_evicted_and_counted():
    harness = Harness(max_traces=2)
    roots = [harness.tracer.start_span("request") for _ in range(5)]
    for root in roots:  # children end, their roots never do: the traces stay incomplete
        harness.tracer.start_span("child", context=set_span_in_context(root)).end()
    harness.settle()
    assert harness.processor.stats.traces_dropped == {"max_traces": 3}
    assert harness.processor.buffered_traces == 2


def test_runs_ending_back_to_back_are_each_judged_and_enriched():
    harness = Harness()
    for agent in ("first", "second", "third"):
        harness.agent_run(agent=agent)
    spans = harness.settle()
    assert [r.agent for r in harness.results] == ["first", "second", "third"]
    for agent in ("first", "second", "third"):
        assert run_span(spans, agent).attributes["reliability.status"] == "PASSED"
    harness.agent_run(agent="fourth")  # the worker is now inside its batch window
    spans = harness.settle()
    assert run_span(spans, "fourth").attributes["reliability.status"] == "PASSED"


def test_a_stream_of_huge_spans_stays_within_the_byte_budget_and_every_run_span_is_forwarded():
    budget = 4 * 1024 * 1024
    blob = "b" * 200_000
    reader = InMemoryMetricReader()
    harness = Harness(max_buffered_bytes=budget, meter_provider=MeterProvider(metric_readers=[reader]))
    endless = []
    for i in range(20):
        # a request whose root never ends: its tool calls' big arguments stay buffered
        root = harness.tracer.start_span(f"request {i}")
        endless.append(root)
        for j in range(2):
            harness.tracer.start_span(f"execute_tool store {j}", context=set_span_in_context(root), attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "store",
                "gen_ai.tool.call.id": f"call_{j}", "gen_ai.tool.call.arguments": json.dumps({"blob": blob}),
            }).end()
        harness.agent_run(calls=(("multiply", {"a": i, "blob": blob}, None),), attributes={"app.document": blob})
        harness.processor.drain()
        assert harness.processor.buffered_bytes <= budget
    spans = harness.settle()
    runs = [s for s in spans if s.name == "invoke_agent calculator"]
    assert len(runs) == 20, "every run span reaches the wrapped exporter"
    dropped = harness.processor.stats.traces_dropped
    assert dropped.get("max_bytes", 0) >= 20 * 2 * 200_000 // budget - 1, dropped
    counted = {
        dict(point.attributes)["reason"]: point.value
        for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
        if metric.name == "agent.reliability.traces.dropped"
        for point in metric.data.data_points
    }
    assert counted == dropped
    # Each run was judged with its own tool call, never from a trace cut short.
    assert [r.verdict.chain[0].tool for r in harness.results] == ["multiply"] * len(harness.results)
    assert len(harness.results) == 20


def test_a_run_whose_trace_was_evicted_is_forwarded_without_a_verdict_rather_than_judged_in_part():
    harness = Harness(max_buffered_bytes=1024 * 1024)
    # the call's arguments (in the model's output and the tool span) outgrow the budget: the
    # trace is evicted before the run ends
    harness.agent_run(calls=(("multiply", {"a": 1, "blob": "b" * 2_000_000}, None),))
    spans = harness.settle()
    assert "reliability.status" not in run_span(spans).attributes
    assert harness.results == []
    # evicted once; what of it the worker buffers after that (as batches fall) is evicted in turn
    dropped = harness.processor.stats.traces_dropped
    assert dropped["max_bytes"] == 1 and set(dropped) <= {"max_bytes", "arrived_after_eviction"}, dropped
    assert harness.processor.buffered_bytes == 0
