"""Evidence items from one judged run, in the grading article's four dimensions. Pure — no I/O.

Each item is ``{dimension, source, passed, detail, confidence}``:

- ``isnad`` (chain integrity) — ``matcher``: the expectation's name, argument and
  per-agent checks held (only when the expectation asks for tools or arguments);
  ``order_audit``: the ``expected_chain`` order held (only when ``order`` is not
  ``any``); ``tool_outcomes``: no attempt errored or was left pending (only when the
  run attempted a tool).
- ``adalah`` (compliance) — ``policy:allowed_tools``, ``policy:forbidden_tools``,
  ``policy:max_tool_calls`` for each of those the expectation configures;
  ``refusals``: no attempt was refused (only when the run attempted a tool).
- ``dabt`` (stability) — ``stability``: the run's chain signature equals the one
  the previous run of the same case (expectation) left; the store supplies the
  previous signature, so the first run of a case gives no item.
- ``sidq`` (factual consistency) — ``fact_check``: one item per fact of the
  expectation's ``expected_output``, checked on the run's final output; external
  evidence: ``gen_ai.evaluation.result`` events other evaluators put on the spans
  (``evaluation:<name>``) and feedback.

Attempts that the access policy denied (``reliability.policy.denied``) are left out
of ``tool_outcomes`` and ``refusals``: blocking them was the operator's decision.

A check the spans could not support (``Verdict.unevaluated_checks``, SPEC §5.2) gives no
evidence: a run has no passing ``matcher`` item when an argument check went unjudged
(a failing one when a name check failed), and no ``order_audit`` item when the order did — "nothing failed"
there is an absence of information, not chain integrity. Its ``tool_outcomes``,
``refusals`` and policy items stand: they rest on the outcomes the spans did record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.order import UNTIMED
from otel_reliability.matcher.policies import check_policies
from otel_reliability.matcher.wording import name_problems
from otel_reliability.model import ERROR, PENDING, REFUSED, Attempt
from otel_reliability.results import RunResult

SIDQ, DABT, ISNAD, ADALAH = "sidq", "dabt", "isnad", "adalah"
DIMENSIONS: dict[str, str] = {
    SIDQ: "factual consistency",
    DABT: "stability",
    ISNAD: "chain integrity",
    ADALAH: "compliance",
}
"""The four dimensions in the article's order, with what each measures."""

DEFAULT_CASE = "default"
"""The expectation runs get when none selects them: not a case, so it gives no stability evidence."""

OWN_EVALUATION = "tool_call_reliability"
"""Our own ``gen_ai.evaluation.name``: never read back as external evidence."""

_ADALAH_POLICIES = ("allowed_tools", "forbidden_tools", "max_tool_calls")
_PASS_LABELS = frozenset({"pass", "passed", "true", "yes", "correct", "good", "consistent", "faithful", "grounded"})
_FAIL_LABELS = frozenset({"fail", "failed", "false", "no", "incorrect", "bad", "inconsistent", "hallucinated", "ungrounded"})


