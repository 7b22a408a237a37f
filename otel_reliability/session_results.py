"""The verdict for one session (a conversation of top-level runs), and its JSON shape.

A session result sits beside the per-run results: ``kind: "session"``, the ``session_id``,
the ``runs`` it covers (trace and run span ids, in start order), then the very keys of a
run result after its ids (``agent`` … ``source``), read from the session's chain. Stores
keep it in their results table under the key ``session:<id>`` (``SESSION_KEY_PREFIX``), so a
re-judgement of a session that gained a turn supersedes the earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from otel_reliability.model import Verdict
from otel_reliability.results import Evaluator, RunResult, results_document, span_hex, trace_hex

SESSION_KIND = "session"
SESSION_KEY_PREFIX = "session:"


@dataclass(slots=True)
class SessionResult:
    """The verdict for the runs of one conversation judged as one chain.

    >>> r = SessionResult("conv-1", [(1, 2), (3, 4)], "calc", "conversation", Verdict("PASSED", "conversation"), 0.0)
    >>> data = r.to_json()
    >>> data["kind"], data["session_id"], data["runs"][1]["run_span_id"], data["eval_status"]
    ('session', 'conv-1', '0000000000000004', 'PASSED')
    """

    session_id: str
    runs: list[tuple[int, int]]  # (trace id, run span id) of each top-level run, in start order
    agent: str  # the first run's agent
    expectation: str
    verdict: Verdict
    evaluated_at: float  # unix seconds
    start_ns: int = 0  # the first run's start and the last run's end
    end_ns: int = 0
    source: str | None = None
    evaluator: Evaluator | None = None  # as on a run's result: who judged it, with which expectation

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    def to_json(self) -> dict[str, Any]:
        """The session's result object, as ``eval --format json`` and the results API list it."""
        return self._with_head(self._as_run().to_json())

    def to_record(self) -> dict[str, Any]:
        """What stores persist: ``to_json()`` plus what a run's stored record adds."""
        return self._with_head(self._as_run().to_record())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionResult:
        """Read a ``to_record()`` or ``to_json()`` object.

        >>> r = SessionResult("c", [(1, 2)], "a", "e", Verdict("FAILED", "e", missing_tool_calls=["x"]), 5.0, 7, 9)
        >>> SessionResult.from_json(r.to_record()) == r
        True
        """
        runs = [(int(run["trace_id"], 16), int(run["run_span_id"], 16)) for run in data["runs"]]
        first = runs[0] if runs else (0, 0)
        as_run = RunResult.from_json({**data, "trace_id": trace_hex(first[0]), "run_span_id": span_hex(first[1])})
        return cls(
            data["session_id"], runs, as_run.agent, as_run.expectation, as_run.verdict,
            as_run.evaluated_at, as_run.start_ns, as_run.end_ns, as_run.source, as_run.evaluator,
        )

    def _as_run(self) -> RunResult:
        # A run result's shape is the contract; a session borrows it rather than repeat it.
        first = self.runs[0] if self.runs else (0, 0)
        return RunResult(
            first[0], first[1], self.agent, self.expectation, self.verdict, self.evaluated_at,
            self.start_ns, self.end_ns, self.source, evaluator=self.evaluator,
        )

    def _with_head(self, run: dict[str, Any]) -> dict[str, Any]:
        del run["trace_id"], run["run_span_id"]
        head: dict[str, Any] = {
            "kind": SESSION_KIND,
            "session_id": self.session_id,
            "runs": [{"trace_id": trace_hex(t), "run_span_id": span_hex(s)} for t, s in self.runs],
        }
        head.update(run)
        return head


def stored_result(data: Mapping[str, Any]) -> RunResult | SessionResult:
    """A stored record back as the result it was: a session's or a run's.

    >>> type(stored_result(SessionResult("c", [(1, 2)], "a", "e", Verdict("PASSED", "e"), 0.0).to_record())).__name__
    'SessionResult'
    """
    if data.get("kind") == SESSION_KIND:
        return SessionResult.from_json(data)
    return RunResult.from_json(data)


def results_document_with_sessions(
    results: Iterable[RunResult], sessions: Iterable[SessionResult] = ()
) -> dict[str, Any]:
    """``results_document`` with the session results listed after the runs' and counted apart:
    ``summary.runs`` … ``not_evaluated`` count runs as before, and ``summary.sessions`` (present
    when there are session results) counts sessions the same way.

    >>> document = results_document_with_sessions([], [SessionResult("c", [], "a", "e", Verdict("PASSED", "e"), 0.0)])
    >>> document["summary"]["runs"], document["summary"]["sessions"], document["results"][0]["kind"]
    (0, {'sessions': 1, 'passed': 1, 'failed': 0, 'not_evaluated': 0}, 'session')
    """
    document = results_document(results)
    sessions = list(sessions)
    if sessions:
        document["results"] += [session.to_json() for session in sessions]
        passed = sum(1 for s in sessions if s.passed)
        failed = sum(1 for s in sessions if s.failed)
        document["summary"]["sessions"] = {
            "sessions": len(sessions), "passed": passed, "failed": failed, "not_evaluated": len(sessions) - passed - failed,
        }
    return document
