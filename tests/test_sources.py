"""Input readers: SDK spans, OTLP protobuf, OTLP/JSON (both id encodings) and trace files."""

from __future__ import annotations

import base64
import copy
import gzip
import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1 import trace_pb2

from otel_reliability.model import STATUS_ERROR, STATUS_OK, STATUS_UNSET, EventData, SpanData
from otel_reliability.sources import (
    Decoded,
    TraceInputError,
    decode_bytes,
    decode_file,
    decode_json,
    decode_protobuf,
    decode_request,
    from_readable_span,
    read_spans,
    span_from_proto,
    spans_from_json,
    spans_from_request,
)

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
CORPUS_FILES = [
    ("agno/agent_tool_error.json", 4),
    ("agno/team_nested.json", 12),
    ("langgraph/single_tool.json", 15),
    ("openai_agents/error_retry.json", 11),
    ("pydantic_ai/error_fatal.json", 3),
    ("pydantic_ai/single_tool.json", 4),
    ("strands/single_tool.json", 6),
    ("strands_latest_semconv/single_tool.json", 6),
]
CORPUS_NAMES = [name for name, _ in CORPUS_FILES]


def load(name: str) -> dict:
    return json.loads((CORPUS / name).read_text())


def raw_spans(doc: dict) -> list[dict]:
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def to_request(doc: dict) -> ExportTraceServiceRequest:
    """The protobuf request an OTLP/JSON (hex id) document stands for."""
    doc = copy.deepcopy(doc)
    for s in raw_spans(doc):
        for key in ("traceId", "spanId", "parentSpanId"):
            if s.get(key):
                s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    return json_format.ParseDict(doc, ExportTraceServiceRequest())


def expected_value(value: dict):
    """Independent reading of one canonical OTLP/JSON AnyValue."""
    (kind, x), = value.items()
    return {
        "stringValue": lambda: x,
        "boolValue": lambda: x,
        "intValue": lambda: int(x),
        "doubleValue": lambda: float(x),
        "bytesValue": lambda: base64.b64decode(x),
        "arrayValue": lambda: tuple(expected_value(v) for v in x.get("values", [])),
        "kvlistValue": lambda: {kv["key"]: expected_value(kv["value"]) for kv in x.get("values", [])},
    }[kind]()


def expected_span(s: dict) -> SpanData:
    return SpanData(
        trace_id=int(s["traceId"], 16),
        span_id=int(s["spanId"], 16),
        parent_id=int(s["parentSpanId"], 16) if s.get("parentSpanId") else 0,
        name=s["name"],
        start_ns=int(s["startTimeUnixNano"]),
        end_ns=int(s["endTimeUnixNano"]),
        attributes={a["key"]: expected_value(a["value"]) for a in s.get("attributes", [])},
        events=tuple(
            EventData(
                e["name"],
                {a["key"]: expected_value(a["value"]) for a in e.get("attributes", [])},
                int(e["timeUnixNano"]),
            )
            for e in s.get("events", [])
        ),
        status_code=s.get("status", {}).get("code", 0),
        status_message=s.get("status", {}).get("message", ""),
    )


def by_hex_id(spans: list[SpanData]) -> dict[str, SpanData]:
    return {f"{s.span_id:016x}": s for s in spans}


# ---------------------------------------------------------------- corpus files


@pytest.mark.parametrize(("name", "count"), CORPUS_FILES)
def test_corpus_file_reads_every_span_exactly_as_the_raw_json_says(name, count):
    spans = read_spans(CORPUS / name)
    assert len(spans) == count
    assert spans == [expected_span(s) for s in raw_spans(load(name))]


