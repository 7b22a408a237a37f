"""Verdicts and the engine's own health as OpenTelemetry metrics (SPEC §6, a contract).

``agent.reliability.tool_calls`` counts every attempt of a run's chain exactly once, by
its outcome (``ok``, ``error``, ``refused``, ``pending``), so a tool's outcomes add up to
its calls. ``agent.reliability.tool_calls.unexpected`` counts, by agent and tool, the
attempts no expectation allowed: every attempt, whatever its outcome, of a tool the
verdict names in ``failed_tool_calls`` (strict) or ``additional_tool_calls`` (lenient) —
that is, a tool left out of an expectation's ``expected_tool_calls``. Each is labelled
with the agent that made it (a team member's call with the member), so for every agent
and tool the unexpected count is at most the calls. It can exceed the length of those
lists: they name a tool that was only ever refused once per run, however many times it
was asked for, while here each refused attempt counts. A run judged without
``expected_tool_calls`` has no unexpected calls.

``agent.reliability.trajectory.f1`` records, by agent, the partial-credit F1 of each run
judged with ``expected_tool_calls``; ``agent.reliability.sampling`` counts, by expectation
and ``reliability.sampling.decision`` (``sampled``|``skipped``), the runs an expectation
with a ``sample_rate`` below 1 selected (runs of other expectations are not counted).

``agent.reliability.evaluations`` also carries ``gen_ai.agent.version``, the version of the
agent that ran (``RunResult.agent_version``), on the verdicts whose spans name one (the key is
absent where none does), so that a version's pass rate can be set against another's.

Agent, tool, expectation names and agent versions come from spans, so each of those label keys
passes at most ``max_label_values`` distinct values through; later ones are recorded as
``_other``.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Mapping

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

from otel_reliability.results import RunResult
from otel_reliability.session_results import SessionResult

OTHER = "_other"
SCORE_BUCKETS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

AGENT = "gen_ai.agent.name"
TOOL = "gen_ai.tool.name"
STATUS = "reliability.status"
EXPECTATION = "reliability.expectation"
AGENT_VERSION = "gen_ai.agent.version"
OUTCOME = "reliability.outcome"
REASON = "reason"
DECISION = "reliability.sampling.decision"  # sampled | skipped
SINK = "reliability.sink"


class CappedLabel:
    """One label key's values: the first ``limit`` distinct ones pass, later ones become ``_other``."""

    __slots__ = ("_limit", "_lock", "_seen")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value in self._seen:
            return value
        if len(self._seen) >= self._limit:
            return OTHER
        with self._lock:
            if len(self._seen) < self._limit:
                self._seen.add(value)
                return value
        return OTHER