@dataclass(slots=True, frozen=True)
class Evidence:
    """One piece of evidence about an agent, as the article's ``EvidenceItem``.

    >>> Evidence("sidq", "fact_check", True, "output states 25°C", 0.9).to_json()["confidence"]
    0.9
    >>> Evidence("honesty", "x", True, "")
    Traceback (most recent call last):
    ...
    ValueError: unknown dimension 'honesty' (use one of sidq, dabt, isnad, adalah)
    """

    dimension: str
    source: str
    passed: bool
    detail: str
    confidence: float = 1.0

    def __post_init__(self) -> None:
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {self.dimension!r} (use one of {', '.join(DIMENSIONS)})")
        if not 0.0 < self.confidence <= 1.0:
            raise ValueError(f"confidence must be in (0, 1], got {self.confidence!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "source": self.source,
            "passed": self.passed,
            "detail": self.detail,
            "confidence": self.confidence,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(
            str(data["dimension"]),
            str(data["source"]),
            bool(data["passed"]),
            str(data.get("detail", "")),
            float(data.get("confidence", 1.0)),
        )


def run_evidence(
    result: RunResult,
    expectation: Expectation | None = None,
    *,
    output: str | None = None,
    denied_span_ids: Collection[int] = (),
    fact_confidence: float = 1.0,
) -> list[Evidence]:
    """The ``isnad``, ``adalah`` and ``sidq`` fact evidence of one judged run.

    ``expectation`` is the one the verdict names, when the caller has it: without it
    the ``matcher`` and ``order_audit`` items are inferred from the verdict's lists and
    no ``policy:*`` or ``fact_check`` items are possible. ``output`` is the run's final
    output as its span recorded it (``Run.output``).

    >>> from otel_reliability.model import OK, Attempt, Verdict
    >>> chain = [Attempt("get_weather", {"city": "Paris"}, OK, "forecaster", ("forecaster",))]
    >>> verdict = Verdict("PASSED", "weather", passed_tool_calls=["get_weather"], chain=chain)
    >>> result = RunResult(1, 2, "forecaster", "weather", verdict, 0.0)
    >>> [(e.dimension, e.source, e.passed) for e in run_evidence(result)]
    [('isnad', 'matcher', True), ('isnad', 'tool_outcomes', True), ('adalah', 'refusals', True)]
    """
    verdict = result.verdict
    attempts = (
        [a for a in verdict.chain if a.span_id is None or a.span_id not in denied_span_ids]
        if denied_span_ids
        else verdict.chain
    )
    items: list[Evidence] = []

    order_unjudged = UNTIMED in verdict.unevaluated_checks
    arguments_unjudged = len(verdict.unevaluated_checks) > order_unjudged
    if _has_chain_checks(result, expectation):
        problems = name_problems(verdict)
        if problems:
            detail = f"expectation '{result.expectation}': " + "; ".join(problems)
            items.append(Evidence(ISNAD, "matcher", False, detail))
        elif not arguments_unjudged:  # else "met" would claim what the spans could not show
            called = ", ".join(dict.fromkeys(verdict.passed_tool_calls)) or "no tool, as expected"
            items.append(Evidence(ISNAD, "matcher", True, f"expectation '{result.expectation}' met: {called}"))
    ordered = (expectation.order != "any") if expectation is not None else bool(verdict.order_violations)
    if ordered and not order_unjudged:
        detail = "; ".join(verdict.order_violations) or f"tool calls in the expected order: {_names(attempts)}"
        items.append(Evidence(ISNAD, "order_audit", not verdict.order_violations, detail))
    if attempts:
        broken = [a for a in attempts if a.outcome in (ERROR, PENDING)]
        if broken:
            detail = "broken links: " + ", ".join(f"{a.tool} ({a.outcome})" for a in broken)
        else:
            detail = f"every tool call completed: {_names(attempts)}"
        items.append(Evidence(ISNAD, "tool_outcomes", not broken, detail))

    if expectation is not None:
        named = [a for a in attempts if a.tool]
        for policy in check_policies(named, expectation):
            if policy.policy in _ADALAH_POLICIES:
                detail = "; ".join(policy.violations) or f"{policy.policy} respected"
                items.append(Evidence(ADALAH, f"policy:{policy.policy}", not policy.violations, detail))
    if attempts:
        refused = [a.tool for a in attempts if a.outcome == REFUSED]
        items.append(Evidence(ADALAH, "refusals", False, f"refused: {', '.join(refused)}") if refused else _NONE_REFUSED)

    if expectation is not None and expectation.expected_output is not None and output is not None:
        items.extend(fact_evidence(expectation.expected_output, output, fact_confidence))
    return items


# Made once: nearly every run that calls a tool gives it, and evidence is immutable.
_NONE_REFUSED = Evidence(ADALAH, "refusals", True, "no tool call was refused")


def fact_evidence(expected: Any, output: str, confidence: float = 1.0) -> list[Evidence]:
    """One ``sidq`` item per fact of an ``ExpectedOutput`` (contains / regex / equals).

    >>> from otel_reliability.expectations import ExpectedOutput
    >>> facts = ExpectedOutput(contains=["25°C"], regex=[r"\\bParis\\b"], equals="Paris: 25°C")
    >>> [e.passed for e in fact_evidence(facts, "Paris: 18°C")]
    [False, True, False]
    """
    items = []
    for fact in expected.contains:
        found = fact in output
        items.append(Evidence(SIDQ, "fact_check", found, f"output {'states' if found else 'lacks'} {fact!r}", confidence))
    for pattern in expected.regex:
        found = re.search(pattern, output) is not None
        items.append(Evidence(SIDQ, "fact_check", found, f"output {'matches' if found else 'does not match'} /{pattern}/", confidence))
    if expected.equals is not None:
        same = output.strip() == expected.equals.strip()
        detail = f"output equals {expected.equals!r}" if same else f"output {_clip(output)!r} is not {expected.equals!r}"
        items.append(Evidence(SIDQ, "fact_check", same, detail, confidence))
    return items


def chain_signature(chain: Iterable[Attempt]) -> str:
    """What stability compares: who called which tool with what outcome, in start order.

    >>> from otel_reliability.model import OK, ERROR, Attempt
    >>> chain_signature([Attempt("search", {}, OK, "a", ("a",)), Attempt("parse", {}, ERROR, "a", ("a",))])
    'a/search:ok > a/parse:error'
    """
    return " > ".join(f"{a.agent}/{a.tool}:{a.outcome}" for a in chain) or "(no tool calls)"


def case_key(result: RunResult) -> str | None:
    """The case whose runs' chains must agree: the expectation, unless it is the default.

    >>> from otel_reliability.model import Verdict
    >>> case_key(RunResult(1, 2, "a", "default", Verdict("PASSED", "default"), 0.0)) is None
    True
    """
    return None if result.expectation == DEFAULT_CASE else result.expectation


def stability_evidence(case: str, previous: str | None, signature: str) -> Evidence | None:
    """The ``dabt`` item for a run of ``case``, given the signature its previous run left.

    >>> stability_evidence("weather", "a/search:ok", "a/search:ok").passed
    True
    >>> stability_evidence("weather", None, "a/search:ok") is None
    True
    """
    if previous is None:
        return None
    if previous == signature:
        return Evidence(DABT, "stability", True, f"same chain as the previous run of '{case}': {signature}")
    return Evidence(DABT, "stability", False, f"chain of '{case}' changed from {previous} to {signature}")


def evaluation_evidence(
    attributes: Mapping[str, Any],
    *,
    confidence: float = 0.7,
    dimension: str = SIDQ,
    pass_threshold: float = 0.5,
) -> Evidence | None:
    """A ``gen_ai.evaluation.result`` event another evaluator put on a span, as evidence.

    The label decides when it reads as pass or fail (``pass``, ``correct``, ``true`` …);
    otherwise the score value, passing at ``pass_threshold`` or above. Our own
    ``tool_call_reliability`` events and events with neither give ``None``.

    >>> evaluation_evidence({"gen_ai.evaluation.name": "faithfulness",
    ...                      "gen_ai.evaluation.score.value": 0.4}).passed
    False
    >>> evaluation_evidence({"gen_ai.evaluation.name": "judge", "gen_ai.evaluation.score.label": "Correct"}).source
    'evaluation:judge'
    """
    name = str(attributes.get("gen_ai.evaluation.name") or "unnamed")
    if name == OWN_EVALUATION:
        return None
    label = attributes.get("gen_ai.evaluation.score.label")
    value = attributes.get("gen_ai.evaluation.score.value")
    normalised = str(label).strip().lower() if label is not None else ""
    if normalised in _PASS_LABELS:
        passed = True
    elif normalised in _FAIL_LABELS:
        passed = False
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        passed = value >= pass_threshold
    else:
        return None
    shown = ", ".join(str(x) for x in (label, value) if x is not None)
    explanation = attributes.get("gen_ai.evaluation.explanation")
    detail = f"{name}: {shown}" + (f" — {explanation}" if explanation else "")
    return Evidence(dimension, f"evaluation:{name}", passed, detail, confidence)


def _has_chain_checks(result: RunResult, expectation: Expectation | None) -> bool:
    if expectation is not None:
        return (
            expectation.expected_tool_calls is not None
            or bool(expectation.expected_tool_call_arguments)
            or bool(expectation.expected_tool_calls_by_agent)
        )
    verdict = result.verdict
    return any(
        (
            verdict.passed_tool_calls,
            verdict.failed_tool_calls,
            verdict.missing_tool_calls,
            verdict.passed_argument_checks,
            verdict.failed_argument_checks,
        )
    )


def _names(attempts: Iterable[Attempt]) -> str:
    return " > ".join(a.tool for a in attempts)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