# (file, span id, field, expected) — facts read off the raw JSON by hand
CORPUS_FACTS = [
    ("pydantic_ai/single_tool.json", "d519ff5931a7ef84", "parent_id", 0),
    ("pydantic_ai/single_tool.json", "d519ff5931a7ef84", "trace_id", 0x03B2CDB329569DF8FE94873154545381),
    ("pydantic_ai/single_tool.json", "b95ecc9d0b3a2316", "parent_id", 0xD519FF5931A7EF84),
    ("pydantic_ai/single_tool.json", "b95ecc9d0b3a2316", "start_ns", 1796009196817668873),
    ("pydantic_ai/single_tool.json", "b95ecc9d0b3a2316", ("gen_ai.usage.input_tokens",), 55),
    ("pydantic_ai/single_tool.json", "b95ecc9d0b3a2316", ("gen_ai.operation.name",), "chat"),
    ("pydantic_ai/error_fatal.json", "1eb66dfdaf3d46d7", "status_code", STATUS_ERROR),
    ("pydantic_ai/error_fatal.json", "1eb66dfdaf3d46d7", "status_message", "ConnectionError: network unreachable"),
    ("pydantic_ai/error_fatal.json", "f6d4f7c5e7375c90", "status_message", ""),
    ("pydantic_ai/error_fatal.json", "f6d4f7c5e7375c90", "events[0].name", "exception"),
    ("pydantic_ai/error_fatal.json", "f6d4f7c5e7375c90", "events[0].time_ns", 1796009197059231644),
    ("pydantic_ai/error_fatal.json", "f6d4f7c5e7375c90", ("events[0]", "exception.message"), "network unreachable"),
    ("pydantic_ai/error_fatal.json", "3b5129f2710d9c15", "status_code", STATUS_UNSET),
    ("agno/team_nested.json", "1000000000000001", "trace_id", 0x0000A6E0000000000000000000000001),
    ("agno/team_nested.json", "1000000000000001", "status_code", STATUS_OK),
    ("agno/team_nested.json", "1000000000000002", "parent_id", 0x1000000000000001),
    ("agno/team_nested.json", "1000000000000007", ("agno.tools",), ("add", "subtract", "multiply", "divide",
                                                                     "exponentiate", "factorial", "is_prime",
                                                                     "square_root")),
    ("agno/agent_tool_error.json", "1000000000000003", "status_message", "price backend unreachable for TSLA"),
    ("openai_agents/error_retry.json", "e080412c7f51829b", ("output.value",), 5.0),
    ("openai_agents/error_retry.json", "9f5ee0930dfee994", "name", "Agent workflow"),
    ("langgraph/single_tool.json", "ce378feb6770e9fe", "parent_id", 0),
    ("strands/single_tool.json", "ba2ad308df33166d", "events[2].name", "gen_ai.choice"),
]


@pytest.mark.parametrize(("name", "span_id", "field", "expected"), CORPUS_FACTS)
def test_corpus_span_has_the_value_in_the_raw_json(name, span_id, field, expected):
    span = by_hex_id(read_spans(CORPUS / name))[span_id]
    if isinstance(field, tuple) and len(field) == 1:
        value = span.attributes[field[0]]
    elif isinstance(field, tuple):
        value = span.events[int(field[0][7:-1])].attributes[field[1]]
    elif field.startswith("events["):
        index, attr = field[7:].split("].")
        value = getattr(span.events[int(index)], attr)
    else:
        value = getattr(span, field)
    assert value == expected
    assert type(value) is type(expected)


# ---------------------------------------------------------------- same spans, every encoding


def encodings(name: str) -> dict[str, object]:
    doc = load(name)
    request = to_request(doc)
    return {
        "otlp_json_hex": doc,
        "otlp_json_text": json.dumps(doc),
        "protobuf_json_base64_enum_names": json_format.MessageToJson(request),
        "protobuf_json_snake_case": json_format.MessageToJson(request, preserving_proto_field_name=True),
        "protobuf_json_integer_enums": json_format.MessageToJson(request, use_integers_for_enums=True),
        "protobuf_message": request,
        "protobuf_bytes": request.SerializeToString(),
    }


ENCODINGS = list(encodings(CORPUS_NAMES[0]))


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_encoding_of_the_same_request_gives_identical_spans(name, encoding):
    reference = read_spans(CORPUS / name)
    payload = encodings(name)[encoding]
    if encoding == "protobuf_message":
        spans = spans_from_request(payload)
    elif encoding == "protobuf_bytes":
        spans = decode_protobuf(payload).spans
    else:
        spans = spans_from_json(payload)
    assert spans == reference


def test_protobuf_json_form_really_uses_base64_ids_and_enum_names():
    text = encodings("pydantic_ai/error_fatal.json")["protobuf_json_base64_enum_names"]
    assert '"traceId": "yQyiCScN8v3bopdX8qlykw=="' in text
    assert "STATUS_CODE_ERROR" in text and "SPAN_KIND_CLIENT" in text


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_binary_protobuf_file_round_trip_gives_the_same_spans(name, tmp_path):
    path = tmp_path / "trace.binpb"
    path.write_bytes(to_request(load(name)).SerializeToString())
    assert read_spans(path) == read_spans(CORPUS / name)


@pytest.mark.parametrize("file_name", ["trace", "trace.dat", "trace.json"])
def test_binary_protobuf_is_detected_by_content_whatever_the_name(file_name, tmp_path):
    path = tmp_path / file_name
    path.write_bytes(to_request(load("strands/single_tool.json")).SerializeToString())
    assert read_spans(path) == read_spans(CORPUS / "strands/single_tool.json")


