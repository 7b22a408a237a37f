"""Per-agent expectations for teams: ``expected_tool_calls_by_agent``.

Agno matches names anywhere in the team, so a leader that does a member's work
itself still passes. Here each listed tool must have a clean attempt owned by the
named agent (``Attempt.agent``: the run that made the call, not its ancestors).
A shortfall is reported in ``missing_tool_calls`` — it is a missing call, and
that list already fails the verdict — as ``TOOL (by AGENT)``, or
``TOOL (by AGENT; attempted, never clean)`` when that agent tried and failed.
Per-agent lists do not make a tool "expected" for the Agno name checks. A shortfall in
a run tree where some run names no agent (``Run.agent_named``) may be that run's calls: it is
not evaluated, and the pairs that are satisfied still count.
"""

from __future__ import annotations

from typing import Sequence

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.model import Attempt


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    """One check per (agent, tool) pair; a shortfall joins ``missing_tool_calls``."""
    by_agent = expectation.expected_tool_calls_by_agent
    if not by_agent:
        return CheckResult()
    missing = missing_by_agent(attempts.named, expectation)
    pairs = sum(len(tools) for tools in by_agent.values())
    if missing and attempts.unnamed_agents:
        # a shortfall may be calls of a run no span names: whose they were is unknown
        runs = ", ".join(sorted(attempts.unnamed_agents))
        unevaluated = [f"the expected calls by agent cannot be told: no span names the agent of {runs} (named after its span)"]
        return CheckResult(pairs - len(missing), 0, unevaluated=unevaluated)
    return CheckResult(pairs, len(missing), {"missing_tool_calls": missing})


def missing_by_agent(attempts: Sequence[Attempt], expectation: Expectation) -> list[str]:
    """One entry per (agent, tool) pair of ``expected_tool_calls_by_agent`` that no clean call satisfies.

    Entries follow the mapping's order, then each agent's list order.
    """
    by_agent = expectation.expected_tool_calls_by_agent
    if not by_agent:
        return []
    clean = {(a.agent, a.tool) for a in attempts if a.clean}
    attempted = {(a.agent, a.tool) for a in attempts}
    missing: list[str] = []
    for agent, tools in by_agent.items():
        for tool in tools:
            if (agent, tool) in clean:
                continue
            detail = "; attempted, never clean" if (agent, tool) in attempted else ""
            missing.append(f"{tool} (by {agent}{detail})")
    return missing
