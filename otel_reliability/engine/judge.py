"""Judging assembled runs: the expectation that applies to a run, then the matcher.

Precedence: an inline ``expect(...)`` beats the run span's ``reliability.expect.*``
attributes beats the first matching file rule; the default expectation covers the rest.
An expectation with a ``sample_rate`` below 1 judges only the runs its trace-id hash
selects (``sampling``); the others get the default expectation, as runs no rule selects
do. Every result names its evaluator: this package's version and the applied
expectation's digest.
"""

from __future__ import annotations

import time
from typing import Sequence

from ..expectations import DEFAULT_EXPECTATION, Expectation, ExpectationSources, load_all, select
from ..matcher import evaluate
from ..model import Run
from ..results import Evaluator, RunResult, SamplingDecision
from ..version import VERSION
from .sampling import SAMPLED, SKIPPED, sampled
from .unmatched import ExpectationUse


class Engine:
    """Judges assembled runs against the loaded expectations.

    >>> Engine().expectation_for(Run(1, 2, "calc", "invoke_agent calc", 0, 1)).name
    'default'
    """

    def __init__(
        self,
        expectations: ExpectationSources = (),
        default_expectation: Expectation = DEFAULT_EXPECTATION,
    ) -> None:
        self.expectations: list[Expectation] = load_all(expectations)
        self.default_expectation = default_expectation
        self.use = ExpectationUse(self.expectations)  # which loaded ones judged something (``unmatched``)

    def expectation_for(
        self, run: Run, inline: Expectation | None = None, rules: Sequence[Expectation] | None = None
    ) -> Expectation:
        """Inline beats span attributes beats file rules; the default covers the rest.
        ``rules``: the expectations a caller took for a whole trace (a reload replaces
        ``expectations`` between traces, see ``reload``); default the ones in force."""
        if inline is not None:
            return inline
        chosen = select(self.expectations if rules is None else rules, run.agent, run.span_name, run.attributes)
        if chosen is None:
            return self.default_expectation
        self.use.chosen(chosen.name)
        return chosen

    def judge(self, run: Run, inline: Expectation | None = None, rules: Sequence[Expectation] | None = None) -> RunResult:
        """The run's verdict under its expectation, or under the default one when that
        expectation's ``sample_rate`` skips the run's trace."""
        expectation = self.expectation_for(run, inline, rules)
        decision = None
        if expectation.sample_rate < 1.0 and expectation is not self.default_expectation:
            chosen = sampled(run.trace_id, expectation.sample_rate)
            decision = SamplingDecision(expectation.name, SAMPLED if chosen else SKIPPED)
            if not chosen:
                expectation = self.default_expectation
        verdict = evaluate(run, expectation)
        return RunResult(
            run.trace_id,
            run.span_id,
            run.agent,
            expectation.name,
            verdict,
            time.time(),
            run.start_ns,
            run.end_ns,
            evaluator=Evaluator(VERSION, expectation.digest),
            sampling=decision,
            inferred=run.inferred,
            agent_named=run.agent_named,
            agent_version=run.agent_version,
        )
