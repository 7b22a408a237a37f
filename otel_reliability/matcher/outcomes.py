"""Not a check: the tools of the run's errored, refused and pending attempts, listed for the
verdict (``errored_tool_calls`` …) so that a reader sees why without reading the chain."""

from __future__ import annotations

from otel_reliability.expectations import Expectation
from otel_reliability.matcher.checks import Attempts, CheckResult
from otel_reliability.model import ERROR, PENDING, REFUSED

_FIELDS = {ERROR: "errored_tool_calls", REFUSED: "refused_tool_calls", PENDING: "pending_tool_calls"}


def check(attempts: Attempts, expectation: Expectation) -> CheckResult:
    lists: dict[str, list[str]] = {name: [] for name in _FIELDS.values()}
    for attempt in attempts.named:
        name = _FIELDS.get(attempt.outcome)
        if name is not None:
            lists[name].append(attempt.tool)
    return CheckResult(lists=lists)
