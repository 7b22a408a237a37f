"""Policies that need no exact expectation, for production traffic.

Each configured policy is one check: ``allowed_tools``, ``forbidden_tools``,
``max_tool_calls``, ``max_errors``, and each outcome listed in ``fail_on``
(``error``, ``refused``, ``pending``). Policies judge *attempts*, as Agno's strict
mode does: asking for a forbidden tool breaks the policy even when a guard
refused it. Counts cover every named attempt of the run and its members.

A run whose spans witness no call at all (no model call, so no request, and no tool call) gives
``fail_on`` nothing to read: a call it failed or refused would look the same as none, so
``fail_on`` is not evaluated on it. A run with tool calls but no record of a model turn (no
model-call span, no turn read from its transcript, no model record made from a log event:
``Attempts.requests_unseen``) shows the calls that ran, never one that was asked for and did not
run: its ``fail_on refused`` and ``fail_on pending`` are not evaluated (``fail_on error`` is
judged on its executions), unless an error or a refusal seen already breaks ``fail_on``. Nor are
the ``fail_on`` checks that held on a run whose calls all read ``ok`` while a span of it that is
no call failed (``Attempts.failed_steps``: a step, a chain, an output parser): a call no span
records may have failed or been refused there. A ``fail_on`` already broken stays broken.
Nor are ``fail_on`` refused and pending that held on a run with a model call that finished asking
for tools after which nothing ran (``Attempts.unseen_calls``): a call the spans do not name never
ran, refused or held.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.matcher.wording import plural
from otel_reliability.model import ERROR, OK, Attempt

_FAIL_ON = "fail_on "
_OUTCOME_WORDS = {"error": "errored", "refused": "refused", "pending": "pending"}
# the outcomes of a call that never ran, which only its request (or a model call asking for it) can show
_NEVER_RAN = (f"{_FAIL_ON}refused", f"{_FAIL_ON}pending")


@dataclass(slots=True)
class PolicyResult:
    """One configured policy and the sentences saying how the run broke it (empty: it held)."""

    policy: str
    violations: list[str]


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    """One check per configured policy; its sentences join ``policy_violations``."""
    results = check_policies(attempts.named, expectation)
    unevaluated = []
    if expectation.fail_on and not attempts.chain and attempts.usage.model_calls == 0:
        results = [r for r in results if not r.policy.startswith(_FAIL_ON)]
        unevaluated.append(
            f"{_FAIL_ON}{', '.join(expectation.fail_on)}: the spans record no model call and no tool call, "
            "so a call that failed or was refused would not be seen"
        )
    elif attempts.requests_unseen and expectation.fail_on:
        fail_on = [r for r in results if r.policy.startswith(_FAIL_ON)]
        held = [r for r in fail_on if r.policy in _NEVER_RAN]
        if held and not any(r.violations for r in fail_on):  # an error or a refusal seen breaks fail_on as before
            results = [r for r in results if r not in held]
            unevaluated.append(
                f"{_FAIL_ON}{', '.join(r.policy[len(_FAIL_ON):] for r in held)}: the spans record no model call and no request, "
                "so a call the model asked for that never ran would not be seen (instrument the model client, or enable "
                "content capture)"
            )
    if expectation.fail_on and attempts.failed_steps and all(a.outcome == OK for a in attempts.chain):
        held = [r for r in results if r.policy.startswith(_FAIL_ON) and not r.violations]
        if held:
            results = [r for r in results if r not in held]
            unevaluated.append(
                f"{_FAIL_ON}{', '.join(r.policy[len(_FAIL_ON):] for r in held)}: every call reads ok, but a span of the run "
                f"that is no call failed ({_step(attempts.failed_steps[0])}), so a call that failed or was refused there "
                "would not be seen"
            )
    if attempts.unseen_calls:
        unseen = [r for r in results if r.policy in _NEVER_RAN and not r.violations]
        results = [r for r in results if r not in unseen]
        unevaluated += [f"{r.policy}: {'; '.join(attempts.unseen_calls)}" for r in unseen]
    broken = [r for r in results if r.violations]
    return CheckResult(len(results), len(broken), {"policy_violations": [v for r in broken for v in r.violations]}, unevaluated)


def check_policies(attempts: Sequence[Attempt], expectation: Expectation) -> list[PolicyResult]:
    """Every policy the expectation configures, in a fixed order, each with its violations.

    ``attempts`` are the named attempts in chain (start) order; sentences name
    tools in the order they were first attempted.
    """
    results: list[PolicyResult] = []
    if expectation.allowed_tools is not None or expectation.forbidden_tools is not None:
        counts = Counter(a.tool for a in attempts)
    if expectation.allowed_tools is not None:
        allowed = set(expectation.allowed_tools)
        outside = [
            f"{tool} is not in allowed_tools (attempted {plural(n, 'time')})" for tool, n in counts.items() if tool not in allowed
        ]
        results.append(PolicyResult("allowed_tools", outside))
    if expectation.forbidden_tools is not None:
        forbidden = set(expectation.forbidden_tools)
        inside = [f"forbidden tool {tool} was attempted {plural(n, 'time')}" for tool, n in counts.items() if tool in forbidden]
        results.append(PolicyResult("forbidden_tools", inside))
    if expectation.max_tool_calls is not None:
        limit = expectation.max_tool_calls
        sentence = f"max_tool_calls {limit} exceeded: {plural(len(attempts), 'tool call')} made"
        results.append(PolicyResult("max_tool_calls", [sentence] if len(attempts) > limit else []))
    if expectation.max_errors is not None:
        limit = expectation.max_errors
        errored = [a.tool for a in attempts if a.outcome == ERROR]
        sentence = f"max_errors {limit} exceeded: {plural(len(errored), 'tool call')} errored ({', '.join(errored)})"
        results.append(PolicyResult("max_errors", [sentence] if len(errored) > limit else []))
    for outcome, hit in _tools_by_outcome(attempts, expectation.fail_on).items():
        violations = []
        if hit:  # the sentence only when it is needed: fail_on is checked for every run
            violations.append(f"fail_on {outcome}: {plural(len(hit), 'tool call')} {_OUTCOME_WORDS[outcome]} ({', '.join(hit)})")
        results.append(PolicyResult(f"fail_on {outcome}", violations))
    return results


def _tools_by_outcome(attempts: Sequence[Attempt], outcomes: Sequence[str]) -> dict[str, list[str]]:
    """The tools of the attempts with each of ``outcomes`` (each once, in the given order), in one pass."""
    by_outcome: dict[str, list[str]] = {outcome: [] for outcome in outcomes}
    if by_outcome:
        for attempt in attempts:
            tools = by_outcome.get(attempt.outcome)
            if tools is not None:
                tools.append(attempt.tool)
    return by_outcome


def _step(step: str, limit: int = 80) -> str:
    """A failed step ("name: error") on one line, cut to ``limit`` characters."""
    step = " ".join(step.split())
    return step if len(step) <= limit else step[: limit - 1] + "…"
