"""No input can cost another trace its verdict (issue 22, scenarios 2 and 3).

A lone surrogate in an OTLP/JSON string (legal JSON, ``"\\ud800"``), tool arguments nested
a hundred thousand levels deep, and a trace whose runs nest deeper than Python's stack each
arrive beside clean traces in the same request and the same judging round of a real
receiver: every clean trace gets the verdict ``eval`` gives it, the poisoned ones get a
verdict too (repaired, kept raw, or NOT_EVALUATED with the reason), ``/metrics`` keeps
answering, and what was repaired or failed is counted by reason.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.sources import spans_from_json

from .receiver_harness import (
    agent_spans,
    by_run,
    export_request,
    new_trace_id,
    otlp_json,
    receivers,  # noqa: F401 - fixture
    wait_until,
)
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 - fixture

DEEP = "[" * 100_000


def _nested_runs(trace_id: int, depth: int) -> list:
    """A run whose member runs nest ``depth`` levels deep: each agent span the child of the last."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    spans = []
    for level in range(1, depth + 1):
        span = Span(
            trace_id=trace_id.to_bytes(16, "big"), span_id=level.to_bytes(8, "big"),
            parent_span_id=(level - 1).to_bytes(8, "big") if level > 1 else b"",
            name=f"invoke_agent level-{level}", start_time_unix_nano=1_000_000_000 + level,
            end_time_unix_nano=2_000_000_000 - level,
        )
        for key, value in (("gen_ai.operation.name", "invoke_agent"), ("gen_ai.agent.name", f"level-{level}")):
            span.attributes.add(key=key).value.string_value = value
        spans.append(span)
    return spans


def _eval_of(body: bytes) -> list[dict]:
    return by_run(r.to_json() for r in judge_spans(Engine(), spans_from_json(body)))


def test_a_lone_surrogate_in_one_trace_costs_no_other_trace_its_verdict_and_metrics_keep_answering(receivers):  # noqa: F811
    receiver = receivers.start("surrogates", decision_wait=0.2)
    clean = [agent_spans(new_trace_id(), f"clean-{i}", failed=["get_news"] if i else ()) for i in range(3)]
    poisoned = agent_spans(new_trace_id(), "poison", calls=[("lookup", {"q": "x"})])
    body = otlp_json(export_request([span for spans in (*clean, poisoned) for span in spans]))
    # the agent name and a tool name each end in a lone surrogate, as JSON allows
    # the model's request names the tool inside a JSON text: its escape has one backslash more
    body = body.replace(b'\\"lookup\\"', b'\\"lookup\\\\udfff\\"')
    body = body.replace(b'"poison"', b'"poison\\ud800"').replace(b'"lookup"', b'"lookup\\udfff"')
    assert body.count(b"\\ud800") == 1 and body.count(b"\\udfff") == 2  # the tool span, the request

    reply = receiver.post_traces(body, "application/json")

    assert reply.status == 200, reply.body
    expected = _eval_of(body)
    assert {r["agent"] for r in expected} == {"clean-0", "clean-1", "clean-2", "poison\ufffd"}
    got = receiver.wait_verdicts(expected)
    assert any("lookup\ufffd" in r["passed_tool_calls"] + r["additional_tool_calls"] for r in got)
    assert receiver.metric("agent_reliability_text_repaired_total", reason="lone_surrogate") == 3
    assert receiver.http("GET", "/metrics").status == 200
    assert receiver.metric("agent_reliability_sink_failures_total") == 0


def test_arguments_nested_too_deeply_are_kept_raw_and_the_round_judges_every_other_trace(receivers):  # noqa: F811
    receiver = receivers.start("deep-arguments", decision_wait=0.5)
    clean = [agent_spans(new_trace_id(), f"clean-{i}", failed=["get_weather"] if i % 2 else ()) for i in range(4)]
    deep = agent_spans(new_trace_id(), "deep-arguments", calls=[("parse", {"payload": "placeholder"})])
    body = otlp_json(export_request([span for spans in (*clean, deep) for span in spans]))
    # the tool span's arguments, and the model's request for the call, become 100,000 open brackets
    body = body.replace(b'{\\"payload\\": \\"placeholder\\"}', DEEP.encode())
    assert body.count(DEEP.encode()) >= 1

    assert receiver.post_traces(body, "application/json").status == 200

    expected = _eval_of(body)
    assert len(expected) == 5
    receiver.wait_verdicts(expected)
    assert receiver.metric("agent_reliability_evaluations_failed_total") == 0  # kept raw: nothing raised


