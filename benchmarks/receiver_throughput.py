"""How fast ``otel-reliability serve`` judges agent traces pushed over OTLP/gRPC and OTLP/HTTP
protobuf, against the ceiling of a bare gRPC server on the same machine with the same clients.

Run: ``python benchmarks/receiver_throughput.py [--clients N] [--inflight N] [--requests N]
[--traces-per-request N] [--buffered-spans N] [--workers N] [--rounds N] [--durability LIST]``

Traces are agent-shaped, in the OTel GenAI conventions: one ``invoke_agent`` run span, 4
``chat`` spans (the first three request two tool calls each in ``gen_ai.output.messages``)
and the 6 ``execute_tool`` spans they asked for -- 11 spans, 9 attributes a span on average.
Each request carries ``--traces-per-request`` whole traces (50 = 550 spans, about a
``BatchSpanProcessor`` batch). Every client process serializes all its requests before the
clock starts, then sends raw bytes through a generic channel call to
``/opentelemetry.proto.collector.trace.v1.TraceService/Export`` from ``--inflight`` threads.

1. **Ceiling**: a bare gRPC server (a subprocess started here) that parses every request and
   walks every span, attribute and event -- and does nothing else.
2. **Receiver, end to end**: the real ``otel-reliability serve`` (fresh SQLite store,
   ``decision_wait`` 0.2 s, ``workers`` from ``--workers``: one per CPU by default). The
   clock stops when ``agent.reliability.evaluations`` on ``/metrics`` counts every trace
   judged -- so it includes the last ``decision_wait``.
   Evaluated spans/s = spans sent / that time. The same clients then send the same kind of
   requests as OTLP/HTTP protobuf (``POST /v1/traces``, a keep-alive connection per request
   in flight) to a fresh receiver. The ratio of each to the ceiling is the figure of merit
   (goal >= 60%). Both servers' CPU time a span is printed too: it tells work the
   receiver does from time it spends waiting; so do how many of the machine's CPUs each
   server kept busy and how many no process used while the clients sent (idle CPUs while
   the receiver is behind: it waits, on its workers or the disk, rather than lacks CPU),
   printed with the load average at start and end, and as the share of the machine left
   idle while the receiver was behind (goal < 5%: idle CPUs then mean it waits instead of
   working). Bytes written to the intake log per byte of input (goal <= 1.1: each request
   once, whatever ``--workers``) and all the receiver's processes' disk writes per byte of
   input (the results store included) are printed per run. The ceiling is one process and needs
   one CPU, the receiver's workers need them all, so other processes on a shared machine
   lower the ratio. Over gRPC the receiver runs once per
   ``--durability`` setting (default ``none,batch``: the intake log's cost, side by side,
   goal: ``batch`` within 10% of ``none``); OTLP/HTTP, and the figures against the ceiling,
   are those of the last setting listed (by default ``batch``, the receiver's default).
3. **Memory**: a receiver whose ``decision_wait`` never ends takes ``--buffered-spans``
   spans; (peak RSS after - RSS before) / spans buffered is the memory a buffered span costs.

Rounds alternate ceiling and receiver; the best round of each is reported.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
SPANS_PER_TRACE = 11
MAX_MESSAGE = 16 * 1024 * 1024
GOAL = 0.60  # issue 11: evaluated end to end, gRPC and HTTP alike, against the bare gRPC ceiling
DURABLE_GOAL = 0.90  # issue 24: the intake log (durability batch) costs at most 10% of the throughput without it


# -- the trace -----------------------------------------------------------------------------

_TOOLS = [("get_weather", {"city": "Paris"}), ("get_news", {"topic": "weather", "limit": 3})]
_AGENTS = [f"agent-{i}" for i in range(8)]


def _template_spans():
    """The 11 spans of one trace, ids left blank: (span, parent index or None)."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    def span(name: str, attributes: dict, kind: int = Span.SPAN_KIND_INTERNAL) -> Span:
        s = Span(name=name, kind=kind)
        for key, value in attributes.items():
            kv = s.attributes.add(key=key)
            if isinstance(value, int):
                kv.value.int_value = value
            elif isinstance(value, tuple):
                for item in value:
                    kv.value.array_value.values.add(string_value=item)
            else:
                kv.value.string_value = value
        return s

    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather and news for Paris?"}]}])
    out = [(span("invoke_agent forecaster", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "forecaster", "gen_ai.agent.id": "forecaster-1",
        "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
    }), None)]
    for turn in range(4):
        calls = [(f"call_{turn}_{i}", name, args) for i, (name, args) in enumerate(_TOOLS)] if turn < 3 else []
        parts = (
            [{"type": "tool_call", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
            if calls else [{"type": "text", "content": "Sunny, 21 C."}]
        )
        out.append((span("chat gpt-4o-mini", {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.response.finish_reasons": ("tool_call",) if calls else ("stop",),
            "gen_ai.usage.input_tokens": 120 + 40 * turn, "gen_ai.usage.output_tokens": 24,
            "gen_ai.input.messages": user,
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if calls else "stop"}]
            ),
        }, Span.SPAN_KIND_CLIENT), 0))
        for cid, name, args in calls:
            out.append((span(f"execute_tool {name}", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": cid,
                "gen_ai.tool.call.arguments": json.dumps(args), "gen_ai.tool.type": "function",
            }), 0))
    assert len(out) == SPANS_PER_TRACE
    return out


