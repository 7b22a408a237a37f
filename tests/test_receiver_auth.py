"""The bearer token at the real receiver: what it guards, how it is read.

With ``auth_token`` set, OTLP (gRPC and HTTP), ``/api/v1/*`` and ``/metrics`` need
``Authorization: Bearer <token>`` — the scheme in any case (RFC 9110) — and a missing,
wrong or non-ASCII header is a 401 / UNAUTHENTICATED, never a server error; ``/healthz``
stays open, and ``metrics_auth: false`` leaves ``/metrics`` open for scrapers.
"""

from __future__ import annotations

import grpc
import pytest

from otel_reliability.receiver.auth import BearerToken

from .receiver_harness import (
    Receiver,
    agent_spans,
    assert_judges_a_new_trace,
    export_request,
    module_receivers,  # noqa: F401 - fixture
    new_trace_id,
)

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def guarded(module_receivers) -> Receiver:  # noqa: F811
    return module_receivers.start("auth", decision_wait=0.1, token=TOKEN)


@pytest.fixture(scope="module")
def open_metrics(module_receivers) -> Receiver:  # noqa: F811
    return module_receivers.start("auth-open-metrics", decision_wait=0.1, token=TOKEN, config={"metrics_auth": False})


REFUSED = {
    "no Authorization header": None,
    "a wrong token": f"Bearer not-{TOKEN}",
    "the token without Bearer": TOKEN,
    "an empty bearer": "Bearer ",
    "another scheme": f"Basic {TOKEN}",
    "the token with a non-ASCII letter": "Bearer s3crét-token",  # sent as Latin-1
    # http.client sends a str as Latin-1: this sends the UTF-8 bytes of "Bearer ключ"
    "a UTF-8 header": "Bearer ключ".encode().decode("latin-1"),
}
ACCEPTED = {"Bearer": f"Bearer {TOKEN}", "bearer": f"bearer {TOKEN}", "BEARER": f"BEARER {TOKEN}"}


def _headers(authorization: str | None) -> dict[str, str]:
    return {"Authorization": authorization} if authorization is not None else {}


@pytest.mark.parametrize("authorization", list(REFUSED.values()), ids=list(REFUSED))
def test_http_without_the_right_token_gets_401_everywhere_but_healthz_and_nothing_is_judged(guarded, authorization):
    spans = agent_spans(new_trace_id(), "unauthorised-http")
    headers = _headers(authorization)

    export = guarded.post_traces(export_request(spans).SerializeToString(), headers=headers, authorize=False)
    answers = {path: guarded.http("GET", path, headers=headers, authorize=False).status
               for path in ("/api/v1/results", "/api/v1/reputation", "/metrics", "/healthz")}

    assert export.status == 401 and export.headers.get("www-authenticate") == "Bearer"
    assert answers == {"/api/v1/results": 401, "/api/v1/reputation": 401, "/metrics": 401, "/healthz": 200}
    assert_judges_a_new_trace(guarded, "http-protobuf")
    assert guarded.results(trace_id=spans[0].trace_id.hex())["results"] == []


@pytest.mark.parametrize("authorization", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_the_scheme_is_read_in_any_case(guarded, authorization):
    spans = agent_spans(new_trace_id(), "any-case-scheme")
    headers = _headers(authorization)

    export = guarded.post_traces(export_request(spans).SerializeToString(), headers=headers, authorize=False)
    metrics = guarded.http("GET", "/metrics", headers=headers, authorize=False)
    guarded.grpc_export(export_request(agent_spans(new_trace_id(), "any-case-grpc")), metadata=[("authorization", authorization)])

    assert (export.status, metrics.status) == (200, 200)
    assert guarded.wait_results([spans[0].trace_id.hex()], 1)


# grpcio's own client refuses to send a non-ASCII metadata value, so those cases are left to
# the shared check's table below (the gRPC server hands it the value as grpcio decoded it).
GRPC_REFUSED = {name: value for name, value in REFUSED.items() if value is None or value.isascii()}


@pytest.mark.parametrize("authorization", list(GRPC_REFUSED.values()), ids=list(GRPC_REFUSED))
def test_grpc_without_the_right_token_gets_unauthenticated_and_nothing_is_judged(guarded, authorization):
    spans = agent_spans(new_trace_id(), "unauthorised-grpc")
    metadata = [("authorization", authorization)] if authorization is not None else []

    with pytest.raises(grpc.RpcError) as refused:
        guarded.grpc_export(export_request(spans), metadata=metadata)

    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert_judges_a_new_trace(guarded, "grpc")
    assert guarded.results(trace_id=spans[0].trace_id.hex())["results"] == []


@pytest.mark.parametrize(
    ("authorization", "allowed"),
    [(value, False) for value in REFUSED.values()] + [(value, True) for value in ACCEPTED.values()]
    + [(f"  Bearer   {TOKEN}  ", True), ("Bearer\udce9", False)],  # how aiohttp hands on a byte it cannot decode
)
def test_the_shared_check_allows_exactly_the_token(authorization, allowed):
    assert BearerToken(TOKEN).allows(authorization) is allowed


def test_metrics_auth_false_leaves_only_metrics_and_healthz_open(open_metrics):
    assert open_metrics.http("GET", "/metrics", authorize=False).status == 200
    assert open_metrics.http("GET", "/healthz", authorize=False).status == 200
    assert open_metrics.http("GET", "/api/v1/results", authorize=False).status == 401
    assert open_metrics.post_traces(b"", authorize=False).status == 401


@pytest.mark.parametrize("token", ["has space", "naïve", "tab\there"])
def test_a_token_that_cannot_travel_in_a_header_is_refused_at_startup(token):
    from otel_reliability.receiver.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="auth_token"):
        load_config(None, {"auth_token": token}, environ={})
