"""``ReliabilitySpanProcessor.reload_expectations`` (SPEC §10's reload rule, in the app): a
good set judges the runs that end after it, a bad file raises its error naming the file and
leaves the set in force, and each reload is counted by outcome."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.expectations import ExpectationError
from otel_reliability.model import SpanData

from .sdk_replay import replay_events


def _run(trace_id: int) -> list[SpanData]:
    """calculator asks for multiply and runs it."""
    parts = [{"type": "tool_call", "id": "call_0", "name": "multiply", "arguments": {"a": 1}}]
    return [
        SpanData(trace_id, 1, 0, "invoke_agent calculator", 10, 100,
                 {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "calculator"}),
        SpanData(trace_id, 2, 1, "chat", 20, 30,
                 {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}])}),
        SpanData(trace_id, 3, 1, "execute_tool multiply", 40, 50, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "multiply",
            "gen_ai.tool.call.id": "call_0", "gen_ai.tool.call.arguments": '{"a": 1}',
        }),
    ]


def _rules(path, name: str, tool: str) -> None:
    path.write_text(f"expectations:\n  - name: {name}\n    match: {{agent: calculator}}\n    expected_tool_calls: [{tool}]\n",
                    encoding="utf-8")


def _reloads(reader: InMemoryMetricReader) -> dict[str, int]:
    counted: dict[str, int] = {}
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "agent.reliability.expectations.reloads":
                    for point in metric.data.data_points:
                        counted[point.attributes["reliability.outcome"]] = point.value
    return counted


# A file the reload refuses: its content, and the start of the error (after the file's name).
BAD_FILES = {
    "a field of the wrong type": (b"expectations:\n  - name: broken\n    expected_tool_calls: 7\n", "expectations[0].expected_tool_calls: expected a list"),
    "a byte that is not UTF-8": (b"expectations:\n  - name: caf\xe9\n", "not UTF-8: byte 0xe9 at offset 27 (line 2)"),
}


def test_reload_expectations_judges_later_runs_with_the_new_set_and_refuses_a_bad_file(tmp_path):
    rules = tmp_path / "expectations.yaml"
    _rules(rules, "multiplies", "multiply")
    reader = InMemoryMetricReader()
    results = []
    processor = ReliabilitySpanProcessor(
        store=None, expectations=[rules], on_result=results.append, meter_provider=MeterProvider([reader])
    )

    def judged(trace_id: int):
        for kind, span in replay_events(_run(trace_id)):
            (processor.on_start if kind == "start" else processor.on_end)(span)
        assert processor.force_flush()
        return results[-1]

    try:
        assert (judged(1).expectation, judged(1).verdict.eval_status) == ("multiplies", "PASSED")

        _rules(rules, "adds", "add")
        reloaded = processor.reload_expectations([rules])
        after = judged(2)
        assert (after.expectation, after.verdict.eval_status) == ("adds", "FAILED")
        assert reloaded.digests == (("adds", after.evaluator.expectation_digest),)

        for refused, (content, error) in enumerate(BAD_FILES.values(), start=1):
            rules.write_bytes(content)
            with pytest.raises(ExpectationError) as raised:
                processor.reload_expectations([rules])
            assert str(raised.value).startswith(f"{rules}: {error}"), raised.value
            kept = judged(2 + refused)
            assert (kept.expectation, kept.evaluator.expectation_digest) == ("adds", after.evaluator.expectation_digest)
            assert _reloads(reader) == {"reloaded": 1, "refused": refused}
    finally:
        processor.shutdown()
