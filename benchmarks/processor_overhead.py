"""What ``ReliabilitySpanProcessor`` costs the application thread.

Run: ``python benchmarks/processor_overhead.py [--traces N] [--rounds R]``

Each trace is a typical agent run, built by hand with the real OpenTelemetry SDK tracer
and the GenAI semantic conventions: one ``invoke_agent`` run span holding 4 ``chat``
spans (the first three request two tool calls each in ``gen_ai.output.messages``) and
the 6 ``execute_tool`` spans they asked for -- 11 spans. Spans go to an exporter that
discards them, so the SDK and the processors are all that is measured.

Configurations, each on its own ``TracerProvider``:

* ref -- no span processor (the SDK's own cost, for scale);
* A -- ``BatchSpanProcessor(exporter)``, the usual production setup;
* B -- ``ReliabilitySpanProcessor(BatchSpanProcessor(exporter), store=None)``.

Rounds interleave the configurations (the order alternates every round) and the
median round is reported. Per trace: the app thread's CPU time
(``time.thread_time_ns``) and the wall time of the loop that emits the traces; for B
also the wall time including ``drain()`` (every run judged and forwarded) and the CPU
time of the processor's worker thread. The budget (SPEC §11) is B/A <= 1.10 on the app
thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Tracer
from opentelemetry.version import __version__ as OTEL_SDK_VERSION

from otel_reliability import ReliabilitySpanProcessor

BUDGET = 1.10
TOOLS_PER_TURN = 2
TOOL_TURNS = 3  # 3 turns x 2 calls = 6 execute_tool spans; a 4th chat gives the answer


class DiscardingExporter(SpanExporter):
    """Accepts every batch and keeps nothing."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


# -- the trace -----------------------------------------------------------------------

_TOOLS = [("get_weather", {"city": "Paris"}), ("get_news", {"topic": "weather", "limit": 3})]
_TOOL_CALLS = [
    [
        (f"call_{turn}_{i}", name, args)
        for i, (name, args) in enumerate(_TOOLS[:TOOLS_PER_TURN])
    ]
    for turn in range(TOOL_TURNS)
]
# Attribute values an instrumentation would have serialised; identical for every configuration.
_OUTPUT_MESSAGES = [
    json.dumps(
        [
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": cid, "name": name, "arguments": args} for cid, name, args in calls],
                "finish_reason": "tool_call",
            }
        ]
    )
    for calls in _TOOL_CALLS
] + [json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Sunny, 21 °C."}], "finish_reason": "stop"}])]
_INPUT_MESSAGES = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather and news for Paris?"}]}])
_ARGUMENTS = {cid: json.dumps(args) for calls in _TOOL_CALLS for cid, _, args in calls}

_RUN_ATTRIBUTES = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "forecaster",
    "gen_ai.agent.id": "forecaster-1",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o-mini",
}


def _chat_attributes(turn: int) -> dict:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.response.finish_reasons": ("tool_call",) if turn < TOOL_TURNS else ("stop",),
        "gen_ai.usage.input_tokens": 120 + 40 * turn,
        "gen_ai.usage.output_tokens": 24,
        "gen_ai.input.messages": _INPUT_MESSAGES,
        "gen_ai.output.messages": _OUTPUT_MESSAGES[turn],
    }


_CHAT_ATTRIBUTES = [_chat_attributes(turn) for turn in range(TOOL_TURNS + 1)]


def emit_trace(tracer: Tracer) -> None:
    """One agent run: 1 invoke_agent + 4 chat + 6 execute_tool spans."""
    with tracer.start_as_current_span("invoke_agent forecaster", attributes=_RUN_ATTRIBUTES):
        for turn in range(TOOL_TURNS + 1):
            with tracer.start_as_current_span(
                "chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=_CHAT_ATTRIBUTES[turn]
            ):
                pass
            if turn == TOOL_TURNS:
                break
            for cid, name, _ in _TOOL_CALLS[turn]:
                with tracer.start_as_current_span(
                    f"execute_tool {name}",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": name,
                        "gen_ai.tool.call.id": cid,
                        "gen_ai.tool.call.arguments": _ARGUMENTS[cid],
                        "gen_ai.tool.type": "function",
                    },
                ):
                    pass