def build_requests(first_trace: int, requests: int, traces_per_request: int) -> list[bytes]:
    """Serialized ``ExportTraceServiceRequest``s of whole traces; trace numbers from ``first_trace``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    template = _template_spans()
    now = time.time_ns()
    out = []
    number = first_trace
    for _ in range(requests):
        request = ExportTraceServiceRequest()
        resource_spans = request.resource_spans.add()
        resource_spans.resource.attributes.add(key="service.name").value.string_value = "benchmark"
        spans = resource_spans.scope_spans.add(scope={"name": "benchmarks.receiver_throughput"}).spans
        for _ in range(traces_per_request):
            trace_id = (0xBE7C << 112 | number).to_bytes(16, "big")
            ids = [((number << 8) | (i + 1)).to_bytes(8, "big") for i in range(SPANS_PER_TRACE)]
            start = now - 10_000_000_000
            for i, (template_span, parent) in enumerate(template):
                s = spans.add()
                s.CopyFrom(template_span)
                s.trace_id, s.span_id = trace_id, ids[i]
                if parent is not None:
                    s.parent_span_id = ids[parent]
                s.start_time_unix_nano = start + i * 1_000_000
                s.end_time_unix_nano = start + (100_000_000 if i == 0 else i * 1_000_000 + 500_000)
            spans[-SPANS_PER_TRACE].attributes[1].value.string_value = _AGENTS[number % len(_AGENTS)]
            number += 1
        out.append(request.SerializeToString())
    return out


# -- clients --------------------------------------------------------------------------------


def _client(target: str, first_trace: int, requests: int, traces_per_request: int, inflight: int, barrier, results,
            transport: str = "grpc"):
    if transport == "http":
        return _http_client(target, first_trace, requests, traces_per_request, inflight, barrier, results)
    import grpc

    payloads = build_requests(first_trace, requests, traces_per_request)
    channel = grpc.insecure_channel(target, options=[("grpc.max_send_message_length", MAX_MESSAGE)])
    grpc.channel_ready_future(channel).result(timeout=30)
    export = channel.unary_unary(EXPORT)
    errors: list[str] = []

    def send(chunk: list[bytes]) -> None:
        for payload in chunk:
            for _attempt in range(100):
                try:
                    export(payload, timeout=60)
                    break
                except grpc.RpcError as exc:  # RESOURCE_EXHAUSTED: back off as an exporter would
                    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        errors.append(f"{exc.code()}: {exc.details()}")
                        return
                    time.sleep(0.05)

    chunks = [payloads[i::inflight] for i in range(inflight)]
    barrier.wait()
    threads = [threading.Thread(target=send, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((time.monotonic(), errors))
    channel.close()


def _http_client(target: str, first_trace: int, requests: int, traces_per_request: int, inflight: int, barrier, results):
    """OTLP/HTTP protobuf, one keep-alive connection per request in flight, as the exporters send it."""
    import http.client

    payloads = build_requests(first_trace, requests, traces_per_request)
    host, port = target.rsplit(":", 1)
    errors: list[str] = []
    headers = {"Content-Type": "application/x-protobuf"}

    def send(chunk: list[bytes]) -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        for payload in chunk:
            for _attempt in range(100):
                connection.request("POST", "/v1/traces", body=payload, headers=headers)
                reply = connection.getresponse()
                reply.read()
                if reply.status == 200:
                    break
                if reply.status not in (429, 503):  # full: back off as an exporter would
                    errors.append(f"HTTP {reply.status}")
                    return
                time.sleep(0.05)
        connection.close()

    chunks = [payloads[i::inflight] for i in range(inflight)]
    barrier.wait()
    threads = [threading.Thread(target=send, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((time.monotonic(), errors))


def run_clients(target: str, args, first_trace: int, transport: str = "grpc") -> tuple[float, float]:
    """Start the clients, let them serialize, release them together; returns (start, last response)."""
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(args.clients + 1)
    results = ctx.Queue()
    per_client = args.requests * args.traces_per_request
    processes = [
        ctx.Process(
            target=_client,
            args=(target, first_trace + c * per_client, args.requests, args.traces_per_request, args.inflight,
                  barrier, results, transport),
        )
        for c in range(args.clients)
    ]
    for process in processes:
        process.start()
    barrier.wait(timeout=300)
    start = time.monotonic()
    ends = []
    for _ in processes:
        end, errors = results.get(timeout=600)
        if errors:
            raise SystemExit(f"client errors: {errors[:3]}")
        ends.append(end)
    for process in processes:
        process.join(30)
    return start, max(ends)


# -- the bare server --------------------------------------------------------------------------


def _bare_server(port_queue) -> None:
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    walked = [0]

    def walk_attributes(attributes) -> int:
        n = 0
        for kv in attributes:
            key, value = kv.key, kv.value
            which = value.WhichOneof("value")
            if which is not None:
                getattr(value, which)
            n += len(key)
        return n

    def export(request: bytes, context) -> bytes:
        parsed = ExportTraceServiceRequest.FromString(request)
        for resource_spans in parsed.resource_spans:
            walk_attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    (span.trace_id, span.span_id, span.parent_span_id, span.name, span.kind,
                     span.start_time_unix_nano, span.end_time_unix_nano, span.status.code, span.status.message)
                    walk_attributes(span.attributes)
                    for event in span.events:
                        walk_attributes(event.attributes)
                    walked[0] += 1
        return b""

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8),
        options=[("grpc.max_receive_message_length", MAX_MESSAGE)],
        maximum_concurrent_rpcs=64,
    )
    handler = grpc.unary_unary_rpc_method_handler(export)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "opentelemetry.proto.collector.trace.v1.TraceService", {"Export": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    port_queue.put(port)
    signal.sigwait({signal.SIGTERM})
    server.stop(0)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process and its live child processes (the workers) have used so far."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # a process that ended while we looked
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def machine_times() -> tuple[int, int]:
    """(all, idle) CPU time of the whole machine so far, in clock ticks (``/proc/stat``)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]  # idle and iowait: no process had the CPU


