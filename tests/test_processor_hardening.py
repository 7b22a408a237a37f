"""``ReliabilitySpanProcessor`` under faults, with the real SDK and real exporters: a forked
child exports its runs judged; a result callback raising ``SystemExit``, ``pytest.fail`` or
``KeyboardInterrupt`` reaches neither the app nor the exporter; attributes of any type on
hand-built spans raise nothing; ``force_flush`` says True only when everything was handled;
spans after ``shutdown()`` go straight on; open spans are bounded; and a run judged before
its parent run arrived loses its stored verdict when the trace is judged again, through the
processor and through the receiver, in every results store."""

from __future__ import annotations

import itertools
import json
import os
import threading

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import SpanData
from otel_reliability.receiver.config import ReceiverConfig
from otel_reliability.receiver.intake import JSON, Body
from otel_reliability.receiver.service import ReceiverService
from otel_reliability.stores import open_store

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)
from .sdk_replay import replay_events

RUN = "invoke_agent calculator"


class App:
    """An app with a tracer provider whose export processor ``ReliabilitySpanProcessor`` wraps."""

    def __init__(self, wrapped: SpanProcessor | None = None, **options) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        options.setdefault("store", None)
        self.processor = ReliabilitySpanProcessor(
            wrapped or SimpleSpanProcessor(self.exporter), meter_provider=MeterProvider(metric_readers=[self.reader]),
            **options,
        )
        self.provider = TracerProvider()
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer("app")

    def run(self, agent: str = "calculator", tool: str = "multiply") -> None:
        with self.tracer.start_as_current_span(
            f"invoke_agent {agent}", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
        ):
            self.tool(tool)

    def tool(self, name: str = "multiply") -> None:
        with self.tracer.start_as_current_span(f"execute_tool {name}", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.arguments": "{}",
        }):
            pass

    def run_spans(self, name: str = RUN) -> list:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    def metric(self, name: str) -> dict[tuple, int]:
        points = {}
        for resource in (self.reader.get_metrics_data() or _no_data()).resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            points[tuple(sorted(point.attributes.items()))] = point.value
        return points


def _no_data():
    class Empty:
        resource_metrics = ()

    return Empty()


def enriched(spans) -> int:
    return sum("reliability.status" in s.attributes for s in spans)


# -- fork ---------------------------------------------------------------------------------


