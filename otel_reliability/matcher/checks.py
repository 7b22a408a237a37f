"""The one shape every check of the matcher shares, as the tail-sampling processor's policies
share one evaluator interface.

A check reads the run's attempts and the expectation and returns a ``CheckResult``: how
many checks it ran, how many failed, the entries it adds to the verdict's lists, and the
checks it could not judge because the spans lack what they need (``unevaluated``, each a
sentence with the reason and, where there is one, the setting that would fix it). A check
that cannot be judged is neither passed nor failed: it is not counted in ``checks``.
``evaluate`` sums them; a new check is one new module with a ``check`` function, listed in
``matcher.CHECKS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from otel_reliability.expectations import Expectation
from otel_reliability.model import Attempt, Usage


@dataclass(slots=True)
class Attempts:
    """A run's attempts, its members' included, in the orders the checks read them, and what
    the run consumed (``budgets.measure``)."""

    evidence: list[Attempt]  # depth-first pre-order: the run's own, then each member's (Agno's order)
    chain: list[Attempt]  # start order
    named: list[Attempt]  # the chain's attempts that have a tool name
    usage: Usage = field(default_factory=Usage)
    # agents of the run's runs that no span names (each called after its span): whose calls are theirs is unknown
    unnamed_agents: frozenset[str] = frozenset()
    # spans of the run and its members that failed and are no call's ("name: error"; ``Run.failed_steps``)
    failed_steps: tuple[str, ...] = ()
    # why a call no span names may never have run (``Run.unseen_calls``, the run's and its members')
    unseen_calls: tuple[str, ...] = ()
    # no run of the tree owns a record of a model turn (``Run.requests_unseen``): a call the model
    # asked for that never ran (refused, pending) cannot be seen
    requests_unseen: bool = False


@dataclass(slots=True)
class CheckResult:
    """What one check found; ``lists`` maps ``Verdict`` list fields to the entries it adds.

    >>> CheckResult(checks=2, failed=1, lists={"order_violations": ["step 2: expected parse, got compute"]}).passed
    False
    """

    checks: int = 0
    failed: int = 0
    lists: dict[str, list[str]] = field(default_factory=dict)
    unevaluated: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.failed == 0


class Check(Protocol):
    def __call__(self, attempts: Attempts, expectation: Expectation) -> CheckResult: ...
