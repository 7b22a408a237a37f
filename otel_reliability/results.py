"""One verdict with where it came from, and its JSON shape (SPEC §10, a contract).

``RunResult.to_json()`` is exactly the result object of ``eval --format json`` and of
``GET /api/v1/results``; ``results_document()`` wraps a list of them with the summary.
Stores persist ``to_record()``: the same object plus ``evaluated_at`` and the attempt
fields §10 leaves out, so that ``from_json()`` gives back the whole result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Iterable, Mapping

from otel_reliability.matcher import explain
from otel_reliability.model import Attempt, Trajectory, Usage, Verdict

EVALUATOR_NAME = "otel-reliability"

VERDICT_LISTS = (
    "passed_tool_calls",
    "failed_tool_calls",
    "additional_tool_calls",
    "missing_tool_calls",
    "failed_argument_checks",
    "passed_argument_checks",
    "order_violations",
)
"""The verdict's name lists that §10 and §6 publish, in §10 order."""

PROBLEM_LISTS = (
    ("unexpected", "failed_tool_calls"),
    ("missing", "missing_tool_calls"),
    ("arguments", "failed_argument_checks"),
    ("order", "order_violations"),
    ("policy", "policy_violations"),
)
"""(label, verdict list) pairs that make a run fail, as reports summarise them."""

DETAIL_LISTS = ("policy_violations", "errored_tool_calls", "refused_tool_calls", "pending_tool_calls")
"""The verdict's other name lists, published after ``chain`` (added to §10 on 2026-12-01)."""


def trace_hex(trace_id: int) -> str:
    """A trace id as OpenTelemetry writes it: 32 lowercase hex digits.

    >>> trace_hex(255)
    '000000000000000000000000000000ff'
    """
    return format(trace_id, "032x")


def span_hex(span_id: int) -> str:
    """A span id as OpenTelemetry writes it: 16 lowercase hex digits.

    >>> span_hex(255)
    '00000000000000ff'
    """
    return format(span_id, "016x")


@dataclass(frozen=True, slots=True)
class SamplingDecision:
    """An expectation with a ``sample_rate`` below 1 and what it decided for one run
    (``"sampled"`` or ``"skipped"``; ``engine.sampling``)."""

    expectation: str
    decision: str


@dataclass(slots=True)
class Evaluator:
    """Provenance: what produced a result — this package, its version, and the digest of the
    expectation it applied (``Expectation.digest``), so that results of different versions
    of an agent are compared only when they were judged alike.

    >>> Evaluator("0.9.0", "ab12").to_json()
    {'name': 'otel-reliability', 'version': '0.9.0', 'expectation_digest': 'ab12'}
    """

    version: str
    expectation_digest: str
    name: str = EVALUATOR_NAME

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "expectation_digest": self.expectation_digest}


