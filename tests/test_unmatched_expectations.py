"""An expectation whose ``match`` selects no run is counted and named once by both front doors
(issue 23 point 2): ``agent.reliability.expectations.unmatched`` by expectation (1 until it
judges a run, then 0), and one log line each when the processor or the receiver stops.
"""

from __future__ import annotations

import json
import logging

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from .corpus import CORPUS
from .receiver_harness import start_receiver, wait_until
from .test_processor import Harness

NO_RUN = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
    {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "GET /orders",
     "startTimeUnixNano": "1000", "endTimeUnixNano": "9000", "kind": 2},
]}]}]}

EXPECTATIONS = [
    {"name": "calc", "match": {"agent": "calculator"}, "expected_tool_calls": ["multiply"]},
    {"name": "typo", "match": {"agent": "calcualtor"}, "expected_tool_calls": ["multiply"]},
]


def unmatched_gauge(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    return {
        point.attributes["reliability.expectation"]: point.value
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "agent.reliability.expectations.unmatched"
        for point in metric.data.data_points
    }


def test_the_span_processor_counts_and_names_an_unmatched_expectation_once(tmp_path, caplog):
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps({"expectations": EXPECTATIONS}))
    reader = InMemoryMetricReader()
    # a plain string is one file, not a sequence of one-letter file names
    harness = Harness(expectations=str(path), meter_provider=MeterProvider(metric_readers=[reader]))
    assert unmatched_gauge(reader) == {"calc": 1, "typo": 1}
    harness.agent_run("calculator")
    harness.settle()
    assert [r.expectation for r in harness.results] == ["calc"]
    assert unmatched_gauge(reader) == {"calc": 0, "typo": 1}
    with caplog.at_level(logging.WARNING):
        harness.processor.shutdown()
        harness.processor.shutdown()
    named = [r.getMessage() for r in caplog.records if "judged no run" in r.getMessage()]
    assert named == [
        "otel-reliability span processor: expectation 'typo' judged no run since it was loaded: check its match "
        "(the runs it was meant for, if any, were judged by the default expectation)"
    ]


def test_the_receiver_counts_an_unmatched_expectation_and_names_it_at_shutdown(tmp_path):
    path = tmp_path / "expectations.yaml"
    path.write_text(json.dumps({"expectations": [
        {"name": "stock", "match": {"agent": "Stock Agent"}},
        {"name": "typo", "match": {"agent": "Stock Agnet"}},
    ]}))
    receiver = start_receiver(tmp_path, extra_args=["--expectations", str(path)])
    try:
        reply = receiver.post_traces((CORPUS / "agno" / "agent_tool_error.json").read_bytes(),
                                     content_type="application/json")
        assert reply.status == 200, reply.body
        wait_until(lambda: receiver.results()["summary"]["runs"] == 1, 15, "the verdict")
        wait_until(lambda: receiver.metric("agent_reliability_expectations_unmatched", reliability_expectation="stock") == 0,
                   15, "the matched expectation's gauge to fall to 0")
        assert receiver.metric("agent_reliability_expectations_unmatched", reliability_expectation="typo") == 1
        # a trace with no run span yet: kept for the next start, and the shutdown log says so (issue 23 point 6)
        reply = receiver.post_traces(json.dumps(NO_RUN).encode(), content_type="application/json")
        assert reply.status == 200, reply.body
    finally:
        code = receiver.stop()
    log = receiver.log_text()
    assert code == 0, log
    assert log.count("expectation 'typo' judged no run since it was loaded") == 1, log
    assert "'stock' judged no run" not in log
    assert f"1 trace(s) with no run span yet stay in the intake log ({receiver.store}.intake)" in log, log
