"""The matcher: one run and one expectation in, one ``Verdict`` out. Pure — no I/O.

``evaluate`` composes one module per check, like the tail-sampling processor's
one-file-per-policy layout:

- ``agno`` — Agno ReliabilityEval parity (SPEC §5.1): the name and argument lists;
- ``arguments`` — how an argument spec is compared (``subset`` / ``exact`` / ``ignore``);
- ``agents`` — ``expected_tool_calls_by_agent``;
- ``order`` — ``expected_chain`` with ``order`` = ``exact`` / ``in_order``;
- ``policies`` — ``allowed_tools``, ``forbidden_tools``, ``max_tool_calls``,
  ``max_errors``, ``fail_on``.

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
6. each configured policy (each ``fail_on`` outcome counting as one).

So a verdict is ``PASSED`` exactly when its score is 1.0.
"""

from __future__ import annotations

from otel_reliability.expectations import Expectation
from otel_reliability.matcher import agents, agno, order, policies
from otel_reliability.matcher.wording import name_problems, plural
from otel_reliability.model import ERROR, PENDING, REFUSED, Run, Verdict

__all__ = ["evaluate", "explain"]


def evaluate(run: Run, expectation: Expectation) -> Verdict:
    """Judge ``run``'s tool calls (its members' included) against ``expectation``.

    >>> from otel_reliability.model import OK, Attempt, Run
    >>> run = Run(trace_id=1, span_id=2, agent="calc", span_name="invoke_agent calc", start_ns=0, end_ns=9,
    ...           own_attempts=[Attempt("multiply", {"a": 10}, OK, "calc", ("calc",))])
    >>> evaluate(run, Expectation(name="calc", expected_tool_calls=["multiply"])).eval_status
    'PASSED'
    """
    evidence = run.evidence()
    chain = sorted(evidence, key=lambda a: a.start_ns)  # Run.chain(), without collecting the evidence twice
    named = [a for a in chain if a.tool]
    names = agno.judge(evidence, expectation)
    by_agent = agents.missing_by_agent(named, expectation)
    order_violations = order.order_violations(chain, expectation)
    policy_results = policies.check_policies(named, expectation)
    policy_violations = []
    broken_policies = 0
    for result in policy_results:
        if result.violations:
            policy_violations += result.violations
            broken_policies += 1

    expected = expectation.expected_tool_calls or []
    by_agent_tools = expectation.expected_tool_calls_by_agent
    agent_pairs = sum(len(tools) for tools in by_agent_tools.values()) if by_agent_tools else 0
    total = (
        len(expected)
        + names.judged_attempts
        + len(names.passed_argument_checks)
        + len(names.failed_argument_checks)
        + agent_pairs
        + (expectation.order != "any")
        + len(policy_results)
    )
    failed = (
        len(names.missing_tool_calls)
        + len(names.failed_tool_calls)
        + len(names.failed_argument_checks)
        + len(by_agent)
        + bool(order_violations)
        + broken_policies
    )
    errored, refused, pending = [], [], []
    for attempt in named:
        outcome = attempt.outcome
        if outcome == ERROR:
            errored.append(attempt.tool)
        elif outcome == REFUSED:
            refused.append(attempt.tool)
        elif outcome == PENDING:
            pending.append(attempt.tool)
    # Every failed check lands in one of Agno's three failing lists, the order
    # violations or the policy violations, so this is Agno's PASSED rule extended.
    return Verdict(
        eval_status="PASSED" if failed == 0 else "FAILED",
        expectation=expectation.name,
        failed_tool_calls=names.failed_tool_calls,
        passed_tool_calls=names.passed_tool_calls,
        additional_tool_calls=names.additional_tool_calls,
        missing_tool_calls=names.missing_tool_calls + by_agent,
        failed_argument_checks=names.failed_argument_checks,
        passed_argument_checks=names.passed_argument_checks,
        order_violations=order_violations,
        policy_violations=policy_violations,
        errored_tool_calls=errored,
        refused_tool_calls=refused,
        pending_tool_calls=pending,
        score=(total - failed) / total if total else 1.0,
        chain=chain,
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
    reasons = name_problems(verdict) + verdict.order_violations + verdict.policy_violations
    return f"Expectation '{verdict.expectation}' failed with score {verdict.score:.2f} over {calls}: {'; '.join(reasons)}."