def idle_cpus(before: tuple[int, int], after: tuple[int, int]) -> float:
    """How many of the machine's CPUs no process used between two ``machine_times``."""
    total, idle = after[0] - before[0], after[1] - before[1]
    return idle / total * (os.cpu_count() or 1) if total else 0.0


def measure_ceiling(args, first_trace: int) -> tuple[float, float]:
    """(spans/s, server CPU microseconds per span)."""
    ctx = mp.get_context("spawn")
    ports = ctx.Queue()
    server = ctx.Process(target=_bare_server, args=(ports,))
    server.start()
    try:
        port = ports.get(timeout=60)
        cpu_before = cpu_seconds(server.pid)
        start, end = run_clients(f"127.0.0.1:{port}", args, first_trace)
        cpu = cpu_seconds(server.pid) - cpu_before
    finally:
        os.kill(server.pid, signal.SIGTERM)
        server.join(10)
        if server.is_alive():
            server.kill()
    spans = total_spans(args)
    return spans / (end - start), cpu / spans * 1e6


# -- the receiver -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Receiver:
    def __init__(self, workdir: Path, decision_wait: float, config: dict | None = None) -> None:
        self.grpc_port, self.http_port = free_port(), free_port()
        args = [
            sys.executable, "-m", "otel_reliability.cli", "serve",
            "--grpc-endpoint", f"127.0.0.1:{self.grpc_port}", "--http-endpoint", f"127.0.0.1:{self.http_port}",
            "--store", str(workdir / f"bench-{self.grpc_port}.db"), "--decision-wait", str(decision_wait),
        ]
        if config:
            path = workdir / f"bench-{self.grpc_port}.yaml"
            path.write_text("".join(f"{k}: {v}\n" for k, v in config.items()))
            args += ["--config", str(path)]
        self.log = open(workdir / f"bench-{self.grpc_port}.log", "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_RELIABILITY_")}
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"receiver exited: {(workdir / f'bench-{self.grpc_port}.log').read_text()}")
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=2).status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("receiver did not start")
            time.sleep(0.05)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def metric(self, name: str) -> float:
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/metrics", timeout=30).read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith(name + "{") or line.startswith(name + " ")
        )

    def rss(self) -> tuple[int, int]:
        """(current, peak) resident set size in bytes."""
        fields = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
        return fields["VmRSS"], fields["VmHWM"]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.log.close()


