"""The matcher: one run and one expectation in, one ``Verdict`` out. Pure — no I/O.

``evaluate`` sums one module per check (``CHECKS``, each behind ``checks.Check``), like the
tail-sampling processor's one-file-per-policy layout:

- ``agno`` — Agno ReliabilityEval parity (SPEC §5.1): the name and argument lists;
- ``arguments`` — how an argument spec is compared (``subset`` / ``exact`` / ``ignore``);
- ``agents`` — ``expected_tool_calls_by_agent``;
- ``order`` — ``expected_chain`` with ``order`` = ``exact`` / ``in_order``;
- ``policies`` — ``allowed_tools``, ``forbidden_tools``, ``max_tool_calls``,
  ``max_errors``, ``fail_on``;
- ``budgets`` — ``max_model_calls``, ``max_total_tokens``, ``max_duration_ms``,
  ``max_repeated_calls``; and every verdict's measured ``usage``;
- ``outcomes`` — no check: the errored, refused and pending tools, listed;
- ``trajectory`` — no check: partial credit (precision, recall, F1, LCS-F1) beside the verdict.

With an expectation's optional fields left at their defaults, the verdict's
seven Agno fields equal Agno's result exactly.

**Score.** ``score`` is the fraction of checks that passed, 1.0 when none applies.
The checks are:

1. each entry of ``expected_tool_calls`` (duplicates included): passes when the
   name has a clean execution — fails once per ``missing_tool_calls`` entry Agno reports;
2. when ``expected_tool_calls`` is set, each judged attempt — every execution and
   every request-only name: passes unless it lands in ``failed_tool_calls``
   (an unexpected call in lenient mode passes, it is only listed as additional);
3. each tool of ``expected_tool_call_arguments`` that is not already missing:
   passes when it lands in ``passed_argument_checks``;
4. each (agent, tool) pair of ``expected_tool_calls_by_agent``;
5. the order check, when ``order`` is not ``any``;
6. each configured policy (each ``fail_on`` outcome counting as one);
7. each configured budget.

A check the spans cannot support (arguments not captured, attempts with no start
times, a result that another outcome the spans leave open would change: ``undecided``) is
not counted: the score is over the checks that could be judged.

So a verdict is ``FAILED`` exactly when its score is below 1.0; with a score of 1.0 it
is ``NOT_EVALUATED`` when some check could not be judged (``unevaluated_checks`` says
which and why), else ``PASSED``.
"""

from __future__ import annotations

from operator import attrgetter

from otel_reliability.expectations import Expectation
from otel_reliability.matcher import agents, agno, budgets, order, outcomes, policies, undecided
from otel_reliability.matcher.trajectory import trajectory
from otel_reliability.matcher.checks import Attempts, Check, CheckResult
from otel_reliability.matcher.wording import name_problems, plural
from otel_reliability.model import FAILED, NOT_EVALUATED, PASSED, Run, Verdict

__all__ = ["CHECKS", "Check", "CheckResult", "evaluate", "explain"]

# In this order: each adds its entries after the ones before it (missing_tool_calls: Agno's
# names, then the per-agent shortfalls).
CHECKS: tuple[Check, ...] = (agno.check, agents.check, order.check, policies.check, budgets.check, outcomes.check)
_start = attrgetter("start_ns")


def evaluate(run: Run, expectation: Expectation) -> Verdict:
    """Judge ``run``'s tool calls (its members' included) against ``expectation``.

    >>> from otel_reliability.model import OK, Attempt, Run
    >>> run = Run(trace_id=1, span_id=2, agent="calc", span_name="invoke_agent calc", start_ns=0, end_ns=9,
    ...           own_attempts=[Attempt("multiply", {"a": 10}, OK, "calc", ("calc",))])
    >>> evaluate(run, Expectation(name="calc", expected_tool_calls=["multiply"])).eval_status
    'PASSED'
    """
    evidence = run.evidence()
    chain = sorted(evidence, key=_start)  # Run.chain(), without collecting the evidence twice
    named = [a for a in chain if a.tool]
    if run.members:
        unnamed = frozenset(r.agent for r in run.walk() if not r.agent_named)
        failed_steps = tuple(step for r in run.walk() for step in r.failed_steps)
        unseen = tuple(u.reason for r in run.walk() for u in r.unseen_calls)
        requests_unseen = all(r.requests_unseen for r in run.walk())
    else:  # most runs: no walk (a generator per run) for the run alone
        unnamed = frozenset() if run.agent_named else frozenset((run.agent,))
        failed_steps = run.failed_steps
        unseen = tuple(u.reason for u in run.unseen_calls)
        requests_unseen = run.requests_unseen
    attempts = Attempts(evidence, chain, named, budgets.measure(run, named), unnamed, failed_steps, unseen, requests_unseen)
    total = failed = 0
    lists: dict[str, list[str]] = {}
    unevaluated: list[str] = []
    for result in undecided.settle(CHECKS, [check(attempts, expectation) for check in CHECKS], attempts, expectation):
        total += result.checks
        failed += result.failed
        if result.unevaluated:
            unevaluated += result.unevaluated
        for name, entries in result.lists.items():
            if name in lists:
                lists[name] += entries
            else:
                lists[name] = entries
    # Every failed check lands in one of Agno's three failing lists, the order
    # violations or the policy violations, so this is Agno's PASSED rule extended.
    if failed:
        status = FAILED
    else:
        status = NOT_EVALUATED if unevaluated else PASSED
    return Verdict(
        eval_status=status,
        expectation=expectation.name,
        score=(total - failed) / total if total else 1.0,
        chain=chain,
        unevaluated_checks=unevaluated,
        trajectory=trajectory(chain, expectation),
        usage=attempts.usage,
        **lists,
    )


def explain(verdict: Verdict) -> str:
    """One readable sentence for ``gen_ai.evaluation.explanation``.

    It names the expectation, the number of tool calls and how many went wrong,
    and, for a failure, the score and every reason, most basic first.
    """
    calls = plural(len(verdict.chain), "tool call")
    troubles = [
        f"{len(entries)} {word}"
        for entries, word in (
            (verdict.errored_tool_calls, "errored"),
            (verdict.refused_tool_calls, "refused"),
            (verdict.pending_tool_calls, "pending"),
        )
        if entries
    ]
    if troubles:
        calls += f" ({', '.join(troubles)})"
    if verdict.passed:
        return f"Expectation '{verdict.expectation}' passed: {calls}, all checks passed."
    if not verdict.failed:
        return f"Expectation '{verdict.expectation}' not evaluated: {calls}; {'; '.join(verdict.unevaluated_checks)}."
    reasons = name_problems(verdict) + verdict.order_violations + verdict.policy_violations
    return f"Expectation '{verdict.expectation}' failed with score {verdict.score:.2f} over {calls}: {'; '.join(reasons)}."