@dataclass(slots=True)
class RunResult:
    """The verdict for one top-level run, with the ids, times and file that locate it.

    >>> r = RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0)
    >>> r.to_json()["trace_id"], r.passed
    ('00000000000000000000000000000001', True)
    """

    trace_id: int
    run_span_id: int
    agent: str
    expectation: str
    verdict: Verdict
    evaluated_at: float  # unix seconds
    start_ns: int = 0  # the run span's times; 0 when unknown (results stored before they were kept)
    end_ns: int = 0
    source: str | None = None  # the trace file the run came from (``eval``); None elsewhere
    evaluator: Evaluator | None = None  # set by the engine on every result it judges
    # what a sampled expectation decided for this run (engine.sampling); not published in the
    # JSON (a skipped run's verdict is the default expectation's), counted by the metrics
    sampling: SamplingDecision | None = field(default=None, compare=False)
    # how the run was found when no span marks it (``assembly.inferred``); None for a run span.
    # Published as ``inferred_run`` (only when set) and said first in the explanation.
    inferred: str | None = None
    # False when no span names the run's agent (``agent`` is its span's name): published as
    # ``agent_named: false`` (only then) and said in the explanation
    agent_named: bool = True
    # which version of the agent ran (``Run.agent_version``); published as ``agent_version``, null when unknown
    agent_version: str | None = None

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    def to_json(self) -> dict[str, Any]:
        """The §10 result object, keys in contract order (the 2026-12-01 additions after ``chain``).

        >>> data = RunResult(1, 2, "a", "e", Verdict("PASSED", "e"), 0.0, 1_500_000, 4_000_000).to_json()
        >>> list(data)[:5], data["started_at"], data["duration_ms"]
        (['trace_id', 'run_span_id', 'agent', 'expectation', 'eval_status'], '1970-01-01T00:00:00.0015Z', 2.5)
        """
        data = self._head()
        data["chain"] = [_attempt_json(a) for a in self.verdict.chain]
        self._tail(data)
        return data

    def _head(self) -> dict[str, Any]:
        """The §10 keys before ``chain``."""
        verdict = self.verdict
        data: dict[str, Any] = {
            "trace_id": trace_hex(self.trace_id),
            "run_span_id": span_hex(self.run_span_id),
            "agent": self.agent,
            "expectation": self.expectation,
            "eval_status": verdict.eval_status,
        }
        for name in VERDICT_LISTS:
            data[name] = list(getattr(verdict, name))
        data["score"] = verdict.score
        return data

    def _tail(self, data: dict[str, Any]) -> None:
        """The keys §10 added after ``chain``: why, when, from which file, how close, how much, and by what."""
        for name in DETAIL_LISTS:
            data[name] = list(getattr(self.verdict, name))
        data["unevaluated_checks"] = list(self.verdict.unevaluated_checks)
        data["explanation"] = explain(self.verdict)
        if self.inferred is not None:
            data["explanation"] = f"Run found from the trace's structure ({self.inferred}). {data['explanation']}"
            data["inferred_run"] = self.inferred
        elif not self.agent_named:
            data["explanation"] = f"No span names the agent: the run is named after its span. {data['explanation']}"
        if not self.agent_named:
            data["agent_named"] = False
        known = self.start_ns > 0 and self.end_ns >= self.start_ns
        data["started_at"] = rfc3339(self.start_ns) if known else None
        data["ended_at"] = rfc3339(self.end_ns) if known else None
        data["duration_ms"] = (self.end_ns - self.start_ns) / 1e6 if known else None
        data["source"] = self.source
        data["trajectory"] = _trajectory_json(self.verdict.trajectory)
        data["usage"] = _usage_json(self.verdict.usage)
        data["evaluator"] = None if self.evaluator is None else self.evaluator.to_json()
        data["agent_version"] = self.agent_version

    def to_record(self) -> dict[str, Any]:
        """What stores persist: ``to_json()`` plus ``evaluated_at`` and each attempt's
        ``agent_path``, ``error`` and ``start_ns``.

        >>> RunResult(1, 2, "a", "e", Verdict("PASSED", "e"), 5.0).to_record()["evaluated_at"]
        5.0
        """
        data = self._head()
        data["chain"] = [_attempt_record(a) for a in self.verdict.chain]
        self._tail(data)
        data["evaluated_at"] = self.evaluated_at
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResult:
        """Read a ``to_record()`` or a ``to_json()`` object, of today or from before the
        2026-12-01 additions (missing lists default to empty, missing times to unknown).

        >>> r = RunResult(1, 2, "a", "e", Verdict("FAILED", "e", missing_tool_calls=["x"]), 5.0, 7, 9, "t.json")
        >>> RunResult.from_json(r.to_record()) == r
        True
        """
        verdict = Verdict(
            eval_status=data["eval_status"],
            expectation=data["expectation"],
            score=float(data["score"]),
            chain=[_attempt_from_json(item) for item in data["chain"]],
            unevaluated_checks=list(data.get("unevaluated_checks", ())),
            trajectory=_trajectory_from_json(data.get("trajectory")),
            usage=_usage_from_json(data.get("usage")),
            **{name: list(data.get(name, ())) for name in VERDICT_LISTS + DETAIL_LISTS},
        )
        evaluator = data.get("evaluator")
        started, ended = data.get("started_at"), data.get("ended_at")
        return cls(
            trace_id=int(data["trace_id"], 16),
            run_span_id=int(data["run_span_id"], 16),
            agent=data["agent"],
            expectation=data["expectation"],
            verdict=verdict,
            evaluated_at=float(data.get("evaluated_at", 0.0)),
            start_ns=0 if started is None else parse_rfc3339(started),
            end_ns=0 if ended is None else parse_rfc3339(ended),
            source=data.get("source"),
            inferred=data.get("inferred_run"),
            agent_named=data.get("agent_named", True) is not False,
            agent_version=data.get("agent_version"),
            evaluator=None
            if evaluator is None
            else Evaluator(evaluator["version"], evaluator["expectation_digest"], evaluator.get("name", EVALUATOR_NAME)),
        )