def test_protobuf_that_happens_to_be_utf8_text_starting_with_a_brace_is_still_read(tmp_path):
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"0123456789abcdef", b"ABCDEFGH", "x" * 89
    data = request.SerializeToString()
    assert data.decode("utf-8").lstrip().startswith("{")
    path = tmp_path / "trace"
    path.write_bytes(data)
    (read,) = read_spans(path)
    assert (read.trace_id, read.span_id, read.name) == (
        int.from_bytes(b"0123456789abcdef", "big"), int.from_bytes(b"ABCDEFGH", "big"), "x" * 89)


def test_protobuf_spans_keep_no_protobuf_objects():
    request = to_request(load("pydantic_ai/error_fatal.json"))
    spans = spans_from_request(request)

    def plain(value):
        if isinstance(value, tuple):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(type(k) is str and plain(v) for k, v in value.items())
        return type(value) in (str, bool, int, float, bytes, type(None))

    for span in spans:
        assert all(type(getattr(span, f)) is int for f in ("trace_id", "span_id", "parent_id", "start_ns", "end_ns"))
        assert type(span.name) is str and type(span.status_message) is str
        assert plain(span.attributes) and type(span.attributes) is dict
        assert all(type(e) is EventData and plain(e.attributes) for e in span.events)


# ---------------------------------------------------------------- several requests per file


def several_requests() -> list[dict]:
    return [load(name) for name in ("pydantic_ai/single_tool.json", "strands/single_tool.json", "agno/team_nested.json")]


def expected_several() -> list[SpanData]:
    return [s for doc in several_requests() for s in spans_from_json(doc)]


def test_json_lines_file_as_the_collector_file_exporter_writes_it(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(doc, separators=(",", ":")) + "\n" for doc in several_requests()))
    assert read_spans(path) == expected_several()


def test_concatenated_pretty_json_objects_read_like_json_lines(tmp_path):
    path = tmp_path / "traces.json"
    path.write_text("\n".join(json.dumps(doc, indent=2) for doc in several_requests()))
    assert read_spans(path) == expected_several()


def test_json_array_of_requests(tmp_path):
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(several_requests()))
    assert read_spans(path) == expected_several()


def test_collector_file_exporter_length_prefixed_protobuf_stream(tmp_path):
    frames = [to_request(doc).SerializeToString() for doc in several_requests()]
    path = tmp_path / "traces.pb"
    path.write_bytes(b"".join(len(f).to_bytes(4, "big") + f for f in frames))
    assert read_spans(path) == expected_several()


@pytest.mark.parametrize("suffix", [".json.gz", ".jsonl.gz", ".pb.gz"])
def test_gzip_compressed_files(suffix, tmp_path):
    docs = several_requests()
    if suffix == ".pb.gz":
        data = b"".join(to_request(doc).SerializeToString() for doc in docs)  # concatenated messages merge
    else:
        data = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
    path = tmp_path / f"traces{suffix}"
    path.write_bytes(gzip.compress(data))
    assert read_spans(path) == expected_several()


def test_utf8_bom_and_surrounding_whitespace_are_accepted(tmp_path):
    path = tmp_path / "trace.json"
    path.write_bytes(b"\xef\xbb\xbf\n  " + json.dumps(load("pydantic_ai/single_tool.json")).encode() + b"\n\n")
    assert read_spans(path) == read_spans(CORPUS / "pydantic_ai/single_tool.json")


def test_request_with_no_spans_is_not_an_error(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text('{"resourceSpans": [{"resource": {}, "scopeSpans": []}]}')
    assert read_spans(path) == []


# ---------------------------------------------------------------- OTLP/JSON variants


def minimal_span(**fields) -> dict:
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "execute_tool multiply",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
    }
    span.update(fields)
    return span


def request_of(*spans) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def one_span(**fields) -> SpanData:
    (span,) = spans_from_json(request_of(minimal_span(**fields)))
    return span


TRACE_INT = 0x0AF7651916CD43DD8448EB211C80319C
SPAN_INT = 0xB7AD6B7169203331

