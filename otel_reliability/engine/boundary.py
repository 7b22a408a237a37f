"""The boundary every per-trace step of judging runs inside.

One trace must never cost another its verdict. A trace that makes the engine raise while
it is judged (input nested too deeply for Python's stack, text that cannot be encoded, a
bug of ours) gets a ``NOT_EVALUATED`` verdict for each of its top-level runs, saying why in
``unevaluated_checks``, and the rest of the round is judged as usual. The failure is
counted by reason (``failure_reason``): ``recursion``, ``encoding`` or ``internal_error``.

When assembly itself failed there are no runs to name: the trace's outermost agent-run
spans stand in for them (``outermost_runs``), so that each run an exporter sent still ends
with a stored verdict, one that claims nothing.
"""

from __future__ import annotations

import logging
import time

from ..expectations import Expectation, ExpectationError
from ..model import NOT_EVALUATED, Role, Run, SpanRecord, Verdict
from ..results import Evaluator, RunResult
from ..version import VERSION
from .judge import Engine

logger = logging.getLogger(__name__)

RECURSION = "recursion"
ENCODING = "encoding"
INTERNAL_ERROR = "internal_error"
_MAX_ANCESTORS = 1024  # a parent cycle in bad input must not hang the boundary either


def failure_reason(exc: BaseException) -> str:
    """The counted reason for an exception raised while judging.

    >>> failure_reason(RecursionError()), failure_reason(UnicodeEncodeError("utf-8", "", 0, 1, "x"))
    ('recursion', 'encoding')
    """
    if isinstance(exc, RecursionError):
        return RECURSION
    if isinstance(exc, UnicodeError):
        return ENCODING
    return INTERNAL_ERROR


def not_evaluated(engine: Engine, run: Run, exc: BaseException, inline: Expectation | None = None) -> RunResult:
    """The honest verdict for a run the engine failed on: no check judged, and why."""
    try:
        expectation = engine.expectation_for(run, inline)
    except (ExpectationError, RecursionError, UnicodeError, ValueError, TypeError):
        expectation = engine.default_expectation
    why = f"the engine could not judge this run ({failure_reason(exc)}: {type(exc).__name__}: {str(exc)[:200]})"
    return RunResult(
        run.trace_id, run.span_id, run.agent, expectation.name,
        Verdict(NOT_EVALUATED, expectation.name, score=0.0, unevaluated_checks=[why]),
        time.time(), run.start_ns, run.end_ns, evaluator=Evaluator(VERSION, expectation.digest),
        agent_version=run.agent_version,
    )


def outermost_runs(trace_id: int, records: list[SpanRecord], only: int | None = None) -> list[Run]:
    """The trace's agent-run spans that no other agent-run span of it encloses, as bare runs
    (``only``: that run span alone)."""
    by_id = {r.span_id: r for r in records}
    runs = []
    for record in records:
        if record.role is not Role.AGENT_RUN or record.trace_id != trace_id:
            continue
        if only is not None and record.span_id != only:
            continue
        if _has_run_ancestor(record, by_id):
            continue
        runs.append(Run(
            trace_id, record.span_id, record.agent_name or record.name, record.name, record.start_ns, record.end_ns,
            dict(record.attributes or {}), record.run_key, agent_version=record.agent_version,
        ))
    return runs


def _has_run_ancestor(record: SpanRecord, by_id: dict[int, SpanRecord]) -> bool:
    node = by_id.get(record.parent_id)
    for _ in range(_MAX_ANCESTORS):
        if node is None:
            return False
        if node.role is Role.AGENT_RUN:
            return True
        node = by_id.get(node.parent_id)
    return False


def log_failure(trace_id: int, exc: BaseException) -> None:
    # RecursionError's traceback is a thousand frames of the same line: its type says enough
    logger.error("otel-reliability could not judge trace %032x (%s): %s: %s", trace_id, failure_reason(exc),
                 type(exc).__name__, str(exc)[:200], exc_info=not isinstance(exc, RecursionError))
