"""The real ``otel-reliability serve`` for tests, and the clients that talk to it.

- ``start_receiver`` runs the receiver as a subprocess on free loopback ports with its own
  store, a short ``decision_wait`` and optionally a YAML config file; it returns once
  ``/healthz`` answers and the gRPC port accepts connections. ``Receiver.stop`` sends
  SIGTERM; the ``receivers`` fixture stops whatever a test started.
- ``Receiver`` speaks to it: OTLP over gRPC (raw bytes through a generic channel call)
  and HTTP, the results API, ``/metrics`` parsed into samples, polling with deadlines.
  Verdicts are read once they are final (``settled``: no trace pending a verdict), never
  while a superseding verdict may still be published.
- ``agent_spans`` builds agent-shaped traces (OTel GenAI semantic conventions) as
  protobuf spans; ``otlp_json`` encodes a request as OTLP/JSON (hex ids, integer enums).
- ``remap_corpus`` copies the corpus with fresh trace and span ids per file (the agno
  fixtures reuse one trace id and the same span ids), so that one receiver can take every
  file, and several clients can each send their own copy.
- ``start_collector`` runs the OpenTelemetry Collector that ``.ci/setup`` builds from
  ``collector-config/builder.yaml``, with ``collector-config/loadbalancing.yaml`` routing
  to given receivers; ``export_split`` sends trace files to it through the real OTLP/gRPC
  exporter with every trace split across several export calls.
- Run as a script, this module is a traced Python process: it replays OTLP/JSON trace
  files through an SDK ``TracerProvider`` whose ``BatchSpanProcessor`` feeds the real
  ``opentelemetry-exporter-otlp`` gRPC or HTTP exporter::

      python tests/receiver_harness.py {grpc|http}[+gzip] ENDPOINT FILE...

Everything here is bounded: every wait has a deadline, every child process a timeout.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "corpus"
NODE_DIR = REPO / "tests" / "node"
EXPORT_METHOD = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SERVE = [sys.executable, "-m", "otel_reliability.cli", "serve"]
STARTUP_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0

T = TypeVar("T")


# -- waiting ----------------------------------------------------------------------------


def wait_until(probe: Callable[[], T], timeout: float, what: str, interval: float = 0.05) -> T:
    """Call ``probe`` until it returns something truthy; ``AssertionError`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the receiver process -----------------------------------------------------------------


@dataclass
class HttpReply:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def terminate(process: subprocess.Popen, timeout: float, name: str, log_text: Callable[[], str]) -> int:
    """SIGTERM, then wait; returns the exit code. A process still running after ``timeout``
    is killed and the test fails with its log."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            # SIGABRT first: the receiver runs with PYTHONFAULTHANDLER, so its log shows where
            # every thread was stuck
            process.send_signal(signal.SIGABRT)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            raise AssertionError(f"{name} ignored SIGTERM for {timeout} s\n{log_text()}") from None
    return process.returncode


@dataclass
class Receiver:
    """One ``otel-reliability serve`` subprocess and clients for it."""

    process: subprocess.Popen
    grpc_port: int
    http_port: int
    store: Path
    log: Path
    token: str | None = None
    ca_file: Path | None = None  # set when the receiver serves TLS
    _channel: Any = field(default=None, repr=False)

    # -- lifecycle
    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def http_url(self) -> str:
        return f"{'https' if self.ca_file else 'http'}://127.0.0.1:{self.http_port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, then wait; returns the exit code (SIGKILL and fail if it does not exit)."""
        self._close_channel()
        return terminate(self.process, timeout, "receiver", self.log_text)

    def kill(self) -> None:
        """SIGKILL: no shutdown work at all."""
        self._close_channel()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)

    # -- HTTP
    def http(
        self, method: str, path: str, body: bytes | None = None, headers: Mapping[str, str] | None = None,
        timeout: float = 30.0, authorize: bool = True,
    ) -> HttpReply:
        """One request on a fresh connection; the receiver's token is added unless ``authorize`` is false."""
        if self.ca_file:
            context = ssl.create_default_context(cafile=str(self.ca_file))
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                "127.0.0.1", self.http_port, timeout=timeout, context=context
            )
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        try:
            all_headers = dict(headers or {})
            if authorize and self.token and "Authorization" not in all_headers:
                all_headers["Authorization"] = f"Bearer {self.token}"
            conn.request(method, path, body=body, headers=all_headers)
            response = conn.getresponse()
            return HttpReply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            conn.close()

    def post_traces(
        self, body: bytes, content_type: str = "application/x-protobuf", encoding: str | None = None,
        headers: Mapping[str, str] | None = None, authorize: bool = True,
    ) -> HttpReply:
        all_headers = {"Content-Type": content_type, **(headers or {})} if content_type else dict(headers or {})
        if encoding:
            all_headers["Content-Encoding"] = encoding
        return self.http("POST", "/v1/traces", body, all_headers, authorize=authorize)

    def results(self, **query: Any) -> dict:
        """``GET /api/v1/results`` with the given query (``limit`` defaults to 10000)."""
        from urllib.parse import urlencode

        query.setdefault("limit", 10_000)
        reply = self.http("GET", "/api/v1/results?" + urlencode(query))
        assert reply.status == 200, (reply.status, reply.body)
        return reply.json()

    def results_for(self, trace_ids: Iterable[str]) -> list[dict]:
        wanted = set(trace_ids)
        return [r for r in self.results()["results"] if r["trace_id"] in wanted]

    def settled(self) -> bool:
        """True when no trace holds spans that no published verdict has judged: every verdict
        in the store stands until another span arrives (``agent.reliability.traces.pending``).

        Read twice: with workers, a paused run one worker judges goes to the others through
        the serving process, and may reopen a trace there that was already judged. That notice
        leaves the first worker before its answer to the first read (both travel in order on
        its pipe, and the serving process hands the notice on before reading further), so the
        second read, asked once the first is answered, reaches the other worker after it."""
        return self._pending() == 0 and self._pending() == 0

    def _pending(self) -> float:
        samples = [value for name, _, value in self.metrics() if name == "agent_reliability_traces_pending"]
        assert samples, "the receiver reports no agent_reliability_traces_pending"
        return sum(samples)

    def wait_results(self, trace_ids: Iterable[str], runs: int, timeout: float = 15.0) -> list[dict]:
        """Poll until the store holds at least ``runs`` verdicts for ``trace_ids``, final ones
        (``settled``), and return them."""
        ids = set(trace_ids)
        return wait_until(
            lambda: self.settled() and (found := self.results_for(ids)) and len(found) >= runs and found,
            timeout,
            f"{runs} final verdict(s) for {len(ids)} trace(s)",
        )

    def wait_verdicts(self, expected: Iterable[Mapping[str, Any]], timeout: float = 15.0) -> list[dict]:
        """Poll until the final verdicts (``settled``) for the traces of ``expected`` are
        ``expected``; fails showing the difference if they are not within ``timeout``."""
        expected = by_run(expected)
        trace_ids = {r["trace_id"] for r in expected}
        try:
            wait_until(
                lambda: self.settled() and by_run(self.results_for(trace_ids)) == expected,
                timeout, f"the final verdicts of {len(trace_ids)} trace(s)",
            )
        except AssertionError:
            pass  # the comparisons below show what is wrong
        got = by_run(self.results_for(trace_ids))
        assert got == expected, verdict_differences(got, expected)
        assert self.settled(), f"verdicts still pending after {timeout} s"
        return got

    def metrics(self) -> list[tuple[str, dict[str, str], float]]:
        from prometheus_client.parser import text_string_to_metric_families

        reply = self.http("GET", "/metrics")
        assert reply.status == 200, reply
        return [
            (sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(reply.body.decode())
            for sample in family.samples
        ]

    def metric(self, name: str, **labels: str) -> float:
        """Sum of the samples called ``name`` (Prometheus spelling) carrying ``labels``."""
        return sum(
            value
            for sample, sample_labels, value in self.metrics()
            if sample == name and all(sample_labels.get(k) == v for k, v in labels.items())
        )

    # -- gRPC
    def channel(self):
        import grpc

        if self._channel is None:
            if self.ca_file:
                credentials = grpc.ssl_channel_credentials(root_certificates=self.ca_file.read_bytes())
                self._channel = grpc.secure_channel(f"localhost:{self.grpc_port}", credentials)
            else:
                self._channel = grpc.insecure_channel(self.grpc_endpoint)
        return self._channel

    def grpc_export(
        self, request: Any, metadata: Sequence[tuple[str, str]] | None = None, compression: Any = None,
        timeout: float = 30.0,
    ):
        """One ``TraceService/Export`` call with raw bytes (or a request message); returns the response.

        Raises ``grpc.RpcError`` with the receiver's status when it refuses the request.
        """
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        payload = request if isinstance(request, bytes) else request.SerializeToString()
        if metadata is None:
            metadata = [("authorization", f"Bearer {self.token}")] if self.token else []
        call = self.channel().unary_unary(EXPORT_METHOD)
        raw = call(payload, metadata=metadata, compression=compression, timeout=timeout)
        return ExportTraceServiceResponse.FromString(raw)

    def send(self, spans: Sequence[Any], transport: str = "grpc") -> None:
        """Export ``spans`` in one request over ``transport`` (``grpc``, ``http-protobuf``,
        ``http-json``); fails unless the receiver accepted every span."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        request = export_request(spans)
        if transport == "grpc":
            response = self.grpc_export(request)
            assert not response.partial_success.rejected_spans, response
        elif transport == "http-protobuf":
            reply = self.post_traces(request.SerializeToString())
            assert reply.status == 200, (reply.status, reply.body)
            response = ExportTraceServiceResponse.FromString(reply.body)
            assert not response.partial_success.rejected_spans, response
        elif transport == "http-json":
            reply = self.post_traces(otlp_json(request), "application/json")
            assert reply.status == 200, (reply.status, reply.body)
            assert "partialSuccess" not in reply.json(), reply.body
        else:
            raise ValueError(f"unknown transport {transport!r}")

    def _close_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None


def start_receiver(
    workdir: Path,
    *,
    decision_wait: float = 0.2,
    store: Path | None = None,
    config: Mapping[str, Any] | None = None,
    token: str | None = None,
    tls: tuple[Path, Path] | None = None,
    extra_args: Sequence[str] = (),
) -> Receiver:
    """Start ``otel-reliability serve`` on free loopback ports and wait until it answers."""
    import yaml

    workdir.mkdir(parents=True, exist_ok=True)
    grpc_port, http_port = free_port(), free_port()
    while http_port == grpc_port:
        http_port = free_port()
    store = store or workdir / "results.db"
    log = workdir / f"receiver-{grpc_port}.log"
    args = [
        *SERVE,
        "--grpc-endpoint", f"127.0.0.1:{grpc_port}",
        "--http-endpoint", f"127.0.0.1:{http_port}",
        "--store", str(store),
        "--decision-wait", str(decision_wait),
    ]
    if config:
        config_file = workdir / f"receiver-{grpc_port}.yaml"
        config_file.write_text(yaml.safe_dump(dict(config)), encoding="utf-8")
        args += ["--config", str(config_file)]
    if token:
        args += ["--auth-token", token]
    if tls:
        args += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])]
    args += list(extra_args)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_RELIABILITY_")}
    env["PYTHONFAULTHANDLER"] = "1"  # a receiver that hangs is aborted with its threads' stacks (terminate)
    with open(log, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    receiver = Receiver(process, grpc_port, http_port, store, log, token, tls[0] if tls else None)
    try:
        wait_until(lambda: _ready(receiver), STARTUP_TIMEOUT_S, "the receiver to answer /healthz", interval=0.05)
    except AssertionError:
        receiver.kill()
        raise AssertionError(f"receiver did not start:\n{receiver.log_text()}") from None
    return receiver


def _ready(receiver: Receiver) -> bool:
    if not receiver.alive():
        raise AssertionError(f"receiver exited with {receiver.process.returncode}:\n{receiver.log_text()}")
    try:
        with socket.create_connection(("127.0.0.1", receiver.grpc_port), timeout=1):
            pass
        return receiver.http("GET", "/healthz", timeout=2).status == 200
    except OSError:
        return False


class Receivers:
    """Starts receivers for one test (or module) and stops them all afterwards."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: list[Receiver] = []

    def start(self, name: str = "receiver", **settings: Any) -> Receiver:
        receiver = start_receiver(self.workdir / name, **settings)
        self.started.append(receiver)
        return receiver

    def stop_all(self) -> list[str]:
        """Stop every receiver still running; returns what went wrong: a receiver that did not
        exit 0 on SIGTERM, or one that logged a traceback (an error nothing handled)."""
        problems = []
        for receiver in self.started:
            if receiver.alive():
                try:
                    code = receiver.stop()
                except AssertionError as exc:
                    problems.append(str(exc))
                    continue
                if code != 0:
                    problems.append(f"{receiver.log.name} exited {code} on SIGTERM:\n{receiver.log_text()}")
            else:
                receiver._close_channel()
            if "Traceback" in receiver.log_text():
                problems.append(f"{receiver.log.name} logged a traceback:\n{receiver.log_text()}")
        return problems


try:
    import pytest
except ImportError:  # run as a script: no fixtures needed
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture
    def receivers(tmp_path: Path):
        """``receivers.start(name, decision_wait=…, config={…}, token=…, tls=…)``; all stopped afterwards."""
        group = Receivers(tmp_path)
        yield group
        problems = group.stop_all()
        assert not problems, "\n".join(problems)

    @pytest.fixture(scope="module")
    def module_receivers(tmp_path_factory):
        """Like ``receivers``, for receivers shared by the tests of one module."""
        group = Receivers(tmp_path_factory.mktemp("receivers"))
        yield group
        problems = group.stop_all()
        assert not problems, "\n".join(problems)


# -- agent-shaped traces ------------------------------------------------------------------

DEFAULT_CALLS: tuple[tuple[str, dict], ...] = (
    ("get_weather", {"city": "Paris"}),
    ("get_news", {"topic": "weather", "limit": 3}),
)


def new_trace_id() -> int:
    return int.from_bytes(os.urandom(16), "big") | 1


def agent_spans(
    trace_id: int,
    agent: str,
    calls: Sequence[tuple[str, dict]] = DEFAULT_CALLS,
    *,
    failed: Sequence[str] = (),
    start_ns: int | None = None,
) -> list:
    """One agent run as protobuf spans, GenAI conventions: ``invoke_agent``, a ``chat`` that
    requests ``calls``, one ``execute_tool`` per call (ERROR status for tools in ``failed``), a
    final ``chat``. The run span comes first; span ids are derived from the trace id.
    """
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    t0 = start_ns if start_ns is not None else time.time_ns() - 10_000_000_000
    base = (trace_id & 0xFFFF_FFFF_FFFF) << 8

    def span(index: int, parent: int, name: str, attributes: Mapping[str, Any], status: int = 0) -> Span:
        s = Span(
            trace_id=trace_id.to_bytes(16, "big"),
            span_id=(base | index).to_bytes(8, "big"),
            parent_span_id=parent.to_bytes(8, "big") if parent else b"",
            name=name,
            kind=Span.SPAN_KIND_INTERNAL,
            start_time_unix_nano=t0 + index * 1_000_000,
            end_time_unix_nano=t0 + (100_000_000 if index == 1 else index * 1_000_000 + 500_000),
            status=Status(code=status, message="tool failed" if status == 2 else ""),
        )
        for key, value in attributes.items():
            kv = s.attributes.add(key=key)
            if isinstance(value, bool):
                kv.value.bool_value = value
            elif isinstance(value, int):
                kv.value.int_value = value
            elif isinstance(value, (list, tuple)):
                for item in value:
                    kv.value.array_value.values.add(string_value=item)
            else:
                kv.value.string_value = value
        return s

    run_id = base | 1
    requested = [
        {"type": "tool_call", "id": f"call_{i}", "name": name, "arguments": args}
        for i, (name, args) in enumerate(calls)
    ]
    spans = [
        span(1, 0, f"invoke_agent {agent}", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}),
        span(2, run_id, "chat gpt-4o-mini", {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": requested, "finish_reason": "tool_call"}]
            ),
        }),
    ]
    for i, (name, args) in enumerate(calls):
        spans.append(span(3 + i, run_id, f"execute_tool {name}", {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": f"call_{i}",
            "gen_ai.tool.call.arguments": json.dumps(args),
        }, status=2 if name in failed else 0))
    spans.append(span(3 + len(calls), run_id, "chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "done"}], "finish_reason": "stop"}]
        ),
    }))
    return spans


def paused_and_resumed(paused_trace: int, resuming_trace: int) -> tuple[list, list]:
    """A run that ran get_weather and left approve_booking pending, and a run in another
    trace that answers the pending call (a resumed human-in-the-loop run). The pending call's
    id is unique to ``paused_trace``, as a model's call ids are."""
    call_id = f"call_{paused_trace:x}_approve"
    paused = agent_spans(paused_trace, "approver", calls=[("get_weather", {"city": "Paris"}), ("approve_booking", {"id": 7})])
    request = paused[1].attributes[-1]
    assert request.key == "gen_ai.output.messages"
    request.value.string_value = request.value.string_value.replace('"call_1"', json.dumps(call_id))
    run, _chat, execute, final = agent_spans(resuming_trace, "approver", calls=[("approve_booking", {"id": 7})])
    for kv in execute.attributes:
        if kv.key == "gen_ai.tool.call.id":
            kv.value.string_value = call_id
    final.attributes.add(key="gen_ai.input.messages").value.string_value = json.dumps(
        [{"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": "approved"}]}]
    )
    return paused[:3], [run, execute, final]


def export_request(spans: Iterable[Any], service: str = "receiver-tests"):
    """Spans in one ``ExportTraceServiceRequest`` (one resource, one scope)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.add(key="service.name").value.string_value = service
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "tests.receiver_harness"
    scope_spans.spans.extend(spans)
    return request


def otlp_json(request: Any) -> bytes:
    """A request as OTLP/JSON: lowerCamelCase keys, hex ids, integer enums, int64 as strings."""
    from google.protobuf.json_format import MessageToDict

    data = MessageToDict(request, use_integers_for_enums=True)

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                    node[key] = base64.b64decode(value).hex()
                else:
                    fix(value)
        elif isinstance(node, list):
            for item in node:
                fix(item)

    fix(data)
    return json.dumps(data).encode()


def expected_results(spans: Iterable[Any]) -> list[dict]:
    """The §10 result objects ``eval`` gives for these protobuf spans (the same engine)."""
    from otel_reliability.engine import Engine, judge_spans
    from otel_reliability.sources import spans_from_request

    return [r.to_json() for r in judge_spans(Engine(), spans_from_request(export_request(spans)))]


def verdict_differences(got: Iterable[Mapping[str, Any]], expected: Iterable[Mapping[str, Any]]) -> str:
    """What differs between two sets of results, run by run (for a failing comparison)."""
    mine = {(r["trace_id"], r["run_span_id"]): r for r in got}
    wanted = {(r["trace_id"], r["run_span_id"]): r for r in expected}
    lines = [f"missing: {wanted[k]['agent']} {k}" for k in sorted(wanted.keys() - mine.keys())]
    lines += [f"not expected: {mine[k]['agent']} {k}" for k in sorted(mine.keys() - wanted.keys())]
    for key in sorted(wanted.keys() & mine.keys()):
        fields = {f: (wanted[key][f], mine[key].get(f)) for f in wanted[key] if wanted[key][f] != mine[key].get(f)}
        if fields:
            lines.append(f"differs: {wanted[key]['agent']} {key} (expected, got): {fields}")
    return "\n".join(lines)


def by_run(results: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Results in a canonical order, for comparisons that ignore ordering, without ``source``:
    only ``eval`` knows the file a run came from (the receiver's results say null)."""
    unsourced = [{key: value for key, value in result.items() if key != "source"} for result in results]
    return sorted(unsourced, key=lambda r: (r["trace_id"], r["run_span_id"]))


def assert_judges_a_new_trace(receiver: Receiver, transport: str = "grpc", agent: str = "still-judging") -> dict:
    """The receiver is up and a fresh valid trace still gets the verdict ``eval`` would give."""
    assert receiver.alive(), receiver.log_text()
    spans = agent_spans(new_trace_id(), agent)
    receiver.send(spans, transport)
    trace_hex = spans[0].trace_id.hex()
    got = receiver.wait_results([trace_hex], 1)
    assert by_run(got) == by_run(expected_results(spans))
    return got[0]


def gzip_bomb(total: int = 1 << 30) -> bytes:
    """A valid gzip stream of ``total`` zero bytes (a multiple of 1 MiB), built without holding
    them: one 1 MiB deflate block ending in a full flush inflates the same from any state, so
    it is repeated; the trailer's CRC is computed chunk by chunk."""
    import zlib

    chunk = bytes(1 << 20)
    assert total % len(chunk) == 0
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(total // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = deflate.flush(zlib.Z_FINISH) + crc.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little")
    return header + block * (total // len(chunk)) + trailer


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set size (Linux ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


# -- the corpus, with fresh trace ids per file ---------------------------------------------


def corpus_files() -> list[Path]:
    from tests.corpus import adapted_files

    return adapted_files()


def remap_corpus(dest: Path, salt: str, frameworks: tuple[str, ...] | None = None) -> list[Path]:
    """Copy every corpus trace file (of ``frameworks``, default every adapted one) under ``dest``
    with fresh ids. Returns the new files.

    Each trace and span id is replaced by one derived from ``salt``, the file and the old id
    (consistently within a file): the agno fixtures all reuse one trace id and the same span
    ids, so without this they would be one trace to a receiver (and to one ``eval`` of them all).
    """
    from tests.corpus import trace_files

    out = []
    sources = corpus_files() if frameworks is None else [p for framework in frameworks for p in trace_files(framework)]
    for source in sources:
        relative = source.relative_to(CORPUS)
        data = json.loads(source.read_text(encoding="utf-8"))

        def new_id(old: str, relative: Path = relative) -> str:
            if not old:
                return old
            return hashlib.sha256(f"{salt}/{relative}/{old}".encode()).hexdigest()[: len(old)]

        for resource_spans in data.get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = new_id(span[key])
                    for link in span.get("links", []):
                        link["traceId"], link["spanId"] = new_id(link["traceId"]), new_id(link["spanId"])
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data), encoding="utf-8")
        out.append(target)
    return out


def eval_json(paths: Sequence[Path]) -> dict:
    """``otel-reliability eval PATH… --format json``, as the CLI prints it."""
    done = subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", "eval", *map(str, paths), "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


# -- a traced Python process: replay OTLP/JSON files through the SDK and a real exporter ----


def _any_value(value: Mapping[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return tuple(_any_value(v) for v in value["arrayValue"].get("values", []))
    return None


def _attributes(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {kv["key"]: v for kv in items if (v := _any_value(kv.get("value", {}))) is not None}


def _replay_files(files: Sequence[Path], processor: Any) -> int:
    """Replay every span of ``files``, with its own ids, through a ``TracerProvider`` whose
    span processor is ``processor``; flushes and shuts the provider down. Returns the span count."""
    import threading

    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.id_generator import IdGenerator
    from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags
    from opentelemetry.trace.status import Status, StatusCode

    class ReplayIds(IdGenerator):
        """Hands out the ids of the span being replayed."""

        def __init__(self) -> None:
            self.local = threading.local()

        def generate_span_id(self) -> int:
            return self.local.span_id

        def generate_trace_id(self) -> int:
            return self.local.trace_id

    ids = ReplayIds()
    provider = TracerProvider(
        id_generator=ids, resource=Resource.create({"service.name": "otel-reliability-python-replay"})
    )
    provider.add_span_processor(processor)
    replayed = 0
    for path in files:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for resource_spans in data.get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                scope = scope_spans.get("scope", {})
                tracer = provider.get_tracer(scope.get("name", "replay"), scope.get("version") or None)
                for s in scope_spans.get("spans", []):
                    trace_id = int(s["traceId"], 16)
                    ids.local.trace_id, ids.local.span_id = trace_id, int(s["spanId"], 16)
                    parent = s.get("parentSpanId") or ""
                    context = (
                        trace.set_span_in_context(NonRecordingSpan(SpanContext(
                            trace_id, int(parent, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
                        )))
                        if parent
                        else None
                    )
                    span = tracer.start_span(
                        s["name"],
                        context=context,
                        kind=SpanKind(max(int(s.get("kind", 1)), 1) - 1),
                        attributes=_attributes(s.get("attributes", [])),
                        start_time=int(s["startTimeUnixNano"]),
                    )
                    for event in s.get("events", []):
                        span.add_event(
                            event.get("name", ""), _attributes(event.get("attributes", [])),
                            timestamp=int(event.get("timeUnixNano", 0)) or None,
                        )
                    status = s.get("status", {})
                    code = int(status.get("code", 0))
                    if code:
                        span.set_status(Status(StatusCode(code), status.get("message") if code == 2 else None))
                    span.end(end_time=int(s["endTimeUnixNano"]))
                    replayed += 1
    provider.force_flush(30_000)
    provider.shutdown()
    return replayed


def replay(exporter_spec: str, endpoint: str, files: Sequence[Path], ca_file: str | None = None) -> int:
    """Replay every span of ``files`` through a ``TracerProvider`` and the real OTLP exporter
    (``grpc`` or ``http``; ``+gzip`` to have it compress its requests)."""
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    exporter_kind, _, compress = exporter_spec.partition("+")
    if compress not in ("", "gzip"):
        raise SystemExit(f"unknown compression {compress!r}: use gzip")
    if exporter_kind == "grpc":
        import grpc
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        compression = grpc.Compression.Gzip if compress else grpc.Compression.NoCompression
        if ca_file:
            inner: SpanExporter = GrpcExporter(
                endpoint=endpoint, credentials=grpc.ssl_channel_credentials(Path(ca_file).read_bytes()),
                compression=compression,
            )
        else:
            inner = GrpcExporter(endpoint=endpoint, insecure=True, compression=compression)
    elif exporter_kind == "http":
        from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        inner = HttpExporter(
            endpoint=endpoint, certificate_file=ca_file or True,
            compression=HttpCompression.Gzip if compress else HttpCompression.NoCompression,
        )
    else:
        raise SystemExit(f"unknown exporter {exporter_kind!r}: use grpc or http")

    class Checked(SpanExporter):
        """The real exporter, with every batch's result counted."""

        def __init__(self) -> None:
            self.exported = 0
            self.failed = 0

        def export(self, spans):
            result = inner.export(spans)
            if result is SpanExportResult.SUCCESS:
                self.exported += len(spans)
            else:
                self.failed += len(spans)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return inner.force_flush(timeout_millis)

    exporter = Checked()
    # its queue holds the whole corpus: the replay loop seldom yields to the worker, and the default
    # 2,048 spans would drop the rest
    processor = BatchSpanProcessor(exporter, max_queue_size=1 << 20, max_export_batch_size=128, schedule_delay_millis=50)
    replayed = _replay_files(files, processor)
    print(json.dumps({"replayed": replayed, "exported": exporter.exported, "failed": exporter.failed}))
    return 0 if exporter.exported == replayed and not exporter.failed else 1


def run_replay(exporter_kind: str, endpoint: str, files: Sequence[Path], ca_file: Path | None = None) -> dict:
    """Run this module as a traced Python process; returns its summary."""
    args = [sys.executable, __file__, exporter_kind, endpoint, *map(str, files)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if ca_file:
        env["REPLAY_CA_FILE"] = str(ca_file)
        # requests lets these override the exporter's certificate_file (it sets session.verify)
        env.pop("REQUESTS_CA_BUNDLE", None)
        env.pop("CURL_CA_BUNDLE", None)
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    assert done.returncode == 0, f"replay through the {exporter_kind} exporter failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def export_split(endpoint: str, files: Sequence[Path], requests: int) -> dict:
    """Send every span of ``files`` through the real OTLP/gRPC exporter in ``requests`` export
    calls, each trace's spans dealt out over the calls one by one, starting at a different
    call per trace, in file order for one trace and reversed for the next: every call
    carries pieces of many traces, and a trace of at least ``requests`` spans arrives in
    that many pieces. Returns counts as ``run_replay`` does."""
    from collections import defaultdict

    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    recorded = InMemorySpanExporter()
    replayed = _replay_files(files, SimpleSpanProcessor(recorded))
    traces: dict[int, list] = defaultdict(list)
    for span in recorded.get_finished_spans():
        traces[span.context.trace_id].append(span)
    calls: list[list] = [[] for _ in range(requests)]
    for n, spans in enumerate(traces.values()):
        for i, span in enumerate(reversed(spans) if n % 2 else spans):
            calls[(n + i) % requests].append(span)
    exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True)
    exported = failed = 0
    try:
        for call in calls:
            if exporter.export(call) is SpanExportResult.SUCCESS:
                exported += len(call)
            else:
                failed += len(call)
    finally:
        exporter.shutdown()
    return {"replayed": replayed, "exported": exported, "failed": failed}


# -- an OpenTelemetry Collector in front of receivers (collector-config/) ---------------------

COLLECTOR_CONFIG = REPO / "collector-config"


def collector_binary() -> Path:
    """Where ``.ci/setup`` builds the Collector of ``collector-config/builder.yaml``: under the
    manifest's hash, so that a changed manifest is never tested with a binary built before it."""
    digest = hashlib.sha256((COLLECTOR_CONFIG / "builder.yaml").read_bytes()).hexdigest()[:16]
    return REPO / ".cache" / "collector" / digest / "otelcol-loadbalancing"


@dataclass
class Collector:
    """One Collector subprocess running ``collector-config/loadbalancing.yaml``."""

    process: subprocess.Popen
    grpc_port: int
    log: Path

    @property
    def grpc_endpoint(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM (the Collector drains its queues first), then wait; returns the exit code."""
        return terminate(self.process, timeout, "the Collector", self.log_text)


def start_collector(workdir: Path, receivers: Sequence[Receiver]) -> Collector:
    """Run the Collector with ``collector-config/loadbalancing.yaml`` as it is, its static
    resolver listing ``receivers`` through ``OTEL_RELIABILITY_RECEIVERS``. A second config
    file, which the Collector merges over the first, moves what would clash on a shared
    machine: its OTLP and health_check ports onto free loopback ports, and its own metrics
    (port 8888) off. Returns once its health check answers 200 (the whole pipeline is up)
    and its OTLP/gRPC port accepts connections."""
    import yaml

    workdir.mkdir(parents=True, exist_ok=True)
    grpc_port, http_port, health_port = free_port(), free_port(), free_port()
    while len({grpc_port, http_port, health_port}) < 3:
        http_port, health_port = free_port(), free_port()
    overrides = workdir / "collector-overrides.yaml"
    overrides.write_text(yaml.safe_dump({
        "receivers": {"otlp": {"protocols": {
            "grpc": {"endpoint": f"127.0.0.1:{grpc_port}"},
            "http": {"endpoint": f"127.0.0.1:{http_port}"},
        }}},
        "extensions": {"health_check": {"endpoint": f"127.0.0.1:{health_port}"}},
        "service": {"telemetry": {"metrics": {"level": "none"}}},
    }), encoding="utf-8")
    env = {**os.environ, "OTEL_RELIABILITY_RECEIVERS": f"[{', '.join(r.grpc_endpoint for r in receivers)}]"}
    log = workdir / "collector.log"
    args = [str(collector_binary()), f"--config=file:{COLLECTOR_CONFIG / 'loadbalancing.yaml'}", f"--config=file:{overrides}"]
    with open(log, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=env)
    collector = Collector(process, grpc_port, log)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the Collector exited with {process.returncode}:\n{collector.log_text()}")
        conn = http.client.HTTPConnection("127.0.0.1", health_port, timeout=1)
        try:
            conn.request("GET", "/")
            if conn.getresponse().status != 200:
                return False
            with socket.create_connection(("127.0.0.1", grpc_port), timeout=1):
                return True
        except OSError:
            return False
        finally:
            conn.close()

    try:
        wait_until(ready, STARTUP_TIMEOUT_S, "the Collector's health check and OTLP/gRPC port")
    except AssertionError:
        process.kill()
        process.wait(10)
        raise
    return collector


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    sys.exit(replay(sys.argv[1], sys.argv[2], [Path(p) for p in sys.argv[3:]], os.environ.get("REPLAY_CA_FILE")))