def _in_a_child(work) -> dict:
    """Run ``work()`` in a forked child; what it returns comes back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, whatever happens, and leave without running the parent's exit hooks
        os.close(read_end)
        try:
            report = work()
        except BaseException as exc:  # noqa: BLE001 (the parent must hear about any failure)
            report = {"error": repr(exc)}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b'{"error": "the child said nothing"}')
    os.waitpid(pid, 0)
    assert "error" not in report, report["error"]
    return report


def test_a_forked_child_exports_every_run_span_judged_and_the_parent_still_does(tmp_path):
    store = tmp_path / "results.db"
    app = App(store=str(store))
    app.run()  # the parent's worker has work behind it when the fork comes
    assert app.processor.force_flush()

    def child() -> dict:
        app.exporter.clear()
        for _ in range(10):
            app.run()
        flushed = app.processor.force_flush(10_000)
        stored = open_store(store).query(limit=None)
        return {"flushed": flushed, "runs": len(app.run_spans()), "enriched": enriched(app.run_spans()),
                "stored": len(stored)}

    assert _in_a_child(child) == {"flushed": True, "runs": 10, "enriched": 10, "stored": 11}
    app.run()
    assert app.processor.force_flush()
    assert (len(app.run_spans()), enriched(app.run_spans())) == (2, 2)
    assert len(open_store(store).query(limit=None)) == 12  # the child's ten, the parent's two


def test_a_run_started_before_the_fork_and_ended_in_the_child_is_judged_with_all_its_calls():
    app = App()
    read_end, write_end = os.pipe()
    with app.tracer.start_as_current_span(RUN, attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator"}):
        app.tool("multiply")  # ended before the fork …
        assert app.processor.force_flush()  # … and buffered by the parent's worker
        pid = os.fork()
        if pid == 0:
            app.tool("divide")
    # The run span ends in both processes (its `with` block exits in each).
    if pid == 0:
        try:
            flushed = app.processor.force_flush(10_000)
            report = {"flushed": flushed, "totals": [s.attributes.get("reliability.tool_calls.total") for s in app.run_spans()]}
        except BaseException as exc:  # noqa: BLE001 (the parent must hear about any failure)
            report = {"error": repr(exc)}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b'{"error": "the child said nothing"}')
    os.waitpid(pid, 0)
    assert report == {"flushed": True, "totals": [2]}  # multiply from before the fork, divide from after
    assert app.processor.force_flush()
    assert [s.attributes["reliability.tool_calls.total"] for s in app.run_spans()] == [1]  # the parent saw only multiply


class _BlocksInTheParent(SpanProcessor):
    """A wrapped processor whose first run span keeps the parent's worker busy until released."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.inner = SimpleSpanProcessor(exporter)
        self.parent = os.getpid()
        self.busy = threading.Event()
        self.release = threading.Event()

    def on_end(self, span) -> None:
        if span.name == "invoke_agent first" and os.getpid() == self.parent:
            self.busy.set()
            self.release.wait()
        self.inner.on_end(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


def test_a_fork_that_catches_the_worker_mid_batch_gives_the_runs_open_at_the_fork_no_verdict():
    """The parent's worker is stuck forwarding a span: the child cannot trust what it
    inherited, starts empty, and forwards the run that was open at the fork without a verdict
    (it would be judged on half its calls) while judging the runs it makes itself."""
    exporter = InMemorySpanExporter()
    wrapped = _BlocksInTheParent(exporter)
    app = App(wrapped)
    app.exporter = exporter
    app.run(agent="first")
    assert wrapped.busy.wait(10)  # the worker is inside its batch, and stays there past the fork's wait
    read_end, write_end = os.pipe()
    with app.tracer.start_as_current_span("invoke_agent second", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "second",
    }):
        app.tool("multiply")  # queued, never handled before the fork
        pid = os.fork()
        if pid == 0:
            app.tool("divide")
    if pid == 0:
        try:
            app.run(agent="third")
            flushed = app.processor.force_flush(10_000)
            report = {"flushed": flushed, "dropped": app.processor.stats.dropped,
                      "second": [enriched(app.run_spans("invoke_agent second")), len(app.run_spans("invoke_agent second"))],
                      "third": enriched(app.run_spans("invoke_agent third"))}
        except BaseException as exc:  # noqa: BLE001 (the parent must hear about any failure)
            report = {"error": repr(exc)}
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b'{"error": "the child said nothing"}')
    os.waitpid(pid, 0)
    wrapped.release.set()
    assert report == {"flushed": True, "dropped": {"fork": 2}, "second": [0, 1], "third": 1}
    assert app.processor.force_flush()  # the parent carries on with its own copy
    assert [enriched(app.run_spans(f"invoke_agent {agent}")) for agent in ("first", "second")] == [1, 1]


# -- hostile callbacks and wrapped processors -------------------------------------------------


def _raise_failed():
    pytest.fail("a test's assertion inside the callback")


@pytest.mark.parametrize(
    "raise_it",
    [
        pytest.param(lambda: (_ for _ in ()).throw(SystemExit(3)), id="SystemExit"),
        pytest.param(_raise_failed, id="pytest.fail"),
        pytest.param(lambda: (_ for _ in ()).throw(KeyboardInterrupt()), id="KeyboardInterrupt"),
    ],
)
def test_a_callback_raising_a_base_exception_reaches_neither_the_app_nor_the_exports(raise_it):
    def callback(result):
        raise_it()

    app = App(on_result=callback)
    for _ in range(3):
        app.run()  # the app would see it here
    assert app.processor.force_flush()
    assert (len(app.run_spans()), enriched(app.run_spans())) == (3, 3)
    assert app.metric("agent.reliability.sink.failures") == {(("reliability.sink", "callback"),): 3}
    app.run()  # the worker is still there
    assert app.processor.force_flush() and enriched(app.run_spans()) == 4