def rfc3339(unix_ns: int) -> str:
    """Nanoseconds since the epoch as RFC 3339 UTC, as precise as they are (no trailing zeros).

    >>> rfc3339(1_764_547_200_123_000_000), rfc3339(1_764_547_200_000_000_000)
    ('2025-12-01T00:00:00.123Z', '2025-12-01T00:00:00Z')
    """
    seconds, fraction = divmod(unix_ns, 1_000_000_000)
    text = _utc_second(seconds)
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + "Z"


@lru_cache(maxsize=1024)
def _utc_second(seconds: int) -> str:
    """A whole second as RFC 3339 UTC without the zone. Cached: the runs a store or report
    writes together start and end within a few seconds of each other, and formatting a
    date costs more than the rest of a stored result's times."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def parse_rfc3339(text: str) -> int:
    """The inverse of ``rfc3339`` (any offset accepted): nanoseconds since the epoch.

    >>> parse_rfc3339("2025-12-01T00:00:00.123Z"), parse_rfc3339("2025-12-01T01:00:00+01:00")
    (1764547200123000000, 1764547200000000000)
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    whole, fraction, zone = match.groups()
    moment = datetime.fromisoformat(whole + ("+00:00" if zone in ("Z", "z") else zone))
    nanos = int((fraction or "").ljust(9, "0")[:9] or 0)
    return int(moment.timestamp()) * 1_000_000_000 + nanos


_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)")


TRAJECTORY_KEYS = ("precision", "recall", "f1", "lcs_f1")
USAGE_KEYS = ("model_calls", "total_tokens", "duration_ms", "max_repeated_calls")


def _trajectory_json(trajectory: Trajectory | None) -> dict[str, float | None] | None:
    if trajectory is None:
        return None
    return {key: getattr(trajectory, key) for key in TRAJECTORY_KEYS}


def _trajectory_from_json(data: Mapping[str, Any] | None) -> Trajectory | None:
    if data is None:
        return None
    return Trajectory(**{key: data.get(key) for key in TRAJECTORY_KEYS})


def _usage_json(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {key: getattr(usage, key) for key in USAGE_KEYS}


def _usage_from_json(data: Mapping[str, Any] | None) -> Usage | None:
    if data is None:
        return None
    return Usage(**{key: data[key] for key in USAGE_KEYS if key in data})


def _attempt_json(attempt: Attempt) -> dict[str, Any]:
    return {
        "agent": attempt.agent,
        "tool": attempt.tool,
        "arguments": attempt.arguments,
        "outcome": attempt.outcome,
        "call_id": attempt.call_id,
        "span_id": None if attempt.span_id is None else span_hex(attempt.span_id),
    }


def _attempt_record(attempt: Attempt) -> dict[str, Any]:
    """``_attempt_json`` and the fields only stores keep."""
    item = _attempt_json(attempt)
    item["agent_path"] = list(attempt.agent_path)
    item["error"] = attempt.error
    item["start_ns"] = attempt.start_ns
    if not attempt.arguments_captured:  # only then: records stored before the field stay as they were
        item["arguments_captured"] = False
    return item


def _attempt_from_json(item: Mapping[str, Any]) -> Attempt:
    span_id = item.get("span_id")
    return Attempt(
        tool=item["tool"],
        arguments=item["arguments"],
        outcome=item["outcome"],
        agent=item["agent"],
        agent_path=tuple(item.get("agent_path", ())),
        call_id=item.get("call_id"),
        span_id=None if span_id is None else int(span_id, 16),
        error=item.get("error"),
        start_ns=int(item.get("start_ns", 0)),
        arguments_captured=bool(item.get("arguments_captured", True)),
    )


def results_document(results: Iterable[RunResult]) -> dict[str, Any]:
    """The whole ``eval --format json`` document: every result and a summary.

    >>> results_document([RunResult(1, 2, "a", "e", Verdict("FAILED", "e"), 0.0)])["summary"]
    {'runs': 1, 'passed': 0, 'failed': 1, 'not_evaluated': 0}
    """
    items = list(results)
    passed = sum(1 for r in items if r.passed)
    failed = sum(1 for r in items if r.verdict.failed)
    return {
        "results": [r.to_json() for r in items],
        "summary": {"runs": len(items), "passed": passed, "failed": failed, "not_evaluated": len(items) - passed - failed},
    }
