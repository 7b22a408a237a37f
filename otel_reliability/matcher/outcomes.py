"""Not a check: the tools of the run's errored, refused and pending attempts, listed for the
verdict (``errored_tool_calls`` …) so that a reader sees why without reading the chain.

An attempt whose outcome no span records (``Attempt.outcome_known`` False: the instrumentation
traces no tool executions) leaves every check that counts clean calls without evidence, so
the verdict cannot pass on it: it is named among ``unevaluated_checks``."""

from __future__ import annotations

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.model import ERROR, PENDING, REFUSED

_FIELDS = {ERROR: "errored_tool_calls", REFUSED: "refused_tool_calls", PENDING: "pending_tool_calls"}


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    lists: dict[str, list[str]] = {name: [] for name in _FIELDS.values()}
    unrecorded: list[str] = []
    for attempt in attempts.named:
        name = _FIELDS.get(attempt.outcome)
        if name is not None:
            lists[name].append(attempt.tool)
        if not attempt.outcome_known and attempt.tool not in unrecorded:
            unrecorded.append(attempt.tool)
    unevaluated = [f"outcome of {tool} not recorded: no span records the run's tool executions" for tool in unrecorded]
    return CheckResult(lists=lists, unevaluated=unevaluated)