class _RaisesOnRunSpans(SpanProcessor):
    """A wrapped processor that raises ``SystemExit`` on the first run span it is handed."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.inner = SimpleSpanProcessor(exporter)
        self.raised = False

    def on_end(self, span) -> None:
        if span.name == RUN and not self.raised:
            self.raised = True
            raise SystemExit("wrapped processor")
        self.inner.on_end(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


def test_a_wrapped_processor_raising_on_the_worker_is_counted_and_the_next_runs_still_go_on():
    exporter = InMemorySpanExporter()
    app = App(_RaisesOnRunSpans(exporter))
    app.exporter = exporter
    for _ in range(3):
        app.run()
    assert app.processor.force_flush()
    assert (len(app.run_spans()), enriched(app.run_spans())) == (2, 2)  # the first one was lost to the raise
    assert app.processor.stats.forward_failures == 1
    assert app.metric("agent.reliability.sink.failures") == {(("reliability.sink", "span_processor"),): 1}


# -- attributes of any type ------------------------------------------------------------------

# Every attribute an adapter (or the span-attribute expectations) reads.
ATTRIBUTES = """
gen_ai.operation.name gen_ai.agent.name gen_ai.tool.name gen_ai.tool.call.id gen_ai.tool.call.arguments
gen_ai.tool.call.result gen_ai.tool.type gen_ai.input.messages gen_ai.output.messages gen_ai.workflow.nodes
gen_ai.conversation.id session.id final_result error.type
openinference.span.kind tool.name tool.id tool.parameters tool_call.id input.value output.value agent.name
graph.node.id graph.node.name
traceloop.span.kind traceloop.entity.name traceloop.entity.input traceloop.entity.output
traceloop.association.properties.lc_agent_name
ai.operationId ai.telemetry.functionId ai.toolCall.name ai.toolCall.id ai.toolCall.args ai.response.text
ai.response.toolCalls ai.prompt.messages
gcp.vertex.agent.llm_request gcp.vertex.agent.llm_response gcp.vertex.agent.tool_call_args
gcp.vertex.agent.tool_response adk.experimental.response.source
pydantic_ai.tool.failure_stage agno.run.id smolagents.max_steps tool.agent_role tool.result_as_answer
reliability.policy.denied reliability.expect.case reliability.expect.tool_calls
""".split()

# A hand-built ReadableSpan keeps whatever it is given; the SDK's own spans only the first few.
VALUES = {
    "list": ["invoke_agent", "execute_tool"],
    "mixed-tuple": (1, "a", None),
    "bytes": b"\xff\x00invoke_agent",
    "None": None,
    "int64-overflow": 2**200,
    "int-past-str-limit": 10**5000,
    "negative": -1,
    "nan": float("nan"),
    "dict": {"k": [1]},
    "bool": True,
    "empty": "",
    "object": object(),
}

_traces = itertools.count(1)


@pytest.fixture(scope="module")
def hostile_app():
    app = App()
    yield app
    app.processor.shutdown()


def _run_records(trace_id: int) -> dict[str, SpanData]:
    parts = [{"type": "tool_call", "id": "call_0", "name": "multiply", "arguments": {"a": 1}}]
    return {
        "run": SpanData(trace_id, 1, 0, RUN, 10, 100, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator"}),
        "model": SpanData(trace_id, 2, 1, "chat", 20, 30, {
            "gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        }),
        "tool": SpanData(trace_id, 3, 1, "execute_tool multiply", 40, 50, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "multiply",
            "gen_ai.tool.call.id": "call_0", "gen_ai.tool.call.arguments": '{"a": 1}',
        }),
    }


def _replay(processor, records: dict[str, SpanData]) -> list[str]:
    raised = []
    for kind, span in replay_events(list(records.values())):
        try:
            (processor.on_start if kind == "start" else processor.on_end)(span)
        except BaseException as exc:  # noqa: BLE001 (what the app would have seen)
            raised.append(f"{kind}: {exc!r:.100}")
    return raised


@pytest.mark.parametrize("value_type", VALUES)
@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_an_attribute_of_any_type_raises_nothing_and_every_span_is_still_exported(hostile_app, attribute, value_type):
    processor = hostile_app.processor
    traces = []
    for target in ("run", "model", "tool"):  # on the run span, a model call, a tool execution
        records = _run_records(next(_traces))
        records[target].attributes[attribute] = VALUES[value_type]
        assert _replay(processor, records) == [], target
        traces.append(records["run"].trace_id)
    control = _run_records(next(_traces))  # a clean run after them: the worker is still judging
    assert _replay(processor, control) == []
    assert processor.force_flush()
    exported = [s for s in hostile_app.exporter.get_finished_spans() if s.context.trace_id in {*traces, control["run"].trace_id}]
    assert len(exported) == 3 * 4
    assert "internal_error" not in processor.stats.dropped
    [control_run] = [s for s in exported if s.context.trace_id == control["run"].trace_id and s.name == RUN]
    assert control_run.attributes["reliability.status"] == "PASSED"
    hostile_app.exporter.clear()


def test_a_list_valued_operation_name_through_the_sdk_raises_nothing_and_the_run_span_is_exported():
    app = App()
    with app.tracer.start_as_current_span(RUN, attributes={"gen_ai.operation.name": ["invoke_agent", "x"], "ai.operationId": ["a"]}):
        app.tool()
    app.run()
    assert app.processor.force_flush()
    assert (len(app.run_spans()), enriched(app.run_spans())) == (2, 1)  # the odd one is no run: no verdict invented


# -- force_flush and shutdown ---------------------------------------------------------------


class BlockingExporter(SpanExporter):
    """Exports into memory; an export holding a run span waits until ``release`` is set (only
    the worker forwards run spans, so with ``SimpleSpanProcessor`` the app's thread never waits)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.memory = InMemorySpanExporter()

    def export(self, spans) -> SpanExportResult:
        if any(span.name == RUN for span in spans):
            self.release.wait()
        return self.memory.export(spans)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.release.is_set()


def _flush_on_a_thread(processor, timeout_millis: int) -> list:
    outcome: list = []
    flusher = threading.Thread(target=lambda: outcome.append(processor.force_flush(timeout_millis)), daemon=True)
    flusher.start()
    flusher.join(60)  # a force_flush that ignored its timeout would still be running here
    assert not flusher.is_alive(), "force_flush did not return"
    return outcome


def test_force_flush_is_true_once_every_run_is_judged_forwarded_and_exported():
    app = App()
    for _ in range(5):
        app.run()
    assert app.processor.force_flush(10_000) is True
    assert (len(app.run_spans()), enriched(app.run_spans())) == (5, 5)  # at once, no waiting after it


@pytest.mark.parametrize("wrap", [SimpleSpanProcessor, BatchSpanProcessor], ids=["simple", "batch"])
def test_force_flush_is_false_when_the_wrapped_exporter_blocks_and_true_once_it_is_through(wrap):
    exporter = BlockingExporter()
    app = App(wrap(exporter))
    app.run()
    assert _flush_on_a_thread(app.processor, 300) == [False]
    exporter.release.set()
    assert _flush_on_a_thread(app.processor, 30_000) == [True]
    spans = [s for s in exporter.memory.get_finished_spans() if s.name == RUN]
    assert enriched(spans) == 1
    app.processor.shutdown()


class Recording(SpanProcessor):
    """A wrapped processor that keeps what it is handed, shut down or not."""

    def __init__(self) -> None:
        self.ended: list = []
        self.shut = False

    def on_end(self, span) -> None:
        self.ended.append((span.name, self.shut))

    def shutdown(self) -> None:
        self.shut = True


def test_after_shutdown_spans_go_straight_to_the_wrapped_processor_and_nothing_stays_queued():
    recording = Recording()
    app = App(recording)
    app.run()
    app.processor.shutdown()
    assert recording.ended == [("execute_tool multiply", False), (RUN, False)]
    app.run()  # after shutdown: forwarded as it is, to a processor that is shut down too
    assert recording.ended[2:] == [("execute_tool multiply", True), (RUN, True)]
    assert app.processor.drain(0) is True  # nothing left queued
    app.processor.shutdown()  # twice is harmless


def test_spans_that_never_end_are_bounded_and_counted():
    app = App(max_open_spans=10)
    for _ in range(50):
        app.tracer.start_span("never ends")
    assert app.processor.stats.open_spans_forgotten == 40
    assert app.metric("agent.reliability.open_spans.forgotten") == {(): 40}
    app.run()
    assert app.processor.force_flush() and enriched(app.run_spans()) == 1


# -- re-judgement replaces a trace's verdicts as a set ------------------------------------------


@pytest.fixture(params=["sqlite", "jsonl", "postgres"])
def store_spec(request, tmp_path):
    if request.param == "postgres":
        return fresh_schema_url(request.getfixturevalue("postgres_server"))
    return str(tmp_path / ("results.db" if request.param == "sqlite" else "results.jsonl"))


def _stored_agents(spec: str) -> list[str]:
    store = open_store(spec)
    try:
        return sorted(r.agent for r in store.query(limit=None))
    finally:
        store.close()


def test_through_the_processor_a_member_judged_before_its_run_loses_its_verdict_when_the_run_ends(store_spec):
    """The processor is added while the router's run is already open (it never saw it start),
    so the researcher's run looks top-level when it ends; the router's end re-judges the trace."""
    app = App(store=store_spec)
    provider = TracerProvider()  # the app's provider, before the processor is added
    tracer = provider.get_tracer("app")
    seen = []
    app.processor._judging.pipeline.sinks.sinks.append(_Seen(seen))
    with tracer.start_as_current_span("invoke_agent router", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "router",
    }):
        provider.add_span_processor(app.processor)
        with tracer.start_as_current_span("invoke_agent researcher", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher",
        }):
            with tracer.start_as_current_span("execute_tool lookup", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
            }):
                pass
        assert app.processor.force_flush()
        assert _stored_agents(store_spec) == ["researcher"]  # judged on what was known then
        with tracer.start_as_current_span("execute_tool summarise", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "summarise",
        }):
            pass
    assert app.processor.force_flush()
    app.processor.shutdown()
    assert seen == ["researcher", "router"]
    store = open_store(store_spec)
    [result] = store.query(limit=None)
    store.close()
    assert result.agent == "router"
    assert sorted(a.tool for a in result.verdict.chain) == ["lookup", "summarise"]