def wait_for(probe, timeout: float, interval: float = 0.05) -> float:
    """Poll until ``probe()`` is true; returns the time it first was."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(interval)
    return time.monotonic()


def disk_writes(pid: int) -> int:
    """Bytes a process and its live child processes (the workers) sent to the storage layer so far."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if stat.parent.name == str(pid) or fields[1] == str(pid):
                io = dict(line.split(": ") for line in (stat.parent / "io").read_text().splitlines())
                total += int(io["write_bytes"])
        except (OSError, KeyError, ValueError):  # ended while we looked, or not ours to read
            continue
    return total


def input_bytes(args, first_trace: int) -> int:
    """Bytes of request bodies one run sends (every request of a run has the same size)."""
    return len(build_requests(first_trace, 1, args.traces_per_request)[0]) * args.clients * args.requests


def measure_receiver(
    args, workdir: Path, first_trace: int, transport: str = "grpc", durability: str = "batch"
) -> tuple[float, float, float, float, float, float, float]:
    """(evaluated spans/s end to end, intake spans/s, seconds from last response to last verdict,
    receiver CPU microseconds per span, its worker processes included, the machine's CPUs left
    idle meanwhile, bytes appended to its intake log and bytes all its processes wrote to disk,
    each per byte of input), the clients sending over ``transport`` (``grpc`` or ``http``:
    OTLP/HTTP protobuf) to a receiver with ``durability``. Idle CPUs while the receiver is
    behind mean it waits (on its workers, the disk, the clients), not that it lacks CPU."""
    receiver = Receiver(workdir, args.decision_wait, config={"workers": args.workers, "durability": durability})
    traces = args.clients * args.requests * args.traces_per_request
    target = receiver.target if transport == "grpc" else f"127.0.0.1:{receiver.http_port}"
    try:
        cpu_before, machine_before = cpu_seconds(receiver.process.pid), machine_times()
        written_before, logged_before = disk_writes(receiver.process.pid), _logged(receiver)
        start, sent = run_clients(target, args, first_trace, transport)
        idle = idle_cpus(machine_before, machine_times())  # while the clients sent: the tail waits by design
        judged = wait_for(lambda: receiver.metric("agent_reliability_evaluations_total") >= traces, 600)
        cpu = cpu_seconds(receiver.process.pid) - cpu_before
        received = input_bytes(args, first_trace)
        logged = (_logged(receiver) - logged_before) / received
        written = (disk_writes(receiver.process.pid) - written_before) / received
        late = receiver.metric("agent_reliability_evaluations_late_total")
        dropped = receiver.metric("agent_reliability_spans_dropped_total")
        if late or dropped:
            print(f"  (receiver counted {late:.0f} late evaluations, {dropped:.0f} dropped spans)")
    finally:
        receiver.stop()
    spans = total_spans(args)
    return spans / (judged - start), spans / (sent - start), judged - sent, cpu / spans * 1e6, idle, logged, written


def _logged(receiver: Receiver) -> float:
    return receiver.metric("agent_reliability_intake_log_written_bytes_total")


