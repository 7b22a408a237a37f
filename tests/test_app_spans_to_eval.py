"""From any Python app's spans to ``eval`` (issue 23 point 4): a real SDK run of GenAI-shaped
agent runs, exported at once through ``ConsoleSpanExporter`` into a file, through
``OTLPJsonFileSpanExporter`` and over OTLP/gRPC to a real receiver. ``eval`` of either file
gives the receiver's verdicts for the same spans; ``inspect`` and ``compare`` read the file.
"""

from __future__ import annotations

import json
import math

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from otel_reliability import OTLPJsonFileSpanExporter
from otel_reliability.cli import main

from .receiver_harness import start_receiver

EXPECTATIONS = {"expectations": [
    {"name": "calc", "match": {"agent": "calculator"}, "expected_tool_calls": ["multiply"],
     "expected_tool_call_arguments": {"multiply": {"a": 10, "b": 5}}},
]}
# (agent, [(tool, arguments, error)]): a pass, wrong arguments, an errored call, a missing tool
RUNS = [
    ("calculator", [("multiply", {"a": 10, "b": 5}, None)]),
    ("calculator", [("multiply", {"a": 3, "b": 5}, None)]),
    ("calculator", [("multiply", {"a": 10, "b": 5}, "division by zero")]),
    ("calculator", [("add", {"a": 10, "b": 5}, None)]),
    ("helper", [("lookup", {"q": "otel", "tags": ["a", "b"], "ratio": 0.5, "ok": True}, None)]),
]
VERDICT_KEYS = (
    "trace_id", "run_span_id", "agent", "expectation", "eval_status", "passed_tool_calls", "failed_tool_calls",
    "additional_tool_calls", "missing_tool_calls", "failed_argument_checks", "passed_argument_checks",
    "order_violations", "policy_violations", "errored_tool_calls", "refused_tool_calls", "pending_tool_calls",
    "score", "chain", "explanation", "trajectory",
)


def agent_run(tracer, agent: str, calls) -> None:
    """One agent run in the OTel GenAI conventions: a model call requesting the calls, then their executions."""
    with tracer.start_as_current_span(
        f"invoke_agent {agent}", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    ):
        parts = [{"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": args}
                 for i, (name, args, _) in enumerate(calls)]
        with tracer.start_as_current_span("chat scripted", attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
        }):
            pass
        for i, (name, args, error) in enumerate(calls):
            with tracer.start_as_current_span(f"execute_tool {name}", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"call_{i}", "gen_ai.tool.call.arguments": json.dumps(args),
            }) as span:
                if error:
                    span.set_status(Status(StatusCode.ERROR, error))


def verdicts(results: list[dict]) -> list[dict]:
    return sorted(({key: r[key] for key in VERDICT_KEYS} for r in results), key=lambda r: (r["trace_id"], r["run_span_id"]))


def eval_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["eval", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_console_and_otlp_json_file_exports_give_the_receivers_verdicts(tmp_path, capsys):
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps(EXPECTATIONS))
    receiver = start_receiver(tmp_path / "receiver", extra_args=["--expectations", str(expectations)])
    console_file, otlp_file = tmp_path / "console.json", tmp_path / "traces.jsonl"
    try:
        provider = TracerProvider(resource=Resource.create({"service.name": "calculator-app"}))
        with open(console_file, "w", encoding="utf-8") as out:
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
            provider.add_span_processor(BatchSpanProcessor(OTLPJsonFileSpanExporter(otlp_file)))
            provider.add_span_processor(BatchSpanProcessor(
                OTLPSpanExporter(endpoint=f"127.0.0.1:{receiver.grpc_port}", insecure=True)))
            tracer = provider.get_tracer("app")
            for agent, calls in RUNS:
                agent_run(tracer, agent, calls)
            provider.shutdown()
        ids = set()
        for line in otlp_file.read_text().splitlines():
            for rs in json.loads(line)["resourceSpans"]:
                ids |= {s["traceId"] for ss in rs["scopeSpans"] for s in ss["spans"]}
        served = receiver.wait_results(ids, len(RUNS))
    finally:
        assert receiver.stop() == 0, receiver.log_text()

    statuses = sorted(r["eval_status"] for r in served)
    assert statuses == ["FAILED", "FAILED", "FAILED", "PASSED", "PASSED"]
    for path in (console_file, otlp_file):
        code, document = eval_json(capsys, str(path), "--expectations", str(expectations))
        assert code == 1, path  # three runs fail
        assert verdicts(document["results"]) == verdicts(served), path
        assert {r["source"] for r in document["results"]} == {str(path)}
    # the arguments travel intact: arrays, doubles and booleans as the app set them
    [helper] = [r for r in document["results"] if r["agent"] == "helper"]
    assert helper["chain"][0]["arguments"] == {"q": "otel", "tags": ["a", "b"], "ratio": 0.5, "ok": True}

    assert main(["inspect", str(otlp_file)]) == 0
    assert "invoke_agent calculator" in capsys.readouterr().out
    sides = []
    for path in (console_file, otlp_file):
        sides.append(str(path) + ".verdicts.json")
        main(["eval", str(path), "--expectations", str(expectations), "--format", "json", "--output", sides[-1]])
    capsys.readouterr()
    assert main(["compare", *sides, "--format", "json"]) == 0  # the same verdicts from either file
    assert json.loads(capsys.readouterr().out)["overall"]["baseline"]["runs"] == len(RUNS)


def test_every_span_attribute_type_survives_the_file_exporter(tmp_path, capsys):
    path = tmp_path / "types.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileSpanExporter(path)))
    tracer = provider.get_tracer("types")
    values = {"s": "text é", "b": False, "i": 2**62, "f": 1.25, "nan": float("nan"), "strings": ("x", "y"),
              "ints": (1, 2), "lone": "\ud800"}
    with tracer.start_as_current_span("plain", attributes=values) as span:
        span.add_event("happened", {"n": 1})
    provider.shutdown()
    from otel_reliability.sources import read_spans

    [read] = read_spans(path)
    assert read.name == "plain" and read.parent_id == 0
    expected = dict(values)  # a lone surrogate too: written escaped, the line stays valid UTF-8
    got = dict(read.attributes)
    assert math.isnan(got.pop("nan")) and math.isnan(expected.pop("nan"))
    assert got == expected
    assert [(e.name, dict(e.attributes)) for e in read.events] == [("happened", {"n": 1})]
