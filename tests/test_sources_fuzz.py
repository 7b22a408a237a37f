"""Whatever the input, the readers either return spans or raise ``TraceInputError``."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from otel_reliability.model import SpanData
from otel_reliability.sources import Decoded, TraceInputError, decode_bytes, decode_json

FIXTURE = Path(__file__).parent / "fixtures" / "corpus" / "pydantic_ai" / "error_fatal.json"
FUZZ = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.floats(allow_nan=False) | st.text(max_size=40)
    | st.sampled_from(["", "0" * 32, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "AAECAw==",
                       "STATUS_CODE_ERROR", "SPAN_KIND_SERVER", "NaN", "-1", "18446744073709551616"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "parentSpanId", "name",
                         "kind", "status", "code", "message", "attributes", "events", "key", "value",
                         "stringValue", "intValue", "boolValue", "doubleValue", "bytesValue", "arrayValue",
                         "kvlistValue", "values", "startTimeUnixNano", "timeUnixNano", "x"]) | st.text(max_size=8),
        children, max_size=4),
    max_leaves=25,
)


def check(decoded: Decoded) -> None:
    assert all(type(s) is SpanData for s in decoded.spans)
    assert all(type(r) is str and r for r in decoded.rejected)


def decode_or_input_error(data: bytes, name: str) -> None:
    try:
        check(decode_bytes(data, name))
    except TraceInputError as exc:
        assert str(exc).startswith(f"{name}: ")


@FUZZ
@given(data=st.binary(max_size=400), name=st.sampled_from(["t.json", "t.jsonl", "t.pb", "t", "t.json.gz"]))
def test_random_bytes_never_raise_anything_but_trace_input_error(data, name):
    decode_or_input_error(data, name)


@FUZZ
@given(value=json_values, name=st.sampled_from(["t.json", "t"]))
def test_random_json_never_raises_anything_but_trace_input_error(value, name):
    decode_or_input_error(json.dumps(value).encode(), name)
    try:
        check(decode_json(value))
    except TraceInputError:
        pass


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _paths(child, path + (key,))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _paths(child, path + (index,))


BASE = json.loads(FIXTURE.read_text())
BASE["resourceSpans"][0]["scopeSpans"][0]["spans"] = BASE["resourceSpans"][0]["scopeSpans"][0]["spans"][:2]
for _attribute in BASE["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]:
    _attribute["value"] = {"stringValue": "v"}
BASE_PATHS = list(_paths(BASE))


@FUZZ
@given(path=st.sampled_from(BASE_PATHS), replacement=json_values)
def test_valid_request_with_one_part_replaced_never_raises_anything_but_trace_input_error(path, replacement):
    doc = copy.deepcopy(BASE)
    if path:
        node = doc
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = replacement
    else:
        doc = replacement
    decode_or_input_error(json.dumps(doc).encode(), "t.json")


def _protobuf() -> bytes:
    doc = json.loads(FIXTURE.read_text())
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()


PROTOBUF = _protobuf()


@FUZZ
@given(cut=st.integers(min_value=0, max_value=10_000), flips=st.lists(
    st.tuples(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=255)), max_size=4))
def test_damaged_protobuf_never_raises_anything_but_trace_input_error(cut, flips):
    data = bytearray(PROTOBUF)
    for position, byte in flips:
        data[position % len(data)] = byte
    decode_or_input_error(bytes(data[: max(1, len(data) - cut)]), "t.pb")
