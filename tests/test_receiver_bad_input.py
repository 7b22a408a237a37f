"""Bad input at the real receiver: every request gets the documented status, nothing crashes
or hangs, and a valid trace sent afterwards still gets its verdict.

Documented statuses (OTLP specification, SPEC §8): malformed payloads → HTTP 400 / gRPC
INVALID_ARGUMENT; bodies over ``max_request_bytes`` or inflating past
``max_decompressed_bytes`` → 413 / RESOURCE_EXHAUSTED; an unsupported content type or
encoding → 415; a full buffer
(``max_buffered_spans``) → 503 with ``Retry-After`` / RESOURCE_EXHAUSTED with ``RetryInfo``;
spans with bad ids in an otherwise good request → ``partial_success.rejected_spans``.
HTTP errors carry a ``google.rpc.Status`` in the request's encoding.
"""

from __future__ import annotations

import gzip
import json
import socket

import grpc
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from .receiver_harness import (
    Receiver,
    agent_spans,
    assert_judges_a_new_trace,
    by_run,
    expected_results,
    export_request,
    gzip_bomb,
    module_receivers,  # noqa: F401 - fixture
    new_trace_id,
    otlp_json,
    peak_rss_bytes,
    wait_until,
)

MAX_REQUEST = 2 << 20  # 2 MiB: a 1 GiB gzip bomb (~1 MiB) gets past it to the inflater
MAX_DECOMPRESSED = 4 << 20
PROTOBUF, JSON = "application/x-protobuf", "application/json"
FUZZ = settings(max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def receiver(module_receivers) -> Receiver:  # noqa: F811 - the imported fixture
    return module_receivers.start(
        "bad-input",
        decision_wait=0.1,
        config={"max_request_bytes": MAX_REQUEST, "max_decompressed_bytes": MAX_DECOMPRESSED},
    )


def _valid_body(content_type: str = PROTOBUF) -> bytes:
    request = export_request(agent_spans(new_trace_id(), "bad-input-template"))
    return request.SerializeToString() if content_type == PROTOBUF else otlp_json(request)


def _status_of(reply, content_type: str) -> tuple[int, str]:
    """The ``google.rpc.Status`` an HTTP error carries: (code, message)."""
    if content_type == PROTOBUF:
        status = status_pb2.Status.FromString(reply.body)
        return status.code, status.message
    body = reply.json()
    return body["code"], body["message"]


# -- HTTP: one malformed request at a time ------------------------------------------------

def _truncated(content_type: str) -> bytes:
    body = _valid_body(content_type)
    return body[: len(body) // 2]


HTTP_CASES = {
    # name: (content type, content encoding, body factory, HTTP status, gRPC code in the body)
    "protobuf that is not OTLP": (PROTOBUF, None, lambda: b"\xff\xff\xff\xff", 400, code_pb2.INVALID_ARGUMENT),
    "truncated protobuf": (PROTOBUF, None, lambda: _truncated(PROTOBUF), 400, code_pb2.INVALID_ARGUMENT),
    "JSON that does not parse": (JSON, None, lambda: b'{"resourceSpans": [', 400, code_pb2.INVALID_ARGUMENT),
    "truncated OTLP/JSON": (JSON, None, lambda: _truncated(JSON), 400, code_pb2.INVALID_ARGUMENT),
    "JSON of the wrong shape": (JSON, None, lambda: b'{"resourceSpans": 7}', 400, code_pb2.INVALID_ARGUMENT),
    "JSON nested 100000 deep": (JSON, None, lambda: b"[" * 100_000 + b"]" * 100_000, 400, code_pb2.INVALID_ARGUMENT),
    "corrupt gzip": (PROTOBUF, "gzip", lambda: b"\x1f\x8b\x08\x00garbage", 400, code_pb2.INVALID_ARGUMENT),
    "truncated gzip": (
        PROTOBUF, "gzip", lambda: gzip.compress(_valid_body())[:-12], 400, code_pb2.INVALID_ARGUMENT
    ),
    "gzip bomb: 1 GiB of zeros": (PROTOBUF, "gzip", gzip_bomb, 413, code_pb2.RESOURCE_EXHAUSTED),
    "gzip inflating just past max_decompressed_bytes": (
        JSON, "gzip", lambda: gzip.compress(bytes(MAX_DECOMPRESSED + 1)), 413, code_pb2.RESOURCE_EXHAUSTED
    ),
    "body over max_request_bytes": (PROTOBUF, None, lambda: bytes(MAX_REQUEST + 1), 413, code_pb2.RESOURCE_EXHAUSTED),
    "wrong content type": ("text/plain", None, _valid_body, 415, code_pb2.INVALID_ARGUMENT),
    "no content type": ("", None, _valid_body, 415, code_pb2.INVALID_ARGUMENT),
    "unsupported content encoding": (PROTOBUF, "br", _valid_body, 415, code_pb2.INVALID_ARGUMENT),
}


@pytest.mark.parametrize(
    ("content_type", "encoding", "body", "status", "code"), list(HTTP_CASES.values()), ids=list(HTTP_CASES)
)
def test_malformed_http_requests_get_the_documented_status(receiver, content_type, encoding, body, status, code):
    reply = receiver.post_traces(body(), content_type, encoding)

    assert reply.status == status, reply.body[:300]
    got_code, message = _status_of(reply, PROTOBUF if content_type == PROTOBUF else JSON)
    assert got_code == code and message
    assert_judges_a_new_trace(receiver, "http-protobuf")


def test_a_gzip_bomb_is_refused_without_being_inflated(receiver):
    reply = receiver.post_traces(gzip_bomb(), PROTOBUF, "gzip")

    assert reply.status == 413
    assert "decompressed payload exceeds" in _status_of(reply, PROTOBUF)[1]
    assert peak_rss_bytes(receiver.process.pid) < 512 << 20  # inflating it would take 1 GiB
    assert_judges_a_new_trace(receiver, "http-json")


def test_a_body_cut_short_of_its_content_length_does_not_hang_the_receiver(receiver):
    body = _valid_body()
    with socket.create_connection(("127.0.0.1", receiver.http_port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\n"
            + f"Content-Length: {len(body) + 1000}\r\n\r\n".encode()
            + body
        )
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):  # the receiver must close its side: recv times out otherwise
            answer += chunk
    assert not answer.startswith(b"HTTP/1.1 200")
    assert_judges_a_new_trace(receiver, "http-protobuf")


# -- gRPC: one malformed request at a time ------------------------------------------------

GRPC_CASES = {
    "bytes that are not OTLP": (lambda: b"\xff\xff\xff\xff", None, grpc.StatusCode.INVALID_ARGUMENT),
    "truncated request": (lambda: _truncated(PROTOBUF), None, grpc.StatusCode.INVALID_ARGUMENT),
    "message over max_request_bytes": (lambda: bytes(MAX_REQUEST + 1), None, grpc.StatusCode.RESOURCE_EXHAUSTED),
    "gzip message inflating past max_request_bytes": (
        lambda: bytes(8 * MAX_REQUEST), grpc.Compression.Gzip, grpc.StatusCode.RESOURCE_EXHAUSTED
    ),
}


@pytest.mark.parametrize(("payload", "compression", "code"), list(GRPC_CASES.values()), ids=list(GRPC_CASES))
def test_malformed_grpc_requests_get_the_documented_status(receiver, payload, compression, code):
    with pytest.raises(grpc.RpcError) as refused:
        receiver.grpc_export(payload(), compression=compression, timeout=20)

    assert refused.value.code() == code and refused.value.details()
    assert_judges_a_new_trace(receiver, "grpc")


# -- fuzzing ------------------------------------------------------------------------------

_TEMPLATE = export_request(agent_spans(0x5EED_0000_0000_0000_0000_0000_0000_0001, "fuzz-template"))
_TEMPLATE_BYTES = _TEMPLATE.SerializeToString()
_TEMPLATE_JSON = json.loads(otlp_json(_TEMPLATE))


@st.composite
def protobuf_bodies(draw) -> bytes:
    """Random bytes, or the template request with a slice cut out or replaced."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=600))
    start = draw(st.integers(0, len(_TEMPLATE_BYTES)))
    end = draw(st.integers(start, min(len(_TEMPLATE_BYTES), start + 40)))
    return _TEMPLATE_BYTES[:start] + draw(st.binary(max_size=8)) + _TEMPLATE_BYTES[end:]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(["resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "parentSpanId", "name",
                         "attributes", "key", "value", "stringValue", "intValue", "arrayValue", "values",
                         "status", "code", "events", "startTimeUnixNano", "kind"]) | st.text(max_size=8),
        inner,
        max_size=4,
    ),
    max_leaves=20,
)


def _replace_at(document, path: list[int], value):
    """The template document with the node reached by ``path`` (indexes into each level's
    children, wrapped round) replaced by ``value``."""
    document = json.loads(json.dumps(document))
    parent, key = None, None
    node = document
    for step in path:
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        else:
            break
        if not children:
            break
        key, child = children[step % len(children)]
        parent, node = node, child
    if parent is None:
        return value
    parent[key] = value
    return document


@st.composite
def json_bodies(draw) -> bytes:
    if draw(st.booleans()):
        document = draw(json_values)
    else:
        document = _replace_at(_TEMPLATE_JSON, draw(st.lists(st.integers(0, 50), max_size=12)), draw(json_values))
    return json.dumps(document).encode()


@FUZZ
@given(body=protobuf_bodies())
def test_fuzzed_protobuf_over_http_gets_200_or_400(receiver, body):
    reply = receiver.post_traces(body, PROTOBUF)

    assert reply.status in (200, 400), reply
    if reply.status == 200:
        ExportTraceServiceResponse.FromString(reply.body)
    else:
        assert _status_of(reply, PROTOBUF)[0] == code_pb2.INVALID_ARGUMENT


@FUZZ
@given(body=protobuf_bodies())
def test_fuzzed_protobuf_over_grpc_gets_ok_or_invalid_argument(receiver, body):
    try:
        receiver.grpc_export(body, timeout=20)
    except grpc.RpcError as refused:
        assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, refused


@FUZZ
@given(body=json_bodies())
def test_fuzzed_json_over_http_gets_200_or_400(receiver, body):
    reply = receiver.post_traces(body, JSON)

    assert reply.status in (200, 400), (reply, body[:300])
    assert isinstance(reply.json(), dict)


def test_the_receiver_still_judges_after_the_fuzzing(receiver):
    for transport in ("grpc", "http-protobuf", "http-json"):
        assert_judges_a_new_trace(receiver, transport)


# -- partial success ----------------------------------------------------------------------

def _with_bad_spans(transport: str):
    """A good trace plus three spans with bad ids: the body, and how to read the response."""
    good = agent_spans(new_trace_id(), f"partial-{transport}")
    bad = agent_spans(new_trace_id(), "never-judged")[1:4]
    bad[0].trace_id = b"\x01" * 5  # too short
    bad[1].span_id = b"\x00" * 8  # all zero
    bad[2].parent_span_id = b"\x02" * 3  # too short
    return good, export_request(good + bad)


@pytest.mark.parametrize("transport", ["grpc", "http-protobuf", "http-json"])
def test_spans_with_bad_ids_are_rejected_and_the_good_ones_judged(receiver, transport):
    good, request = _with_bad_spans(transport)
    if transport == "grpc":
        partial = receiver.grpc_export(request).partial_success
        rejected, message = partial.rejected_spans, partial.error_message
    elif transport == "http-protobuf":
        reply = receiver.post_traces(request.SerializeToString(), PROTOBUF)
        assert reply.status == 200
        partial = ExportTraceServiceResponse.FromString(reply.body).partial_success
        rejected, message = partial.rejected_spans, partial.error_message
    else:
        reply = receiver.post_traces(otlp_json(request), JSON)
        assert reply.status == 200
        partial = reply.json()["partialSuccess"]
        rejected, message = int(partial["rejectedSpans"]), partial["errorMessage"]

    assert rejected == 3
    assert "traceId" in message and "spanId" in message
    trace_hex = good[0].trace_id.hex()
    got = receiver.wait_results([trace_hex], 1)
    assert by_run(got) == by_run(expected_results(good))


# -- overload -------------------------------------------------------------------------------

RETRY_AFTER = 2


@pytest.fixture(scope="module")
def tiny(module_receivers) -> Receiver:  # noqa: F811
    """Room for 8 buffered spans; judged traces leave the buffer 0.3 s after their verdict."""
    return module_receivers.start(
        "tiny-buffer",
        decision_wait=0.1,
        config={"max_buffered_spans": 8, "late_window": 0.3, "retry_after": RETRY_AFTER},
    )


def _judges_once_drained(tiny: Receiver, transport: str) -> None:
    """A 5-span trace fits only once earlier traces left the 8-span buffer."""
    wait_until(lambda: tiny.metric("agent_reliability_traces_buffered") == 0, 10, "an empty buffer")
    assert_judges_a_new_trace(tiny, transport)


def _too_many_spans():
    calls = [(f"tool_{i}", {"i": i}) for i in range(7)]
    return agent_spans(new_trace_id(), "overloading", calls)  # 10 spans > 8


def test_a_full_buffer_answers_grpc_with_resource_exhausted_and_retry_info(tiny):
    with pytest.raises(grpc.RpcError) as refused:
        tiny.grpc_export(export_request(_too_many_spans()))

    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = dict(refused.value.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(details)
    retry = error_details_pb2.RetryInfo()
    assert status.code == code_pb2.RESOURCE_EXHAUSTED
    assert any(detail.Unpack(retry) for detail in status.details)
    assert retry.retry_delay.seconds == RETRY_AFTER
    _judges_once_drained(tiny, "grpc")


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_a_full_buffer_answers_http_with_503_and_retry_after(tiny, content_type):
    request = export_request(_too_many_spans())
    body = request.SerializeToString() if content_type == PROTOBUF else otlp_json(request)

    reply = tiny.post_traces(body, content_type)

    assert reply.status == 503 and reply.headers["retry-after"] == str(RETRY_AFTER)
    assert _status_of(reply, content_type)[0] == code_pb2.UNAVAILABLE
    _judges_once_drained(tiny, "http-protobuf")


def test_a_refused_request_is_accepted_on_retry_once_the_buffer_drained(tiny):
    first, second = (agent_spans(new_trace_id(), f"queued-{i}") for i in (1, 2))  # 5 spans each
    dropped_before = tiny.metric("agent_reliability_spans_dropped_total", reason="overloaded")
    wait_until(lambda: tiny.metric("agent_reliability_traces_buffered") == 0, 10, "an empty buffer")

    tiny.send(first)
    with pytest.raises(grpc.RpcError) as refused:
        tiny.send(second)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    def retried() -> bool:
        try:
            tiny.send(second)
        except grpc.RpcError as again:
            assert again.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            return False
        return True

    wait_until(retried, 10, "the buffer to take the retried request", interval=0.1)
    got = tiny.wait_results([first[0].trace_id.hex(), second[0].trace_id.hex()], 2)
    assert by_run(got) == by_run(expected_results(first) + expected_results(second))
    assert tiny.metric("agent_reliability_spans_dropped_total", reason="overloaded") > dropped_before