JSON_VARIANTS = [
    ("uppercase_hex_ids", {"traceId": "0AF7651916CD43DD8448EB211C80319C"}, "trace_id", TRACE_INT),
    ("base64_trace_id", {"traceId": base64.b64encode(TRACE_INT.to_bytes(16, "big")).decode()}, "trace_id", TRACE_INT),
    ("unpadded_base64_trace_id", {"traceId": base64.b64encode(TRACE_INT.to_bytes(16, "big")).decode().rstrip("=")},
     "trace_id", TRACE_INT),
    ("urlsafe_base64_span_id", {"spanId": base64.urlsafe_b64encode(b"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8").decode()},
     "span_id", 0xFFFEFDFCFBFAF9F8),
    ("empty_parent_is_root", {"parentSpanId": ""}, "parent_id", 0),
    ("null_parent_is_root", {"parentSpanId": None}, "parent_id", 0),
    ("all_zero_parent_is_root", {"parentSpanId": "0000000000000000"}, "parent_id", 0),
    ("snake_case_keys", {"parent_span_id": "00f067aa0ba902b7"}, "parent_id", 0x00F067AA0BA902B7),
    ("times_as_numbers", {"startTimeUnixNano": 1796009196817668873}, "start_ns", 1796009196817668873),
    ("missing_times_are_zero", {"endTimeUnixNano": None}, "end_ns", 0),
    ("status_code_name", {"status": {"code": "STATUS_CODE_ERROR", "message": "boom"}}, "status_code", 2),
    ("status_code_numeric_string", {"status": {"code": "1"}}, "status_code", 1),
    ("status_message", {"status": {"code": 2, "message": "boom"}}, "status_message", "boom"),
    ("empty_status_is_unset", {"status": {}}, "status_code", 0),
    ("kind_name_accepted", {"kind": "SPAN_KIND_CLIENT"}, "name", "execute_tool multiply"),
    ("unknown_fields_ignored", {"flags": 257, "traceState": "a=b", "links": [], "somethingNew": {"x": 1}},
     "span_id", SPAN_INT),
    ("event", {"events": [{"timeUnixNano": "1500", "name": "exception",
                           "attributes": [{"key": "exception.message", "value": {"stringValue": "boom"}}]}]},
     "events", (EventData("exception", {"exception.message": "boom"}, 1500),)),
]


@pytest.mark.parametrize(("fields", "attr", "expected"), [c[1:] for c in JSON_VARIANTS],
                         ids=[c[0] for c in JSON_VARIANTS])
def test_otlp_json_variant_is_accepted(fields, attr, expected):
    assert getattr(one_span(**fields), attr) == expected


ANY_VALUES = [
    ("string", {"stringValue": "x"}, "x"),
    ("empty_string", {"stringValue": ""}, ""),
    ("bool", {"boolValue": True}, True),
    ("int_as_string", {"intValue": "-9223372036854775808"}, -(1 << 63)),
    ("int_as_number", {"intValue": 42}, 42),
    ("double", {"doubleValue": 0.5}, 0.5),
    ("double_from_int", {"doubleValue": 3}, 3.0),
    ("double_infinity_string", {"doubleValue": "-Infinity"}, float("-inf")),
    ("bytes_base64", {"bytesValue": "AAEC/w=="}, b"\x00\x01\x02\xff"),
    ("array", {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}, {"boolValue": False}]}},
     ("a", 1, False)),
    ("empty_array", {"arrayValue": {}}, ()),
    ("kvlist", {"kvlistValue": {"values": [{"key": "k", "value": {"arrayValue": {"values": [{"doubleValue": 1.5}]}}}]}},
     {"k": (1.5,)}),
    ("empty_value", {}, None),
    ("null_value", None, None),
    ("snake_case_kind", {"int_value": "7"}, 7),
]


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in ANY_VALUES], ids=[c[0] for c in ANY_VALUES])
def test_any_value_becomes_a_plain_python_value(value, expected):
    span = one_span(attributes=[{"key": "a", "value": value}])
    assert span.attributes == {"a": expected}
    assert type(span.attributes["a"]) is type(expected)


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in ANY_VALUES if c[1]], ids=[c[0] for c in ANY_VALUES if c[1]])
def test_any_value_from_protobuf_matches_the_json_reading(value, expected):
    request = json_format.ParseDict(
        {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "CvdlGRbNQ92ESOshHIAxnA==", "spanId": "t61rcWkgMzE=",
             "attributes": [{"key": "a", "value": value}]}]}]}]},
        ExportTraceServiceRequest(),
    )
    (span,) = spans_from_request(request)
    assert span.attributes == {"a": expected}
    assert type(span.attributes["a"]) is type(expected)


# ---------------------------------------------------------------- partial success


