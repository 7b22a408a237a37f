"""GenAI event log records join their spans: openai-v2's default mode (message content only
in log records) is judged as its latest mode (content on the spans) is — through ``eval`` on
files, the span processor with a ``LoggerProvider``, and the receiver fed by the real OTLP
exporters, logs before or after their spans.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse

from otel_reliability.adapters import to_event_record
from otel_reliability.cli import main
from otel_reliability.engine import Engine, Pipeline
from otel_reliability.model import LogData, Role, SpanRecord
from otel_reliability.sources import (
    TraceInputError,
    decode_bytes,
    decode_logs_json,
    decode_logs_request,
    read_spans,
    read_telemetry,
)

from .log_replay import emit_logs, remap_ids, run_log_replay
from .receiver_harness import module_receivers, run_replay, wait_until  # noqa: F401 - fixture
from .sdk_replay import replay_events

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
DEFAULT = CORPUS / "openai_v2"
LATEST = CORPUS / "openai_v2_latest"
SCENARIOS = sorted(p.name.removesuffix(".logs.json") for p in DEFAULT.glob("*.logs.json"))
TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"


def chains(results: list[dict]) -> list[tuple]:
    """What must agree between the two modes: each run's verdict and its attempts' tool, agent, outcome."""
    return sorted(
        (r["eval_status"], tuple((a["agent"], a["tool"], a["outcome"]) for a in r["chain"])) for r in results
    )


def eval_results(capsys, *paths: Path) -> list[dict]:
    code = main(["eval", *map(str, paths), "--format", "json"])
    out = capsys.readouterr()
    assert code in (0, 1), out.err
    return json.loads(out.out)["results"]


def latest_chains(capsys, scenario: str) -> list[tuple]:
    return chains(eval_results(capsys, LATEST / f"{scenario}.json"))


# -- decoding ------------------------------------------------------------------------------


def _log_json(**fields) -> dict:
    record = {"traceId": TRACE, "spanId": SPAN, "eventName": "gen_ai.choice", **fields}
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


def test_otlp_json_log_records_read_with_hex_ids_event_name_and_structured_body():
    body = {"kvlistValue": {"values": [{"key": "index", "value": {"intValue": "0"}},
                                       {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}}]}}
    [record] = decode_logs_json(_log_json(body=body, observedTimeUnixNano="17")).logs
    assert (record.trace_id, record.span_id) == (int(TRACE, 16), int(SPAN, 16))
    assert (record.event_name, record.time_ns, record.body) == ("gen_ai.choice", 17, {"index": 0, "tags": ("a",)})


@pytest.mark.parametrize(
    "fields, rejected",
    [
        ({"spanId": "xyz"}, "resourceLogs[0].scopeLogs[0].logRecords[0].spanId: expected 16 hex characters"),
        ({"timeUnixNano": "-1"}, "resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned"),
        ({"body": {"intValue": "ten"}}, "resourceLogs[0].scopeLogs[0].logRecords[0].body.intValue: expected a 64-bit"),
    ],
)
def test_a_bad_log_record_is_rejected_by_place_and_the_others_kept(fields, rejected):
    document = _log_json(**fields)
    document["resourceLogs"][0]["scopeLogs"][0]["logRecords"].append({"traceId": TRACE, "spanId": SPAN})
    decoded = decode_logs_json(document)
    assert len(decoded.logs) == 1 and len(decoded.rejected) == 1
    assert decoded.rejected[0].startswith(rejected), decoded.rejected


def test_protobuf_log_records_read_like_json_ones():
    request = ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add()
    record.trace_id, record.span_id = bytes.fromhex(TRACE), bytes.fromhex(SPAN)
    record.event_name, record.observed_time_unix_nano = "gen_ai.tool.message", 5
    record.body.kvlist_value.values.add(key="id").value.string_value = "call_1"
    uncorrelated = request.resource_logs[0].scope_logs[0].log_records.add()
    uncorrelated.body.string_value = "plain app log"
    first, second = decode_logs_request(request).logs
    assert (first.trace_id, first.span_id, first.event_name, first.time_ns, first.body) == (
        int(TRACE, 16), int(SPAN, 16), "gen_ai.tool.message", 5, {"id": "call_1"}
    )
    assert (second.trace_id, second.span_id, second.body) == (0, 0, "plain app log")


def test_a_collector_file_export_mixing_trace_and_log_requests_gives_both(tmp_path):
    lines = [json.dumps(json.loads(p.read_text())) for p in (DEFAULT / "unknown_tool.json", DEFAULT / "unknown_tool.logs.json")]
    telemetry = decode_bytes(gzip.compress("\n".join(lines).encode()), "export.jsonl.gz")
    alone = read_telemetry(DEFAULT / "unknown_tool.json")
    logs = read_telemetry(DEFAULT / "unknown_tool.logs.json")
    assert (len(telemetry.spans), len(telemetry.logs)) == (len(alone.spans), len(logs.logs)) and logs.logs


def test_a_metrics_export_is_still_refused_by_name():
    with pytest.raises(TraceInputError, match="holds OpenTelemetry metrics, not traces"):
        decode_bytes(b'{"resourceMetrics": []}', "metrics.json")


# -- what a GenAI event means (adapters) -----------------------------------------------------


def _log(name: str, body=None, attributes=None, event_name_field: bool = True) -> LogData:
    attributes = dict(attributes or {})
    if not event_name_field:
        attributes["event.name"] = name
    return LogData(1, 2, name if event_name_field else "", 0, attributes, body)


CHOICE = {"message": {"role": "assistant", "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}]}}


@pytest.mark.parametrize(
    "log, requests, responses",
    [
        pytest.param(_log("gen_ai.choice", CHOICE), [("add", '{"a": 1}', "call_1")], [], id="choice-asks-for-a-call"),
        pytest.param(_log("gen_ai.choice", CHOICE, event_name_field=False), [("add", '{"a": 1}', "call_1")], [],
                     id="name-in-event.name-attribute"),
        pytest.param(_log("gen_ai.tool.message", {"id": "call_1", "content": "error: unknown tool 'x'"}), [],
                     [("call_1", "error: unknown tool 'x'")], id="tool-message-answers-a-call"),
        pytest.param(_log("gen_ai.client.inference.operation.details", None, {
            "gen_ai.output.messages": ({"role": "assistant", "parts": (
                {"type": "tool_call", "id": "call_2", "name": "mul", "arguments": {"a": 2}},)},),
            "gen_ai.input.messages": ({"role": "user", "parts": (
                {"type": "tool_call_response", "id": "call_0", "response": {"result": 3}},)},),
        }), [("mul", {"a": 2}, "call_2")], [("call_0", '{"result": 3}')], id="operation-details-structured"),
    ],
)
def test_genai_events_read_as_the_requests_and_responses_span_attributes_give(log, requests, responses):
    record = to_event_record(log)
    assert [(r.name, r.arguments, r.call_id) for r in record.requests] == requests
    assert [(r.call_id, r.content) for r in record.responses] == responses


@pytest.mark.parametrize(
    "log",
    [
        pytest.param(_log("gen_ai.user.message", {"content": "hi"}), id="user-message"),
        pytest.param(_log("app.checkout", CHOICE), id="not-a-genai-event"),
        pytest.param(LogData(1, 0, "gen_ai.choice", 0, {}, CHOICE), id="not-under-a-span"),
        pytest.param(_log("gen_ai.choice", {"message": {"tool_calls": "not a list"}}), id="odd-shape"),
    ],
)
def test_records_that_add_nothing_to_a_span_are_not_kept(log):
    assert to_event_record(log) is None


def test_history_replayed_in_log_records_is_neither_a_request_nor_a_new_answer():
    def at(time_ns: int, name: str, body: dict) -> LogData:
        return LogData(1, 2, name, time_ns, {}, body)

    replayed_call = {"tool_calls": [{"id": "call_0", "function": {"name": "add", "arguments": "{}"}}]}
    events = [to_event_record(log) for log in (
        at(1, "gen_ai.assistant.message", replayed_call),
        at(2, "gen_ai.tool.message", {"id": "call_0", "content": "3"}),  # answered in an earlier model call
        at(3, "gen_ai.assistant.message", {"tool_calls": CHOICE["message"]["tool_calls"]}),
        at(4, "gen_ai.tool.message", {"id": "call_1", "content": "4"}),  # the answer this model call adds
        at(5, "gen_ai.choice", {"message": {"content": "done"}}),
    )]
    assert events[-1] is None and all(event.requests == () for event in events[:-1])
    pipeline = Pipeline(Engine())
    pipeline.add([SpanRecord(1, 2, 0, "chat", 0, 1, role=Role.MODEL)], now=0.0)
    pipeline.add_events(list(reversed(events[:-1])), now=0.0)  # any arrival order: the records' times tell
    [joined] = pipeline.buffer.joined_records(1)
    assert ([r.call_id for r in joined.requests], [r.call_id for r in joined.responses]) == ([], ["call_1"])


def test_operation_details_keep_the_answers_after_the_last_assistant_message():
    messages = ({"role": "user", "parts": ()},
                {"role": "assistant", "parts": ({"type": "tool_call", "id": "call_0", "name": "add"},)},
                {"role": "user", "parts": ({"type": "tool_call_response", "id": "call_0", "response": 3},)},
                {"role": "assistant", "parts": ({"type": "tool_call", "id": "call_1", "name": "add"},)},
                {"role": "user", "parts": ({"type": "tool_call_response", "id": "call_1", "response": 4},)})
    record = to_event_record(_log("gen_ai.client.inference.operation.details", None, {"gen_ai.input.messages": messages}))
    assert [(r.call_id, r.content) for r in record.responses] == [("call_1", "4")]


# -- the engine joins records to their spans ---------------------------------------------------


def _records(path: Path):
    from otel_reliability.adapters import to_record

    telemetry = read_telemetry(path)
    return [to_record(s) for s in telemetry.spans], [e for e in map(to_event_record, telemetry.logs) if e]


def test_a_trace_waits_for_its_logs_and_a_late_record_rejudges_it():
    spans, events = _records(DEFAULT / "unknown_tool.json")[0], _records(DEFAULT / "unknown_tool.logs.json")[1]
    pipeline = Pipeline(Engine(), decision_wait=2.0)
    pipeline.add(spans, now=0.0)
    pipeline.add_events(events[:1], now=1.5)  # the request arrives while the trace is quiet: it waits
    judged, _ = pipeline.tick(now=2.5)
    assert judged == []
    [first], _ = pipeline.tick(now=3.6)
    assert [(a.tool, a.outcome) for a in first.judgements[0].result.verdict.chain] == [("get_stock_price", "pending")]
    pipeline.add_events(events, now=4.0)  # the answer arrives after the verdict (and the request again)
    [again], _ = pipeline.tick(now=6.1)
    [judgement] = again.judgements
    assert judgement.late and [(a.tool, a.outcome) for a in judgement.result.verdict.chain] == [
        ("get_stock_price", "refused")
    ]
    assert pipeline.buffered_events == len(events)  # the repeated request was recognised, not kept twice


def test_a_record_repeating_what_its_span_carries_adds_nothing():
    span = SpanRecord(1, 2, 0, "chat", 0, 1, role=Role.MODEL)
    pipeline = Pipeline(Engine())
    [event] = [to_event_record(_log("gen_ai.choice", CHOICE))]
    pipeline.add([span], now=0.0)
    pipeline.add_events([event, event], now=0.0)
    pipeline.add_events([to_event_record(_log("gen_ai.choice", CHOICE))], now=0.0)
    [joined] = pipeline.buffer.joined_records(1)
    assert [r.call_id for r in joined.requests] == ["call_1"] and span.requests == ()


# -- eval ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_eval_with_the_log_records_gives_the_latest_mode_chains(capsys, scenario):
    with_logs = eval_results(capsys, DEFAULT / f"{scenario}.json", DEFAULT / f"{scenario}.logs.json")
    assert chains(with_logs) == latest_chains(capsys, scenario)


def test_log_records_read_on_every_core_are_the_ones_read_serially():
    from otel_reliability.sources.parallel import read_telemetry_records

    files = sorted(DEFAULT.glob("*.json"))
    files = [f for f in files if not f.name.endswith(".truth.json")]
    serial = read_telemetry_records(files, workers=1)
    assert read_telemetry_records(files, workers=2) == serial
    assert any(event.assistant_turn for event in serial[1]) and any(event.requests for event in serial[1])


def test_eval_of_a_directory_pairs_each_trace_file_with_its_logs(capsys, tmp_path):
    for scenario in ("unknown_tool", "blocked", "single_tool"):
        for suffix in (".json", ".logs.json"):
            shutil.copy(DEFAULT / f"{scenario}{suffix}", tmp_path / f"{scenario}{suffix}")
    code = main(["eval", str(tmp_path), "--format", "json"])
    results = json.loads(capsys.readouterr().out)["results"]
    expected = sorted(c for s in ("unknown_tool", "blocked", "single_tool") for c in latest_chains(capsys, s))
    assert (code, chains(results)) == (1, expected)


# -- the span processor with a LoggerProvider ----------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_span_processor_judges_default_mode_runs_from_their_log_records(capsys, scenario):
    from opentelemetry.sdk._logs import LoggerProvider

    from otel_reliability import ReliabilitySpanProcessor
    from otel_reliability.results import results_document

    seen = []
    processor = ReliabilitySpanProcessor(store=None, on_result=seen.append)
    logs = LoggerProvider()
    logs.add_log_record_processor(processor.log_record_processor())
    emit_logs(logs, [DEFAULT / f"{scenario}.logs.json"])  # emitted while the model calls ran: before the runs end
    # each span started and ended in the order they happened, as the SDK calls a processor
    for kind, span in replay_events(list(read_spans(DEFAULT / f"{scenario}.json"))):
        (processor.on_start if kind == "start" else processor.on_end)(span)
    processor.shutdown()
    assert chains(results_document(seen)["results"]) == latest_chains(capsys, scenario)


def test_the_app_s_other_log_records_do_not_take_the_span_processor_s_queue():
    from opentelemetry._logs import LogRecord
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk.trace import TracerProvider

    from otel_reliability import ReliabilitySpanProcessor

    processor = ReliabilitySpanProcessor(store=None, max_queue=10)
    logs = LoggerProvider()
    logs.add_log_record_processor(processor.log_record_processor())
    tracer = TracerProvider().get_tracer("app")
    with tracer.start_as_current_span("checkout"):
        for i in range(100):
            logs.get_logger("app").emit(LogRecord(body=f"step {i}", attributes={"event.name": "app.step"}))
    processor.shutdown()
    assert processor.stats.dropped == {}


# -- the receiver, fed by the real Python OTLP exporters --------------------------------------


@pytest.fixture(scope="module")
def receiver(module_receivers):  # noqa: F811 - the imported fixture
    return module_receivers.start("logs", decision_wait=0.5)


def _url(receiver, kind: str, signal: str) -> str:
    return receiver.grpc_endpoint if kind.startswith("grpc") else f"{receiver.http_url}/v1/{signal}"


@pytest.mark.parametrize("kind", ["grpc", "http", "http+gzip"])
@pytest.mark.parametrize("logs_first", [True, False], ids=["logs-before-spans", "logs-after-spans"])
def test_the_receiver_judges_default_mode_traces_with_their_logs_as_the_latest_mode(
    capsys, receiver, tmp_path, kind, logs_first
):
    send_expecting_latest_chains(capsys, receiver, tmp_path, kind, logs_first)


def test_receiver_workers_get_the_log_records_of_their_own_traces(capsys, module_receivers, tmp_path):  # noqa: F811
    sharded = module_receivers.start("logs-workers", decision_wait=0.5, config={"workers": 2})
    send_expecting_latest_chains(capsys, sharded, tmp_path, "grpc", logs_first=False)


def send_expecting_latest_chains(capsys, receiver, tmp_path: Path, kind: str, logs_first: bool) -> None:
    """Send a fresh copy of the default-mode scenarios, traces and logs through the real
    exporters; the receiver must store the latest mode's chains and drop no log record."""
    files = remap_ids(
        [DEFAULT / f"{s}{suffix}" for s in SCENARIOS for suffix in (".json", ".logs.json")],
        tmp_path, salt=f"{kind}/{logs_first}",
    )
    traces = [f for f in files if not f.name.endswith(".logs.json")]
    logs = [f for f in files if f.name.endswith(".logs.json")]
    sends = [lambda: run_log_replay(kind, _url(receiver, kind, "logs"), logs),
             lambda: run_replay(kind, _url(receiver, kind, "traces"), traces)]
    for send in sends if logs_first else reversed(sends):
        summary = send()
        assert summary["exported"] == summary["replayed"] > 0, summary

    expected = {s: latest_chains(capsys, s) for s in SCENARIOS}
    trace_ids = {s: {span.trace_id for span in read_telemetry(tmp_path / f"{s}.json").spans} for s in SCENARIOS}

    def stored() -> dict:
        return {s: chains(receiver.results_for({f"{t:032x}" for t in ids})) for s, ids in trace_ids.items()}

    try:
        wait_until(lambda: stored() == expected, 20, "the latest mode's chains")
    except AssertionError:
        pass  # the comparison below shows the difference
    assert stored() == expected
    assert receiver.metric("agent_reliability_log_records_dropped_total") == 0