class ReliabilityMetrics:
    """The reliability instruments on one meter.

    >>> from opentelemetry.sdk.metrics import MeterProvider
    >>> from otel_reliability.model import Verdict
    >>> m = ReliabilityMetrics(MeterProvider(), max_label_values=10)
    >>> m.record(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0))
    """

    def __init__(self, meter_provider: MeterProvider | None = None, *, max_label_values: int = 100) -> None:
        if max_label_values < 1:
            raise ValueError(f"max_label_values must be at least 1, got {max_label_values}")
        meter = metrics.get_meter("otel_reliability", meter_provider=meter_provider)
        self._agent = CappedLabel(max_label_values)
        self._tool = CappedLabel(max_label_values)
        self._expectation = CappedLabel(max_label_values)
        self._version = CappedLabel(max_label_values)
        self._buffered: Callable[[], int] | None = None
        self._pending: Callable[[], int] | None = None
        self._buffered_bytes: Callable[[], int] | None = None
        self._held: Callable[[], Mapping[str, int]] | None = None
        self._unmatched: Callable[[], Mapping[str, bool]] | None = None
        self._evaluations = meter.create_counter(
            "agent.reliability.evaluations", unit="{evaluation}", description="Runs evaluated, by verdict"
        )
        self._tool_calls = meter.create_counter(
            "agent.reliability.tool_calls", unit="{call}", description="Tool-call attempts, by outcome"
        )
        self._unexpected = meter.create_counter(
            "agent.reliability.tool_calls.unexpected",
            unit="{call}",
            description="Tool-call attempts of tools the run's expectation did not allow",
        )
        self._trajectory_f1 = meter.create_histogram(
            "agent.reliability.trajectory.f1",
            unit="1",
            description="Partial credit: F1 of the clean calls' tool names against expected_tool_calls",
            explicit_bucket_boundaries_advisory=SCORE_BUCKETS,
        )
        self._sampling = meter.create_counter(
            "agent.reliability.sampling",
            unit="{run}",
            description="Runs a sampled expectation judged or skipped, by expectation and decision",
        )
        self._score = meter.create_histogram(
            "agent.reliability.score",
            unit="1",
            description="Verdict score: the fraction of checks that passed",
            explicit_bucket_boundaries_advisory=SCORE_BUCKETS,
        )
        meter.create_observable_gauge(
            "agent.reliability.traces.buffered",
            callbacks=[self._observe_buffered],
            unit="{trace}",
            description="Traces buffered and not yet evaluated",
        )
        meter.create_observable_gauge(
            "agent.reliability.traces.pending",
            callbacks=[self._observe_pending],
            unit="{trace}",
            description="Traces holding spans no published verdict has judged yet: at 0, every verdict stands",
        )
        meter.create_observable_gauge(
            "agent.reliability.buffer.size",
            callbacks=[self._observe_buffered_bytes],
            unit="By",
            description="Estimated bytes buffered: traces and paused runs (bounded by max_buffered_bytes)",
        )
        meter.create_observable_gauge(
            "agent.reliability.verdicts.held",
            callbacks=[self._observe_held],
            unit="{verdict}",
            description="Verdicts held for a sink that could not take them yet (its store unreachable or full), "
            "retried with backoff; their traces' intake log segments are kept meanwhile",
        )
        meter.create_observable_gauge(
            "agent.reliability.expectations.unmatched",
            callbacks=[self._observe_unmatched],
            unit="{expectation}",
            description="1 for each loaded expectation that has judged no run (or session) since it was loaded, "
            "0 once it has: a match that selects nothing (a typo) leaves its runs to the default expectation",
        )
        self._traces_dropped = meter.create_counter(
            "agent.reliability.traces.dropped",
            unit="{trace}",
            description="Traces that left the buffer, by reason: ttl_expired_unjudged, max_traces and max_bytes "
            "lost their verdict; late_window_expired, max_traces_judged and max_bytes_judged had one; "
            "arrived_after_eviction held what arrived of an evicted trace",
        )
        self._paused_dropped = meter.create_counter(
            "agent.reliability.paused_runs.dropped",
            unit="{run}",
            description="Paused runs let go before a run resumed them, by reason",
        )
        self._refusals = meter.create_counter(
            "agent.reliability.refusals",
            unit="{request}",
            description="Requests refused with a retry delay, by reason (overloaded: max_buffered_spans; "
            "soft_byte_limit: the byte budget's soft limit; concurrent_exports: too many gRPC calls at once; "
            "worker_down: a worker did not answer)",
        )
        self._late = meter.create_counter(
            "agent.reliability.evaluations.late",
            unit="{evaluation}",
            description="Re-evaluations caused by spans that arrived after their trace was evaluated",
        )
        self._dropped = meter.create_counter(
            "agent.reliability.spans.dropped", unit="{span}", description="Spans not accepted, by reason"
        )
        self._logs_dropped = meter.create_counter(
            "agent.reliability.log_records.dropped", unit="{log_record}", description="Log records not accepted, by reason"
        )
        self._sink_failures = meter.create_counter(
            "agent.reliability.sink.failures", unit="{failure}", description="Times a verdict sink raised, by sink"
        )
        self._evaluations_failed = meter.create_counter(
            "agent.reliability.evaluations.failed",
            unit="{failure}",
            description="Runs (or whole traces) the engine raised on while judging, given NOT_EVALUATED verdicts, "
            "by reason (recursion, encoding, internal_error)",
        )
        self._text_repaired = meter.create_counter(
            "agent.reliability.text.repaired",
            unit="{character}",
            description="Characters of accepted OTLP/JSON that were not valid Unicode, replaced by U+FFFD, by reason "
            "(lone_surrogate)",
        )
        self._verdicts_dropped = meter.create_counter(
            "agent.reliability.verdicts.dropped",
            unit="{verdict}",
            description="Verdicts a sink refused for what they hold, by sink and reason (unencodable); "
            "the other verdicts of the same write were written",
        )
        self._sink_retries = meter.create_counter(
            "agent.reliability.sink.retries",
            unit="{retry}",
            description="Held verdicts offered again to a sink that still could not take them, by sink and reason "
            "(unreachable, disk_full, locked, sink_error)",
        )
        self._session_evaluations = meter.create_counter(
            "agent.reliability.session.evaluations",
            unit="{evaluation}",
            description="Sessions (conversations of runs) evaluated as one chain, by verdict",
        )
        self._sessions_dropped = meter.create_counter(
            "agent.reliability.sessions.dropped", unit="{session}", description="Sessions left unjudged, by reason"
        )
        self._reloads = meter.create_counter(
            "agent.reliability.expectations.reloads",
            unit="{reload}",
            description="Expectation reloads (SIGHUP, POST /api/v1/reload, reload_expectations), by outcome: "
            "reloaded, or refused (a file could not be used; the old set stayed in force)",
        )
        self._open_forgotten = meter.create_counter(
            "agent.reliability.open_spans.forgotten",
            unit="{span}",
            description="Started spans the span processor stopped tracking before they ended (over its bound, or too old)",
        )

    def record(self, result: RunResult) -> None:
        """Count one verdict: the evaluation, its score, and its tool calls."""
        self.record_many([result])

    def record_many(self, results: Iterable[RunResult]) -> None:
        """Count many verdicts with one instrument call per label set: the SDK's ``add`` is the cost."""
        # Plain dicts, not Counters: a Counter costs more to make than a handful of runs to count.
        evaluations: dict[tuple[str, str, str, str | None], int] = {}
        calls: dict[tuple[str, str, str], int] = {}
        unexpected: dict[tuple[str, str], int] = {}
        sampling: dict[tuple[str, str], int] = {}
        for result in results:
            verdict = result.verdict
            agent = self._agent(result.agent)
            version = None if result.agent_version is None else self._version(result.agent_version)
            run_key = (agent, verdict.eval_status, self._expectation(result.expectation), version)
            evaluations[run_key] = evaluations.get(run_key, 0) + 1
            self._score.record(verdict.score, {AGENT: agent})
            if verdict.trajectory is not None and verdict.trajectory.f1 is not None:
                self._trajectory_f1.record(verdict.trajectory.f1, {AGENT: agent})
            if result.sampling is not None:
                pair = (self._expectation(result.sampling.expectation), result.sampling.decision)
                sampling[pair] = sampling.get(pair, 0) + 1
            not_allowed = (
                set(verdict.failed_tool_calls).union(verdict.additional_tool_calls)
                if verdict.failed_tool_calls or verdict.additional_tool_calls
                else ()
            )
            for attempt in verdict.chain:
                tool = attempt.tool
                who = attempt.agent or result.agent
                key = (who, tool, attempt.outcome)
                calls[key] = calls.get(key, 0) + 1
                if tool in not_allowed:
                    pair = (who, tool)
                    unexpected[pair] = unexpected.get(pair, 0) + 1
        for (agent, status, expectation, version), count in evaluations.items():
            labels = {AGENT: agent, STATUS: status, EXPECTATION: expectation}
            if version is not None:
                labels[AGENT_VERSION] = version
            self._evaluations.add(count, labels)
        for (who, tool, outcome), count in calls.items():
            self._tool_calls.add(count, {AGENT: self._agent(who), TOOL: self._tool(tool), OUTCOME: outcome})
        for (who, tool), count in unexpected.items():
            self._unexpected.add(count, {AGENT: self._agent(who), TOOL: self._tool(tool)})
        for (expectation, decision), count in sampling.items():
            self._sampling.add(count, {EXPECTATION: expectation, DECISION: decision})

    def record_sessions(self, results: Iterable[SessionResult]) -> None:
        """Count session verdicts by the first run's agent, the status and the expectation."""
        for result in results:
            self._session_evaluations.add(1, {
                AGENT: self._agent(result.agent), STATUS: result.verdict.eval_status,
                EXPECTATION: self._expectation(result.expectation),
            })

    def sessions_dropped(self, count: int, reason: str) -> None:
        """Count sessions that left unjudged (``engine.sessions``: ``max_sessions``, ``max_runs_per_session``, ``closed``)."""
        self._sessions_dropped.add(count, {REASON: reason})

    def register_buffered(self, callback: Callable[[], int]) -> None:
        """Feed ``agent.reliability.traces.buffered`` from ``callback`` (replaces an earlier one)."""
        self._buffered = callback

    def register_pending(self, callback: Callable[[], int]) -> None:
        """Feed ``agent.reliability.traces.pending`` from ``callback`` (not reported until then)."""
        self._pending = callback

    def register_buffered_bytes(self, callback: Callable[[], int]) -> None:
        """Feed ``agent.reliability.buffer.size`` from ``callback`` (not reported until then)."""
        self._buffered_bytes = callback

    def traces_dropped(self, count: int, reason: str) -> None:
        """Count traces that left the buffer; ``reason`` is one of ``engine.buffer``'s words."""
        self._traces_dropped.add(count, {REASON: reason})

    def paused_runs_dropped(self, count: int, reason: str) -> None:
        """Count paused runs let go before a run resumed them."""
        self._paused_dropped.add(count, {REASON: reason})

    def expectations_reloaded(self, outcome: str) -> None:
        """Count one reload of the expectations, ``reloaded`` or ``refused``."""
        self._reloads.add(1, {"reliability.outcome": outcome})

    def refused(self, reason: str, count: int = 1) -> None:
        """Count requests refused with a retry delay (their spans count in ``spans_dropped`` too)."""
        self._refusals.add(count, {REASON: reason})

    def late_evaluation(self, count: int = 1) -> None:
        """Count re-evaluations caused by a span arriving after its trace was evaluated."""
        self._late.add(count)

    def spans_dropped(self, count: int, reason: str) -> None:
        """Count spans not accepted; ``reason`` is one of the caller's fixed words, e.g. ``"buffer_full"``."""
        self._dropped.add(count, {REASON: reason})

    def log_records_dropped(self, count: int, reason: str) -> None:
        """Count log records not accepted, with the reasons ``spans_dropped`` uses."""
        self._logs_dropped.add(count, {REASON: reason})

    def open_spans_forgotten(self, count: int) -> None:
        """Count started spans no longer tracked as open (the span processor's bound on spans that never end)."""
        self._open_forgotten.add(count)

    def evaluation_failed(self, reason: str) -> None:
        """Count a run or trace the engine raised on while judging (``engine.boundary``)."""
        self._evaluations_failed.add(1, {REASON: reason})

    def text_repaired(self, count: int, reason: str) -> None:
        """Count characters repaired at the door (``sources.unicode_repair``)."""
        self._text_repaired.add(count, {REASON: reason})

    def verdicts_dropped(self, count: int, sink: str, reason: str) -> None:
        """Count verdicts a sink refused for what they hold (``emitters.sinks.StoreSink``)."""
        self._verdicts_dropped.add(count, {SINK: sink, REASON: reason})

    def sink_retried(self, sink: str, reason: str) -> None:
        """Count a retry of held verdicts that the sink refused again (``engine.publishing``)."""
        self._sink_retries.add(1, {SINK: sink, REASON: reason})

    def register_held(self, callback: Callable[[], Mapping[str, int]]) -> None:
        """Feed ``agent.reliability.verdicts.held`` from ``callback`` (verdicts held by sink name)."""
        self._held = callback

    def register_unmatched(self, callback: Callable[[], Mapping[str, bool]]) -> None:
        """Feed ``agent.reliability.expectations.unmatched`` from ``callback`` (name → unmatched)."""
        self._unmatched = callback

    def sink_failed(self, sink: str) -> None:
        """Count a sink (store, metrics, reputation, callback …) that raised while publishing."""
        self._sink_failures.add(1, {SINK: sink})

    def _observe_buffered(self, options: CallbackOptions) -> Iterable[Observation]:
        if self._buffered is not None:
            yield Observation(self._buffered())

    def _observe_pending(self, options: CallbackOptions) -> Iterable[Observation]:
        if self._pending is not None:
            yield Observation(self._pending())

    def _observe_buffered_bytes(self, options: CallbackOptions) -> Iterable[Observation]:
        if self._buffered_bytes is not None:
            yield Observation(self._buffered_bytes())

    def _observe_held(self, options: CallbackOptions) -> Iterable[Observation]:
        if self._held is not None:
            for sink, count in self._held().items():
                yield Observation(count, {SINK: sink})

    def _observe_unmatched(self, options: CallbackOptions) -> Iterable[Observation]:
        if self._unmatched is not None:
            for name, unmatched in self._unmatched().items():
                yield Observation(int(unmatched), {EXPECTATION: name})