def test_decode_json_keeps_good_spans_and_lists_each_rejected_one_with_its_place():
    doc = request_of(minimal_span(), minimal_span(spanId="xyz"), minimal_span(spanId="00f067aa0ba902b7"),
                     minimal_span(traceId=None))
    decoded = decode_json(doc)
    assert isinstance(decoded, Decoded)
    assert [s.span_id for s in decoded.spans] == [SPAN_INT, 0x00F067AA0BA902B7]
    assert decoded.rejected == [
        "resourceSpans[0].scopeSpans[0].spans[1].spanId: expected 16 hex characters or base64 of 8 bytes, got 'xyz'",
        "resourceSpans[0].scopeSpans[0].spans[3].traceId: missing",
    ]
    with pytest.raises(TraceInputError, match=r"spans\[1\]\.spanId: .* \(and 1 more rejected span\)$"):
        spans_from_json(doc)


def test_decode_request_keeps_good_spans_and_lists_each_rejected_one_with_its_place():
    request = to_request(load("pydantic_ai/single_tool.json"))
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[1].span_id = b"\x01\x02\x03"
    spans[2].trace_id = b"\x00" * 16
    spans[3].parent_span_id = b"\x01" * 5
    decoded = decode_request(request)
    assert len(decoded.spans) == 1
    assert decoded.rejected == [
        "resourceSpans[0].scopeSpans[0].spans[1].spanId: expected 8 bytes, got 3 bytes",
        "resourceSpans[0].scopeSpans[0].spans[2].traceId: all-zero trace id is invalid",
        "resourceSpans[0].scopeSpans[0].spans[3].parentSpanId: expected 8 bytes or empty, got 5 bytes",
    ]
    with pytest.raises(TraceInputError, match=r"^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[1\]\.spanId"):
        spans_from_request(request)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("trace_id", b"", "span.traceId: missing"),
        ("span_id", b"", "span.spanId: missing"),
        ("span_id", b"\x00" * 8, "span.spanId: all-zero span id is invalid"),
        ("trace_id", b"\x01" * 8, "span.traceId: expected 16 bytes, got 8 bytes"),
    ],
)
def test_span_from_proto_names_the_bad_field(field, value, message):
    span = trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s")
    setattr(span, field, value)
    with pytest.raises(TraceInputError) as info:
        span_from_proto(span)
    assert str(info.value) == message


def test_span_from_proto_rejects_unknown_status_code():
    span = trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    span.status.code = 7
    with pytest.raises(TraceInputError, match=r"^span\.status\.code: unknown status code 7$"):
        span_from_proto(span)


def test_decode_file_collects_rejections_prefixed_with_the_file_name(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(request_of(minimal_span(), minimal_span(spanId="abc"))))
    decoded = decode_file(path)
    assert len(decoded.spans) == 1
    assert decoded.rejected == [
        f"{path}: resourceSpans[0].scopeSpans[0].spans[1].spanId: expected 16 hex characters or base64 of 8 bytes, got 'abc'"
    ]


# ---------------------------------------------------------------- bad input


def bad_json_span(**fields) -> bytes:
    return json.dumps(request_of(minimal_span(**fields))).encode()


SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"
BAD_INPUTS = [
    ("malformed_json", "t.json", b'{"resourceSpans": [', "t.json: line 1 column 20: invalid JSON"),
    ("malformed_json_later_line", "t.json", b'{\n "resourceSpans": [\n  {,\n ]}', "t.json: line 3 column 4: invalid JSON"),
    ("resource_spans_not_an_array", "t.json", b'{"resourceSpans": {}}',
     "t.json: resourceSpans: expected an array, got an object"),
    ("scope_spans_not_an_array", "t.json", b'{"resourceSpans": [{"scopeSpans": 3}]}',
     "t.json: resourceSpans[0].scopeSpans: expected an array, got the number 3"),
    ("spans_entry_not_an_object", "t.json", json.dumps(request_of("x")).encode(),
     f"t.json: {SPAN}: expected a span object, got a string 'x'"),
    ("top_level_not_an_object", "t.json", b"[1]", "t.json: [0]: expected an OTLP/JSON object with resourceSpans"),
    ("not_a_trace_export", "t.json", b'{"tool_executions": []}',
     "t.json: not an OTLP trace export: expected an object with resourceSpans (OTLP/JSON) or a span as "
     "ConsoleSpanExporter prints it, found 'tool_executions'"),
    ("console_span_bad_id", "t.json",
     b'{"name": "x", "context": {"trace_id": "0xzz", "span_id": "0x1"}, "start_time": null, "end_time": null}',
     "t.json: console span 'x': context.trace_id: not hex: '0xzz'"),
    ("metrics_not_traces", "t.json", b'{"resourceMetrics": []}', "t.json: holds OpenTelemetry metrics, not traces"),
    ("bad_hex_span_id", "trace.json", bad_json_span(spanId="xyz"),
     f"trace.json: {SPAN}.spanId: expected 16 hex characters or base64 of 8 bytes, got 'xyz'"),
    ("hex_with_0x_prefix", "t.json", bad_json_span(traceId="0x" + "1" * 30),
     f"t.json: {SPAN}.traceId: expected 32 hex characters or base64 of 16 bytes, got '0x111"),
    ("non_hex_32_chars", "t.json", bad_json_span(traceId="g" * 32),
     f"t.json: {SPAN}.traceId: expected 32 hex characters or base64 of 16 bytes"),
    ("base64_of_wrong_length", "t.json", bad_json_span(spanId="AAECAw=="),
     f"t.json: {SPAN}.spanId: expected 16 hex characters or base64 of 8 bytes, got 'AAECAw=='"),
    ("id_not_a_string", "t.json", bad_json_span(spanId=12),
     f"t.json: {SPAN}.spanId: expected 16 hex characters or base64 of 8 bytes, got 12"),
    ("missing_trace_id", "t.json", bad_json_span(traceId=None), f"t.json: {SPAN}.traceId: missing"),
    ("missing_span_id", "t.json", bad_json_span(spanId=""), f"t.json: {SPAN}.spanId: missing"),
    ("all_zero_trace_id", "t.json", bad_json_span(traceId="0" * 32),
     f"t.json: {SPAN}.traceId: all-zero trace id is invalid"),
    ("bad_parent_id", "t.json", bad_json_span(parentSpanId="zz"),
     f"t.json: {SPAN}.parentSpanId: expected 16 hex characters or base64 of 8 bytes, got 'zz'"),
    ("name_wrong_type", "t.json", bad_json_span(name=5), f"t.json: {SPAN}.name: expected a string, got the number 5"),
    ("time_not_an_integer", "t.json", bad_json_span(startTimeUnixNano="soon"),
     f"t.json: {SPAN}.startTimeUnixNano: expected an unsigned 64-bit integer"),
    ("negative_time", "t.json", bad_json_span(endTimeUnixNano=-5), f"t.json: {SPAN}.endTimeUnixNano: expected an unsigned"),
    ("time_is_a_bool", "t.json", bad_json_span(endTimeUnixNano=True), f"t.json: {SPAN}.endTimeUnixNano: expected an unsigned"),
    ("unknown_kind_name", "t.json", bad_json_span(kind="SPAN_KIND_BOGUS"),
     f"t.json: {SPAN}.kind: unknown enum value 'SPAN_KIND_BOGUS'"),
    ("unknown_status_name", "t.json", bad_json_span(status={"code": "STATUS_CODE_FAIL"}),
     f"t.json: {SPAN}.status.code: unknown enum value 'STATUS_CODE_FAIL'"),
    ("unknown_status_number", "t.json", bad_json_span(status={"code": 7}),
     f"t.json: {SPAN}.status.code: unknown status code 7"),
    ("status_not_an_object", "t.json", bad_json_span(status="ERROR"),
     f"t.json: {SPAN}.status: expected an object, got a string 'ERROR'"),
    ("attributes_not_an_array", "t.json", bad_json_span(attributes={"a": 1}),
     f"t.json: {SPAN}.attributes: expected an array of {{key, value}}, got an object"),
    ("attribute_key_not_a_string", "t.json", bad_json_span(attributes=[{"key": 1, "value": {}}]),
     f"t.json: {SPAN}.attributes[0].key: expected a string, got the number 1"),
    ("int_value_not_an_integer", "t.json", bad_json_span(attributes=[{"key": "a", "value": {"intValue": "abc"}}]),
     f"t.json: {SPAN}.attributes[0].value.intValue: expected a 64-bit integer (number or decimal string), got a string 'abc'"),
    ("int_value_out_of_range", "t.json", bad_json_span(attributes=[{"key": "a", "value": {"intValue": str(1 << 63)}}]),
     f"t.json: {SPAN}.attributes[0].value.intValue: expected a 64-bit integer"),
    ("bool_value_as_string", "t.json", bad_json_span(attributes=[{"key": "a", "value": {"boolValue": "true"}}]),
     f"t.json: {SPAN}.attributes[0].value.boolValue: expected true or false"),
    ("double_value_garbage", "t.json", bad_json_span(attributes=[{"key": "a", "value": {"doubleValue": "nan"}}]),
     f"t.json: {SPAN}.attributes[0].value.doubleValue: expected a number"),
    ("bytes_value_not_base64", "t.json", bad_json_span(attributes=[{"key": "a", "value": {"bytesValue": "@@@"}}]),
     f"t.json: {SPAN}.attributes[0].value.bytesValue: expected base64"),
    ("value_not_an_object", "t.json", bad_json_span(attributes=[{"key": "a", "value": "plain"}]),
     f"t.json: {SPAN}.attributes[0].value: expected an AnyValue object, got a string 'plain'"),
    ("nested_array_value", "t.json",
     bad_json_span(attributes=[{"key": "a", "value": {"arrayValue": {"values": [{"boolValue": True}, {"boolValue": 1}]}}}]),
     f"t.json: {SPAN}.attributes[0].value.arrayValue.values[1].boolValue: expected true or false, got the number 1"),
    ("nested_kvlist_value", "t.json",
     bad_json_span(attributes=[{"key": "a", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": []}}]}}}]),
     f"t.json: {SPAN}.attributes[0].value.kvlistValue.values[0].value.intValue: expected a 64-bit integer"),
    ("event_bad_time", "t.json", bad_json_span(events=[{"name": "e"}, {"name": "e", "timeUnixNano": "x"}]),
     f"t.json: {SPAN}.events[1].timeUnixNano: expected an unsigned 64-bit integer"),
    ("event_bad_attribute", "t.json",
     bad_json_span(events=[{"name": "e", "attributes": [{"key": "k", "value": {"stringValue": 3}}]}]),
     f"t.json: {SPAN}.events[0].attributes[0].value.stringValue: expected a string, got the number 3"),
    ("jsonl_bad_line", "t.jsonl",
     b'{"resourceSpans": []}\n' + json.dumps(request_of(minimal_span(spanId="nothex"))).encode() + b"\n",
     f"t.jsonl: line 2: {SPAN}.spanId: expected 16 hex characters or base64 of 8 bytes, got 'nothex'"),
    ("jsonl_single_line_still_names_the_line", "t.jsonl", bad_json_span(spanId="nothex"),
     f"t.jsonl: line 1: {SPAN}.spanId: expected 16 hex characters"),
    ("jsonl_malformed_line", "t.jsonl", b'{"resourceSpans": []}\n{"resourceSpans": [}\n',
     "t.jsonl: line 2 column 20: invalid JSON"),
    ("jsonl_line_not_a_trace", "t.jsonl", b'{"resourceSpans": []}\n{"resourceMetrics": []}\n',
     "t.jsonl: line 2: holds OpenTelemetry metrics, not traces"),
    ("deeply_nested_json", "t.json", b"[" * 100000 + b"]" * 100000, "t.json: line 1: invalid JSON: nested too deeply"),
    ("truncated_protobuf", "t.pb", None, "t.pb: truncated or not an OTLP protobuf message"),
    ("garbage_protobuf", "t.pb", b"\xff\xff\xff\xff\xff", "t.pb: truncated or not an OTLP protobuf message"),
    ("protobuf_without_spans", "t.pb", b"\x10\x01", "t.pb: truncated or not an OTLP protobuf message (no resourceSpans)"),
    ("protobuf_bad_span_id", "t.pb", "bad-span-id",
     f"t.pb: {SPAN}.spanId: expected 8 bytes, got 3 bytes"),
    ("truncated_length_prefixed_stream", "t.pb", "truncated-stream", "t.pb: message 2: truncated or not an OTLP protobuf"),
    ("binary_garbage_named_json", "t.json", b"\x00\xff\xfe garbage", "t.json: not UTF-8: byte 0xff at offset 1 (line 1)"),
    ("latin1_json", "t", b'{"resourceSpans": [{"name": "caf\xe9"}]}', "t: not UTF-8: byte 0xe9 at offset 32 (line 1)"),
    ("plain_text", "notes.txt", b"hello world", "notes.txt: neither OTLP/JSON"),
    ("empty_file", "t.json", b"", "t.json: the file is empty"),
    ("whitespace_only_file", "t.jsonl", b" \n\n", "t.jsonl: the file is empty"),
    ("empty_after_gunzip", "t.json.gz", gzip.compress(b""), "t.json.gz: the file is empty"),
    ("corrupt_gzip", "t.json.gz", b"\x1f\x8b\x08\x00garbage", "t.json.gz: corrupt gzip data"),
    ("zstd", "t.pb", b"\x28\xb5\x2f\xfd\x00\x00", "t.pb: zstd-compressed; decompress it first"),
]


def bad_payload(kind) -> bytes:
    request = to_request(load("pydantic_ai/single_tool.json"))
    data = request.SerializeToString()
    if kind is None:
        return data[: len(data) // 2]
    if kind == "bad-span-id":
        request.resource_spans[0].scope_spans[0].spans[0].span_id = b"abc"
        return request.SerializeToString()
    if kind == "truncated-stream":
        frame = len(data).to_bytes(4, "big") + data
        broken = data[:40]
        return frame + len(broken).to_bytes(4, "big") + broken
    return kind


@pytest.mark.parametrize(("file_name", "content", "message"), [c[1:] for c in BAD_INPUTS],
                         ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_trace_input_error_naming_file_and_place(file_name, content, message, tmp_path):
    path = tmp_path / file_name
    path.write_bytes(bad_payload(content))
    with pytest.raises(TraceInputError) as info:
        read_spans(path)
    assert str(info.value).startswith(f"{tmp_path}/{message}"), str(info.value)


def test_missing_file_is_a_trace_input_error(tmp_path):
    with pytest.raises(TraceInputError, match=r"nope\.json: cannot read: No such file"):
        read_spans(tmp_path / "nope.json")


def test_trace_input_error_is_a_value_error():
    assert issubclass(TraceInputError, ValueError)


def test_decode_bytes_uses_the_given_name_in_messages():
    with pytest.raises(TraceInputError, match=r"^<stdin>: line 1 column 2: invalid JSON"):
        decode_bytes(b"{", "<stdin>")


# ---------------------------------------------------------------- SDK spans


@pytest.fixture
def sdk_spans():
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent calc", attributes={"gen_ai.operation.name": "invoke_agent"}) as run:
        run.set_status(Status(StatusCode.OK))
        with tracer.start_as_current_span("execute_tool multiply") as tool:
            tool.set_attributes({
                "gen_ai.tool.name": "multiply",
                "n": 3,
                "ratio": 0.5,
                "flag": True,
                "tags": ["a", "b"],
                "counts": [1, 2],
            })
            tool.add_event("exception", {"exception.message": "boom", "exception.escaped": False}, timestamp=1234)
            tool.add_event("bare")
            tool.set_status(Status(StatusCode.ERROR, "boom"))
        with tracer.start_as_current_span("chat model"):
            pass
    provider.shutdown()
    return exporter.get_finished_spans()


def test_sdk_span_converts_every_field(sdk_spans):
    tool, chat, run = sdk_spans
    data = from_readable_span(tool)
    assert data.trace_id == tool.context.trace_id and data.trace_id == run.context.trace_id
    assert data.span_id == tool.context.span_id
    assert data.parent_id == run.context.span_id
    assert data.name == "execute_tool multiply"
    assert (data.start_ns, data.end_ns) == (tool.start_time, tool.end_time)
    assert data.attributes == {
        "gen_ai.tool.name": "multiply", "n": 3, "ratio": 0.5, "flag": True, "tags": ("a", "b"), "counts": (1, 2),
    }
    assert type(data.attributes) is dict
    assert data.events == (
        EventData("exception", {"exception.message": "boom", "exception.escaped": False}, 1234),
        EventData("bare", {}, tool.events[1].timestamp),
    )
    assert (data.status_code, data.status_message) == (STATUS_ERROR, "boom")


@pytest.mark.parametrize(
    ("index", "parent_is_root", "status"),
    [(1, False, STATUS_UNSET), (2, True, STATUS_OK)],
    ids=["unset_status_child", "ok_status_root"],
)
def test_sdk_span_status_and_root(sdk_spans, index, parent_is_root, status):
    data = from_readable_span(sdk_spans[index])
    assert (data.parent_id == 0) is parent_is_root
    assert data.status_code == status and data.status_message == ""


def test_sdk_span_attributes_are_a_copy(sdk_spans):
    data = from_readable_span(sdk_spans[0])
    data.attributes["extra"] = 1
    assert "extra" not in sdk_spans[0].attributes


def test_sdk_span_subclass_takes_the_public_api_path_with_the_same_result(sdk_spans):
    from opentelemetry.sdk.trace import ReadableSpan

    class Redacting(ReadableSpan):
        pass

    for span in sdk_spans:
        copy_ = Redacting(
            name=span.name, context=span.context, parent=span.parent, attributes=span.attributes,
            events=span.events, status=span.status, start_time=span.start_time, end_time=span.end_time,
        )
        assert from_readable_span(copy_) == from_readable_span(span)


def test_sdk_span_matches_its_otlp_encoding(sdk_spans):
    trace_encoder = pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")
    request = trace_encoder.encode_spans(sdk_spans)
    expected = [from_readable_span(s) for s in sdk_spans]
    assert spans_from_request(request) == expected
    assert decode_protobuf(request.SerializeToString()).spans == expected
    assert spans_from_json(json_format.MessageToJson(request)) == expected