SPANS_PER_TRACE = 1 + (TOOL_TURNS + 1) + TOOL_TURNS * TOOLS_PER_TURN  # 11


# -- configurations ---------------------------------------------------------------------


@dataclass
class Config:
    key: str
    label: str
    provider: TracerProvider
    exporter: DiscardingExporter
    reliability: ReliabilitySpanProcessor | None = None
    app_cpu: list[float] = field(default_factory=list)  # ns per trace, one entry per round
    app_wall: list[float] = field(default_factory=list)
    total_wall: list[float] = field(default_factory=list)  # loop + drain
    worker_cpu: list[float] = field(default_factory=list)

    @property
    def tracer(self) -> Tracer:
        return self.provider.get_tracer("benchmarks.processor_overhead")


def _batch(exporter: DiscardingExporter) -> BatchSpanProcessor:
    # A queue large enough that no round drops spans (drops would flatter either side).
    return BatchSpanProcessor(exporter, max_queue_size=1 << 17, max_export_batch_size=512)


def make_configs() -> list[Config]:
    ref = Config("ref", "no span processor (SDK only)", TracerProvider(), DiscardingExporter())
    a_exporter = DiscardingExporter()
    a = Config("A", "BatchSpanProcessor", TracerProvider(), a_exporter)
    a.provider.add_span_processor(_batch(a_exporter))
    b_exporter = DiscardingExporter()
    reliability = ReliabilitySpanProcessor(_batch(b_exporter), store=None)
    b = Config("B", "Reliability(BatchSpanProcessor)", TracerProvider(), b_exporter, reliability)
    b.provider.add_span_processor(reliability)
    return [ref, a, b]


def _thread_cpu_clock(thread) -> Callable[[], int] | None:
    """A CPU clock for another thread (Linux/BSD), or None where unsupported."""
    try:
        clock_id = time.pthread_getcpuclockid(thread.ident)
        time.clock_gettime_ns(clock_id)
    except (AttributeError, OSError, TypeError):
        return None
    return lambda: time.clock_gettime_ns(clock_id)