def test_a_trace_that_makes_the_engine_raise_gets_not_evaluated_and_the_round_goes_on(receivers):  # noqa: F811
    receiver = receivers.start("nested-runs", decision_wait=0.5)
    clean = [agent_spans(new_trace_id(), f"clean-{i}", failed=["get_news"] if i % 2 else ()) for i in range(4)]
    nested_id = new_trace_id()
    nested = _nested_runs(nested_id, 3000)  # deeper than Python's stack: assembly raises RecursionError
    receiver.send([span for spans in clean for span in spans] + nested)

    expected = by_run(r.to_json() for spans in clean for r in judge_spans(Engine(), _spans(spans)))
    got = receiver.wait_results([f"{nested_id:032x}", *(f"{s[0].trace_id.hex()}" for s in clean)], runs=5)
    clean_ids = {s[0].trace_id.hex() for s in clean}
    assert by_run(r for r in got if r["trace_id"] in clean_ids) == expected
    (failed,) = [r for r in got if r["trace_id"] == f"{nested_id:032x}"]
    assert failed["eval_status"] == "NOT_EVALUATED"
    assert failed["agent"] == "level-1" and failed["run_span_id"] == f"{1:016x}"
    assert "recursion" in failed["unevaluated_checks"][0]
    assert receiver.metric("agent_reliability_evaluations_failed_total", reason="recursion") == 1
    assert receiver.http("GET", "/metrics").status == 200


def _spans(protobuf_spans: list) -> list:
    from otel_reliability.sources import spans_from_request

    return spans_from_request(export_request(protobuf_spans))


def test_the_span_processor_judges_every_run_beside_one_that_makes_the_engine_raise():
    exporter = InMemorySpanExporter()
    results = []
    processor = ReliabilitySpanProcessor(SimpleSpanProcessor(exporter), store=None, on_result=results.append)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("poison")

    def run(agent: str, arguments: str) -> None:
        with tracer.start_as_current_span(f"invoke_agent {agent}", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
        }):
            with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}):
                pass  # a model call: the run's refusals could be seen
            with tracer.start_as_current_span("execute_tool multiply", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "multiply",
                "gen_ai.tool.call.arguments": arguments,
            }):
                pass

    def nested(depth: int) -> None:
        spans = []
        for level in range(depth):
            span = tracer.start_span(f"invoke_agent level-{level}", context=trace.set_span_in_context(spans[-1]) if spans else None,
                                     attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"level-{level}"})
            spans.append(span)
        for span in reversed(spans):  # the app's span.end() must not see whatever judging raises
            span.end()

    run("before", '{"a": 10, "b": 5}')
    run("deep", DEEP)
    nested(3000)
    run("after", '{"a": 1, "b": 2}')
    assert processor.force_flush()
    processor.shutdown()

    by_agent = {r.agent: r for r in results}
    assert by_agent["before"].verdict.eval_status == by_agent["after"].verdict.eval_status == "PASSED"
    assert by_agent["deep"].verdict.chain[0].arguments == {"_raw": DEEP}
    assert by_agent["level-0"].verdict.eval_status == "NOT_EVALUATED"
    assert len([span for span in exporter.get_finished_spans()]) == 3 * 3 + 3000


def test_a_verdict_the_store_cannot_encode_costs_that_verdict_alone(receivers, postgres_server):  # noqa: F811
    """PostgreSQL takes no NUL in text, which JSON allows (``\\u0000``): the verdict naming
    such an agent is refused by the store, the others of the same write are stored."""
    url = fresh_schema_url(postgres_server)
    receiver = receivers.start("nul", decision_wait=0.5, store=url, config={"reputation": False})
    clean = [agent_spans(new_trace_id(), f"clean-{i}", failed=["get_news"] if i else ()) for i in range(3)]
    nul = agent_spans(new_trace_id(), "nul-agent")
    body = otlp_json(export_request([span for spans in (*clean, nul) for span in spans]))
    body = body.replace(b'"nul-agent"', b'"nul\\u0000agent"')

    assert receiver.post_traces(body, "application/json").status == 200

    expected = [r for r in _eval_of(body) if r["agent"].startswith("clean")]
    wait_until(lambda: receiver.metric("agent_reliability_verdicts_dropped_total", reason="unencodable", reliability_sink="store") == 1,
               15, "the one verdict the store refused, counted")
    receiver.wait_verdicts(expected)
    assert receiver.results_for([nul[0].trace_id.hex()]) == []