class _Seen:
    name = "seen"

    def __init__(self, seen: list) -> None:
        self.seen = seen

    def publish(self, judgements) -> None:
        self.seen.extend(j.result.agent for j in judgements)

    def close(self) -> None:
        pass


def _delegation(trace_id: int) -> list[SpanData]:
    """A router run that hands a question to a researcher run through a tool call."""
    def model(span_id, parent, call_id, tool, start):
        parts = [{"type": "tool_call", "id": call_id, "name": tool, "arguments": {"q": "x"}}]
        return SpanData(trace_id, span_id, parent, "chat", start, start + 10, {
            "gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        })

    def tool(span_id, parent, call_id, name, start, end):
        return SpanData(trace_id, span_id, parent, f"execute_tool {name}", start, end, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": '{"q": "x"}',
        })

    def run(span_id, parent, agent, start, end):
        return SpanData(trace_id, span_id, parent, f"invoke_agent {agent}", start, end, {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
        })

    base = 1_700_000_000_000_000_000
    return [
        run(1, 0, "router", base, base + 1000),
        model(2, 1, "call_r", "ask_researcher", base + 10),
        tool(3, 1, "call_r", "ask_researcher", base + 30, base + 900),
        run(4, 3, "researcher", base + 40, base + 800),
        model(5, 4, "call_l", "lookup", base + 50),
        tool(6, 4, "call_l", "lookup", base + 70, base + 100),
    ]


def _otlp_json(spans: list[SpanData]) -> bytes:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": [
        {
            "traceId": format(s.trace_id, "032x"), "spanId": format(s.span_id, "016x"),
            "parentSpanId": format(s.parent_id, "016x") if s.parent_id else "",
            "name": s.name, "kind": 1, "startTimeUnixNano": str(s.start_ns), "endTimeUnixNano": str(s.end_ns),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in s.attributes.items()],
        }
        for s in spans
    ]}]}]}).encode()