def test_the_receiver_answers_a_bad_log_record_with_partial_success_and_keeps_the_others(receiver):
    document = _log_json(spanId="xyz")
    document["resourceLogs"][0]["scopeLogs"][0]["logRecords"].append({"traceId": TRACE, "spanId": SPAN})
    reply = receiver.http("POST", "/v1/logs", json.dumps(document).encode(), {"Content-Type": "application/json"})
    assert reply.status == 200 and reply.json()["partialSuccess"]["rejectedLogRecords"] == "1", reply.body
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().span_id = b"short"
    reply = receiver.http("POST", "/v1/logs", request.SerializeToString(), {"Content-Type": "application/x-protobuf"})
    response = ExportLogsServiceResponse.FromString(reply.body)
    assert (reply.status, response.partial_success.rejected_log_records) == (200, 1)
    assert "spanId: expected 8 bytes" in response.partial_success.error_message
    reply = receiver.http("POST", "/v1/logs", b"\x00garbage", {"Content-Type": "application/x-protobuf"})
    assert reply.status == 400


def test_log_export_needs_the_bearer_token_as_trace_export_does(module_receivers):  # noqa: F811
    import grpc

    secured = module_receivers.start("logs-token", token="s3cret")
    body = json.dumps(_log_json()).encode()
    assert secured.http("POST", "/v1/logs", body, {"Content-Type": "application/json"}, authorize=False).status == 401
    assert secured.http("POST", "/v1/logs", body, {"Content-Type": "application/json"}).status == 200
    call = secured.channel().unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")
    with pytest.raises(grpc.RpcError) as refused:
        call(ExportLogsServiceRequest().SerializeToString(), timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert call(ExportLogsServiceRequest().SerializeToString(), metadata=[("authorization", "Bearer s3cret")],
                timeout=10) == b""


def _otlp_value(value) -> dict:
    """A plain value as an OTLP/JSON AnyValue."""
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_otlp_value(v) for v in value]}}
    return {"kvlistValue": {"values": [{"key": k, "value": _otlp_value(v)} for k, v in value.items()]}}