def measure_memory(args, workdir: Path, first_trace: int) -> tuple[float, float, int]:
    """(peak bytes per buffered span, steady bytes per buffered span, spans buffered)."""
    receiver = Receiver(workdir, decision_wait=3600, config={"max_buffered_spans": 10 * args.buffered_spans})
    try:
        import grpc

        with grpc.insecure_channel(receiver.target) as channel:
            export = channel.unary_unary(EXPORT)
            export(build_requests(first_trace, 1, 1)[0], timeout=30)  # warm every code path once
            warm = SPANS_PER_TRACE
            wait_for(lambda: receiver.metric("agent_reliability_spans_received_total") >= warm, 30)
            before, _ = receiver.rss()
            per_request = args.traces_per_request
            requests = max(1, args.buffered_spans // (per_request * SPANS_PER_TRACE))
            for start in range(0, requests, 50):  # build in slices: the client's memory is not the point
                first = first_trace + 1 + start * per_request
                for payload in build_requests(first, min(50, requests - start), per_request):
                    export(payload, timeout=60)
        buffered = requests * per_request * SPANS_PER_TRACE
        wait_for(lambda: receiver.metric("agent_reliability_spans_received_total") >= warm + buffered, 60)
        if receiver.metric("agent_reliability_evaluations_total"):
            raise SystemExit("memory run: traces were judged; decision_wait did not hold them")
        after, peak = receiver.rss()
    finally:
        receiver.stop()
    return (peak - before) / buffered, (after - before) / buffered, buffered


def _cores(cpu_us_a_span: float, spans_a_second: float) -> str:
    """How many CPUs a server kept busy on average: below the machine's count while it
    waited, or while other processes on a shared machine had the CPUs."""
    return f"{cpu_us_a_span * spans_a_second / 1e6:.2f} of {os.cpu_count()} CPUs"


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def total_spans(args) -> int:
    return args.clients * args.requests * args.traces_per_request * SPANS_PER_TRACE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=3, help="client processes (default 3)")
    parser.add_argument("--inflight", type=int, default=2, help="concurrent requests per client (default 2)")
    parser.add_argument("--requests", type=int, default=120, help="requests per client per run (default 120)")
    parser.add_argument("--traces-per-request", type=int, default=50, help="11-span traces per request (default 50)")
    parser.add_argument("--decision-wait", type=float, default=0.2, help="the receiver's decision_wait (default 0.2)")
    parser.add_argument("--buffered-spans", type=int, default=220_000, help="spans held for the memory figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count(),
                        help="the receiver's workers setting (default: the CPU count)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of ceiling + receiver (default 2)")
    parser.add_argument("--durability", default="none,batch",
                        help="comma-separated durability settings the gRPC receiver runs with, each in every round "
                        "(default none,batch)")
    args = parser.parse_args(argv)
    durabilities = [d.strip() for d in args.durability.split(",") if d.strip()]
    if not durabilities or any(d not in ("none", "batch", "always") for d in durabilities):
        parser.error("--durability: a comma-separated list of none, batch, always")

    import grpc
    import google.protobuf

    print(
        f"receiver throughput: {platform.python_implementation()} {platform.python_version()}, "
        f"grpcio {grpc.__version__}, protobuf {google.protobuf.__version__}, {os.cpu_count()} CPUs"
    )
    print(
        f"load: {args.clients} client processes x {args.inflight} in flight, {args.requests} requests each of "
        f"{args.traces_per_request} traces x {SPANS_PER_TRACE} spans = {total_spans(args):,} spans per run"
    )
    print(f"{load_average()} at start: what other processes run takes CPUs from the servers")
    ceilings, ends, intakes, tails, ceiling_cpus, receiver_cpus = [], [], [], [], [], []
    http_ends, http_cpus = [], []
    by_durability: dict[str, list[float]] = {d: [] for d in durabilities}
    idles: dict[str, list[float]] = {d: [] for d in durabilities}
    logs: dict[str, list[float]] = {d: [] for d in durabilities}
    per_run = args.clients * args.requests * args.traces_per_request
    runs_a_round = 2 + len(durabilities)  # ceiling, HTTP and one gRPC run per durability: fresh trace ids each
    with tempfile.TemporaryDirectory(prefix="receiver-bench-") as tmp:
        workdir = Path(tmp)
        for round_ in range(args.rounds):
            first = 1 + runs_a_round * round_ * per_run
            ceiling, ceiling_cpu = measure_ceiling(args, first_trace=first)
            for n, durability in enumerate(durabilities):
                end_to_end, intake, tail, receiver_cpu, idle, logged, written = measure_receiver(
                    args, workdir, first_trace=first + (1 + n) * per_run, durability=durability
                )
                by_durability[durability].append(end_to_end)
                print(
                    f"  round {round_ + 1}, durability {durability}: receiver {end_to_end:,.0f} evaluated spans/s "
                    f"end to end ({receiver_cpu:.1f} us CPU a span, {_cores(receiver_cpu, end_to_end)} busy, "
                    f"{idle:.2f} idle while sending ({idle / (os.cpu_count() or 1):.0%} of the machine); intake "
                    f"{intake:,.0f} spans/s, last verdict {tail:.2f} s after the last response; per input byte "
                    f"{logged:.2f} B to the intake log, {written:.2f} B to disk by all its processes)"
                )
                idles[durability].append(idle / (os.cpu_count() or 1))
                logs[durability].append(logged)
            http_end, _, _, http_cpu, http_idle, _, _ = measure_receiver(
                args, workdir, first_trace=first + (1 + len(durabilities)) * per_run, transport="http",
                durability=durabilities[-1],
            )
            http_ends.append(http_end)
            http_cpus.append(http_cpu)
            print(
                f"  round {round_ + 1}: bare gRPC ceiling {ceiling:,.0f} spans/s ({ceiling_cpu:.1f} us CPU a span, "
                f"{_cores(ceiling_cpu, ceiling)} busy); "
                f"over OTLP/HTTP protobuf (durability {durabilities[-1]}) {http_end:,.0f} evaluated spans/s "
                f"({http_cpu:.1f} us CPU a span, {_cores(http_cpu, http_end)} busy, {http_idle:.2f} idle while sending)"
            )
            ceiling_cpus.append(ceiling_cpu)
            receiver_cpus.append(receiver_cpu)  # of the last durability listed
            ceilings.append(ceiling)
            ends.append(end_to_end)
            intakes.append(intake)
            tails.append(tail)
        peak, steady, buffered = measure_memory(args, workdir, first_trace=1 + runs_a_round * args.rounds * per_run)

    best_ceiling, best_end = max(ceilings), max(ends)
    ratio = best_end / best_ceiling
    print(f"bare gRPC server (parse + walk every span and attribute): {best_ceiling:,.0f} spans/s")
    print(f"otel-reliability serve, evaluated end to end:           {best_end:,.0f} spans/s "
          f"({best_end / SPANS_PER_TRACE:,.0f} traces/s; intake alone {max(intakes):,.0f} spans/s)")
    http_ratio = max(http_ends) / best_ceiling
    print(f"otel-reliability serve over OTLP/HTTP protobuf:         {max(http_ends):,.0f} spans/s")
    print(f"ratio: gRPC {ratio:.0%}, HTTP {http_ratio:.0%} of the ceiling (goal >= {GOAL:.0%} each): "
          f"{'met' if min(ratio, http_ratio) >= GOAL else 'NOT met'}")
    print(f"server CPU a span (median of rounds): ceiling {statistics.median(ceiling_cpus):.1f} us, "
          f"receiver {statistics.median(receiver_cpus):.1f} us (gRPC), {statistics.median(http_cpus):.1f} us (HTTP)")
    side_by_side = ", ".join(f"{d} {max(by_durability[d]):,.0f}" for d in durabilities)
    print(f"durability, gRPC evaluated end to end (best round): {side_by_side} spans/s", end="")
    if "none" in by_durability and "batch" in by_durability:
        kept = max(by_durability["batch"]) / max(by_durability["none"])
        print(f"; batch is {kept:.0%} of none (goal >= {DURABLE_GOAL:.0%}): {'met' if kept >= DURABLE_GOAL else 'NOT met'}")
    else:
        print()
    for durability in durabilities:
        if durability != "none":
            worst = max(logs[durability])
            print(f"durability {durability}: intake log bytes per input byte {worst:.2f} at most "
                  f"(goal <= 1.1: {'met' if worst <= 1.1 else 'NOT met'})", end="; ")
        least = min(idles[durability])
        print(f"durability {durability}: machine idle while sending {least:.1%} in the best round "
              f"(goal < 5%: {'met' if least < 0.05 else 'NOT met'})")
    print(f"{load_average()} at the end")
    print(f"memory: {peak:,.0f} B per buffered span at peak RSS ({steady:,.0f} B steady), "
          f"{buffered:,} spans buffered ({buffered // SPANS_PER_TRACE:,} traces)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