def test_through_the_receiver_a_late_root_span_replaces_the_member_runs_verdict(store_spec):
    spans = _delegation(0xABC)
    service = ReceiverService(ReceiverConfig(store=store_spec, reputation=False, grpc_endpoint=None, http_endpoint=None))
    try:
        service.accept(Body(_otlp_json(spans[1:]), JSON))  # everything but the router's run span
        service.pipeline.drain()
        assert _stored_agents(store_spec) == ["researcher"]
        service.accept(Body(_otlp_json(spans[:1]), JSON))  # the root arrives late
        service.pipeline.drain()
    finally:
        service.stop()
    assert _stored_agents(store_spec) == ["router"]
    assert [r.agent for r in judge_spans(Engine(), spans)] == ["router"]  # as eval has it


class _RaisesOnToolSpans:
    """A wrapped processor whose ``on_start`` and ``on_end`` raise for tool spans (on the app's thread)."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.inner = SimpleSpanProcessor(exporter)

    def on_start(self, span, parent_context=None) -> None:
        if span.name.startswith("execute_tool"):
            raise RuntimeError("wrapped on_start")
        self.inner.on_start(span, parent_context=parent_context)

    def on_end(self, span) -> None:
        if span.name.startswith("execute_tool"):
            raise RuntimeError("wrapped on_end")
        self.inner.on_end(span)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()


def test_a_wrapped_processor_raising_on_the_app_thread_never_reaches_span_end_and_is_counted():
    exporter = InMemorySpanExporter()
    results = []
    app = App(_RaisesOnToolSpans(exporter), on_result=results.append)

    for _ in range(3):
        app.run()  # each tool span's start and end raise inside the wrapped processor: the app sees nothing
    assert app.processor.force_flush()

    # judged with the spans it raised on (a run with no model span: its fail_on refused is not judged)
    assert [(r.verdict.eval_status, [a.tool for a in r.verdict.chain]) for r in results] == [("NOT_EVALUATED", ["multiply"])] * 3
    assert len([s for s in exporter.get_finished_spans() if s.name == RUN]) == 3
    assert app.metric("agent.reliability.sink.failures") == {(("reliability.sink", "span_processor"),): 6}
    app.processor.shutdown()