def test_a_full_receiver_refuses_log_records_with_a_retry_delay(module_receivers):  # noqa: F811
    import grpc

    full = module_receivers.start("logs-full", config={"max_buffered_spans": 1, "retry_after": 7})
    records = [
        {"traceId": TRACE, "spanId": SPAN, "eventName": "gen_ai.choice", "body": _otlp_value(
            {"message": {"tool_calls": [{"id": f"call_{i}", "function": {"name": "add"}}]}})}
        for i in range(2)
    ]
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    reply = full.http("POST", "/v1/logs", json.dumps(document).encode(), {"Content-Type": "application/json"})
    assert (reply.status, reply.headers.get("retry-after")) == (503, "7"), reply.body
    request = ExportLogsServiceRequest()
    for i in range(2):
        record = request.resource_logs.add().scope_logs.add().log_records.add()
        record.trace_id, record.span_id, record.event_name = bytes.fromhex(TRACE), bytes.fromhex(SPAN), "gen_ai.tool.message"
        record.body.kvlist_value.values.add(key="id").value.string_value = f"call_{i}"
    call = full.channel().unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")
    with pytest.raises(grpc.RpcError) as refused:
        call(request.SerializeToString(), timeout=10)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert full.metric("agent_reliability_log_records_dropped_total", reason="overloaded") == 4
