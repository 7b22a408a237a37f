"""The verdict as run-span attributes and a ``gen_ai.evaluation.result`` event (SPEC §6, a contract).

Both are plain dicts: the in-process processor puts them on its enriched copy of the run
span, the receiver on the OTLP span it forwards, and the post-hoc carrier span on itself.
"""

from __future__ import annotations

from operator import attrgetter

from opentelemetry.util.types import AttributeValue

from otel_reliability.model import ERROR, EVALUATION_EVENT, PENDING, REFUSED, Verdict
from otel_reliability.results import TRAJECTORY_KEYS, VERDICT_LISTS, RunResult

EVALUATION_NAME = "tool_call_reliability"

_LIST_KEYS = tuple(f"reliability.{name}" for name in VERDICT_LISTS)
_lists = attrgetter(*VERDICT_LISTS)


def verdict_attributes(result: RunResult) -> dict[str, AttributeValue]:
    """The ``reliability.*`` attributes of a run span.

    >>> from otel_reliability.model import Verdict
    >>> attrs = verdict_attributes(RunResult(1, 2, "a", "math", Verdict("PASSED", "math"), 0.0))
    >>> attrs["reliability.status"], attrs["reliability.tool_calls.total"]
    ('PASSED', 0)
    """
    verdict = result.verdict
    outcomes = [attempt.outcome for attempt in verdict.chain]
    attributes: dict[str, AttributeValue] = {
        "reliability.status": verdict.eval_status,
        "reliability.expectation": result.expectation,
        "reliability.score": float(verdict.score),
    }
    for key, values in zip(_LIST_KEYS, _lists(verdict), strict=True):
        attributes[key] = tuple(map(str, values)) if values else ()
    attributes["reliability.tool_calls.total"] = len(verdict.chain)
    attributes["reliability.tool_calls.errored"] = outcomes.count(ERROR)
    attributes["reliability.tool_calls.refused"] = outcomes.count(REFUSED)
    attributes["reliability.tool_calls.pending"] = outcomes.count(PENDING)
    if verdict.unevaluated_checks:  # only on NOT_EVALUATED runs: the others keep their attribute set
        attributes["reliability.unevaluated_checks"] = tuple(verdict.unevaluated_checks)
    trajectory = verdict.trajectory
    if trajectory is not None:  # only the values the expectation gives a list for
        for key in TRAJECTORY_KEYS:
            value = getattr(trajectory, key)
            if value is not None:
                attributes[f"reliability.trajectory.{key}"] = float(value)
    return attributes


def score_label(verdict: Verdict) -> str:
    """``gen_ai.evaluation.score.label``: ``pass``, ``fail``, or ``not_evaluated`` when no check
    failed but one could not be judged (a pass it would be a guess).

    >>> from otel_reliability.model import NOT_EVALUATED
    >>> score_label(Verdict(NOT_EVALUATED, "math", unevaluated_checks=["arguments of multiply not captured"]))
    'not_evaluated'
    """
    if verdict.passed:
        return "pass"
    return "fail" if verdict.failed else "not_evaluated"


def evaluation_event(result: RunResult) -> tuple[str, dict[str, AttributeValue]]:
    """The ``gen_ai.evaluation.result`` event: its name and attributes.

    >>> from otel_reliability.model import Verdict
    >>> name, attrs = evaluation_event(RunResult(1, 2, "a", "math", Verdict("FAILED", "math", score=0.5), 0.0))
    >>> name, attrs["gen_ai.evaluation.score.label"], attrs["gen_ai.evaluation.score.value"]
    ('gen_ai.evaluation.result', 'fail', 0.5)
    """
    from otel_reliability.matcher import explain  # lazily: the matcher need not load with the emitters

    verdict = result.verdict
    attributes: dict[str, AttributeValue] = {
        "gen_ai.evaluation.name": EVALUATION_NAME,
        "gen_ai.evaluation.score.value": float(verdict.score),
        "gen_ai.evaluation.score.label": score_label(verdict),
        "gen_ai.evaluation.explanation": explain(verdict),
    }
    evaluator = result.evaluator
    if evaluator is not None:
        # The GenAI conventions' evaluation event has no attribute naming the evaluator's
        # identity or version (only name, score, label, explanation, response id, error
        # type): provenance goes under this package's namespace.
        attributes["reliability.evaluator.name"] = evaluator.name
        attributes["reliability.evaluator.version"] = evaluator.version
        attributes["reliability.evaluator.expectation_digest"] = evaluator.expectation_digest
    return EVALUATION_EVENT, attributes