def measure(config: Config, traces: int) -> None:
    tracer = config.tracer
    worker_clock = None
    if config.reliability is not None:
        worker_clock = _thread_cpu_clock(config.reliability._worker)  # the worker thread, for its CPU cost
    gc.collect()
    worker_start = worker_clock() if worker_clock else 0
    cpu_start = time.thread_time_ns()
    wall_start = time.perf_counter_ns()
    for _ in range(traces):
        emit_trace(tracer)
    wall_loop = time.perf_counter_ns() - wall_start
    cpu_loop = time.thread_time_ns() - cpu_start
    if config.reliability is not None:
        assert config.reliability.drain(60), "the reliability worker did not catch up within 60 s"
    wall_total = time.perf_counter_ns() - wall_start
    if worker_clock:
        config.worker_cpu.append((worker_clock() - worker_start) / traces)
    config.app_cpu.append(cpu_loop / traces)
    config.app_wall.append(wall_loop / traces)
    config.total_wall.append(wall_total / traces)
    config.provider.force_flush()  # let the batch worker finish before the next measurement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=2000, help="traces per configuration per round")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds (plus one warm-up)")
    args = parser.parse_args(argv)

    configs = make_configs()
    by_key = {c.key: c for c in configs}
    started = time.perf_counter()
    for config in configs:  # warm-up: imports, caches, first-trace allocations
        measure(config, max(200, args.traces // 10))
    for config in configs:
        config.app_cpu.clear(), config.app_wall.clear(), config.total_wall.clear(), config.worker_cpu.clear()
    for round_no in range(args.rounds):
        order = configs if round_no % 2 == 0 else list(reversed(configs))
        for config in order:
            measure(config, args.traces)
    elapsed = time.perf_counter() - started

    b = by_key["B"]
    expected_runs = (1 + args.rounds) * 0 + b.reliability.stats.runs_judged  # reported below
    judged = b.reliability.stats.runs_judged
    emitted = max(200, args.traces // 10) + args.rounds * args.traces
    spans_out = {c.key: c.exporter.spans for c in configs if c.key != "ref"}
    for config in configs:
        config.provider.shutdown()

    med = {c.key: {k: statistics.median(getattr(c, k)) / 1000 for k in ("app_cpu", "app_wall", "total_wall")} for c in configs}
    worker = statistics.median(b.worker_cpu) / 1000 if b.worker_cpu else None
    a = med["A"]
    ratios_cpu = [bc / ac for bc, ac in zip(b.app_cpu, by_key["A"].app_cpu)]
    ratios_wall = [bw / aw for bw, aw in zip(b.app_wall, by_key["A"].app_wall)]

    print(f"ReliabilitySpanProcessor overhead: {SPANS_PER_TRACE}-span agent trace, "
          f"{args.rounds} rounds x {args.traces} traces per configuration (median round)")
    print(f"Python {platform.python_version()}, opentelemetry-sdk {OTEL_SDK_VERSION}, {platform.machine()}")
    print()
    header = f"{'config':<38} {'app CPU us/trace':>17} {'app wall us/trace':>18} {'x A (CPU)':>10} {'x A (wall)':>11}"
    print(header)
    print("-" * len(header))
    for config in configs:
        m = med[config.key]
        print(
            f"{config.key + '  ' + config.label:<38} {m['app_cpu']:>17.1f} {m['app_wall']:>18.1f} "
            f"{m['app_cpu'] / a['app_cpu']:>10.3f} {m['app_wall'] / a['app_wall']:>11.3f}"
        )
    print()
    print(f"B incl. drain (every run judged + forwarded), wall us/trace: {med['B']['total_wall']:.1f} "
          f"(x A app wall {med['B']['total_wall'] / a['app_wall']:.3f})")
    if worker is not None:
        print(f"B worker thread CPU us/trace (off the app thread):          {worker:.1f}")
    print(f"B app-thread overhead vs A: {med['B']['app_cpu'] - a['app_cpu']:+.1f} us CPU, "
          f"{med['B']['app_wall'] - a['app_wall']:+.1f} us wall per trace "
          f"({(med['B']['app_cpu'] - a['app_cpu']) / SPANS_PER_TRACE:+.2f} us CPU per span)")
    print(f"per-round B/A app CPU:  {' '.join(f'{r:.3f}' for r in ratios_cpu)}")
    print(f"per-round B/A app wall: {' '.join(f'{r:.3f}' for r in ratios_wall)}")
    print(f"runs judged by B: {judged}/{emitted}; spans exported A={spans_out['A']} B={spans_out['B']} "
          f"(expected {emitted * SPANS_PER_TRACE} each); dropped by B: {b.reliability.stats.dropped or 'none'}")
    print()
    ratio = med["B"]["app_cpu"] / a["app_cpu"]
    wall_ratio = med["B"]["app_wall"] / a["app_wall"]
    verdict = "within" if ratio <= BUDGET else "OVER"
    print(f"RATIO B/A (app-thread CPU) = {ratio:.3f}  (wall {wall_ratio:.3f})  "
          f"target <= {BUDGET:.2f}: {verdict} budget")
    print(f"total benchmark time {elapsed:.1f} s")
    del expected_runs
    return 0 if judged == emitted and spans_out["A"] == spans_out["B"] == emitted * SPANS_PER_TRACE else 1


if __name__ == "__main__":
    sys.exit(main())
