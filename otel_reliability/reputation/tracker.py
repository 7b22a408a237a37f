"""``Reputation``: evidence from every verdict into the agent's rolling standing, and access by grade.

In process, ``ReliabilitySpanProcessor(..., reputation=reputation)`` wires reputation in::

    reputation = Reputation("otel-reliability.db", policy="policy.yaml", expectations=["expect.yaml"])
    provider.add_span_processor(ReliabilitySpanProcessor(BatchSpanProcessor(exporter), reputation=reputation))

    @reputation.guard(agent="weather-agent")
    def send_email(to: str, body: str) -> str: ...   # raises PermissionDenied below the grade

Elsewhere (the receiver, a batch job) call ``record(result, output=…)`` per verdict,
``feedback(...)`` for user or reviewer judgements, and ``standings()`` to read.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from opentelemetry import trace

from otel_reliability.expectations import Expectation, load_expectations
from otel_reliability.model import POLICY_DENIED
from otel_reliability.reputation.config import ReputationConfig, load_config, validate_file
from otel_reliability.reputation.evidence import (
    SIDQ,
    Evidence,
    case_key,
    chain_signature,
    evaluation_evidence,
    run_evidence,
)
from otel_reliability.reputation.metrics import ReputationMetrics
from otel_reliability.reputation.policy import AccessPolicy, Decision, PermissionDenied
from otel_reliability.reputation.report import standing_markdown
from otel_reliability.reputation.standing import Entry, Standing, WindowEntry
from otel_reliability.reputation.stores import StandingStore, open_standings
from otel_reliability.stores.spec import default_store
from otel_reliability.results import RunResult



@dataclass(slots=True)
class Observed:
    """A verdict with what else its run's spans said, for ``Reputation.record_many``.

    >>> from otel_reliability.model import Verdict
    >>> Observed(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0), output="4").output
    '4'
    """

    result: RunResult
    output: str | None = None  # the run's final output (``Run.output``)
    external: Sequence[Evidence] = ()  # other evaluators' judgements of the run
    denied_span_ids: frozenset[int] = frozenset()  # its tool calls an access policy stopped before they ran

DENIED = POLICY_DENIED
DENIED_REASON = "reliability.policy.reason"
GRADE_ATTRIBUTE = "reliability.grade"

_DEFAULT: weakref.ref[Reputation] | None = None


class Reputation:
    """Agents' standings over their last N evaluations, fed by verdicts and external evidence.

    >>> reputation = Reputation(":memory:", config=ReputationConfig(missing_dimension="renormalize"))
    >>> reputation.feedback("calc", True, "the user confirmed the answer").grade.value
    'Thiqah'
    >>> reputation.close()
    """

    def __init__(
        self,
        store: str | Path | StandingStore | None = None,
        *,
        config: ReputationConfig | str | Path | None = None,
        policy: AccessPolicy | str | Path | None = None,
        expectations: Sequence[Expectation | str | Path] = (),
        meter_provider: Any = None,
        max_label_values: int = 100,
        approve: Callable[[Decision], bool] | None = None,
        cache_seconds: float = 1.0,
    ) -> None:
        global _DEFAULT
        self.config = load_config(config)
        self.policy = policy if isinstance(policy, AccessPolicy) or policy is None else validate_file(AccessPolicy, policy)
        self.expectations: list[Expectation] = []
        self._by_name: dict[str, Expectation] = {}
        self.learn(expectations)
        if store is None:
            store = default_store()
        self._store: StandingStore = open_standings(store, self.config) if isinstance(store, (str, Path)) else store
        self.store_spec = store if isinstance(store, (str, Path)) else None
        self._closed = False
        self.metrics = ReputationMetrics(self._observed, meter_provider, max_label_values=max_label_values)
        self._approve = approve
        self._cache_seconds = cache_seconds
        self._cache: dict[str, tuple[float, Standing | None]] = {}
        self._cache_lock = threading.Lock()
        _DEFAULT = weakref.ref(self)

    # -- evidence in ------------------------------------------------------------------

    def record(
        self,
        result: RunResult,
        *,
        output: str | None = None,
        expectation: Expectation | None = None,
        external: Iterable[Evidence] = (),
        denied_span_ids: Iterable[int] = (),
    ) -> Standing:
        """Turn one verdict into evidence and append it to the agent's window.

        ``output`` is the run's final output as its span recorded it (``Run.output``);
        ``expectation`` defaults to the loaded one the verdict names; ``external`` adds
        evidence other evaluators gave about this run.
        """
        entry = self._entry(result, output, expectation, external, denied_span_ids)
        return self._remember(self._store.append(entry))

    def record_many(self, verdicts: Iterable[RunResult | Observed], *, supersede: bool = False) -> dict[str, Standing]:
        """Record many verdicts (each alone or ``Observed`` with more) in one transaction.

        The same standings as ``record`` one by one, at a fraction of the round trips:
        for receivers that judge many runs at once. With ``supersede`` each verdict
        replaces the one recorded for the same agent and run (a run re-judged after a
        late span counts once). Returns each agent's new standing.
        """
        return self.record_together((), verdicts) if supersede else self.record_together(verdicts, ())

    def record_together(
        self, fresh: Iterable[RunResult | Observed], superseding: Iterable[RunResult | Observed]
    ) -> dict[str, Standing]:
        """``fresh`` verdicts, then ``superseding`` ones (each replacing the verdict recorded for the
        same agent and run), in one transaction: a batch that failed wrote nothing, so offering
        it again counts no run twice. Returns each agent's new standing."""
        entries = []
        for items, supersedes in ((fresh, False), (superseding, True)):
            for item in items:
                seen = item if isinstance(item, Observed) else Observed(item)
                entry = self._entry(seen.result, seen.output, None, seen.external, seen.denied_span_ids)
                entry.supersedes = supersedes
                entries.append(entry)
        standings = self._store.append_many(entries)
        for standing in standings.values():
            self._remember(standing)
        return standings

    def _entry(
        self,
        result: RunResult,
        output: str | None,
        expectation: Expectation | None,
        external: Iterable[Evidence],
        denied_span_ids: Iterable[int],
    ) -> Entry:
        if expectation is None:
            expectation = self._by_name.get(result.expectation)
        evidence = run_evidence(
            result,
            expectation,
            output=output,
            denied_span_ids=frozenset(denied_span_ids),
            fact_confidence=self.config.fact_confidence,
        )
        evidence.extend(external)
        case = case_key(result)
        return Entry(
            agent=result.agent,
            evidence=tuple(evidence),
            evaluated_at=result.evaluated_at,
            trace_id=result.trace_id,
            run_span_id=result.run_span_id,
            expectation=result.expectation,
            passed=result.passed,
            case=case,
            signature=chain_signature(result.verdict.chain) if case is not None else None,
        )

    def on_result(self, result: RunResult) -> None:
        """``ReliabilitySpanProcessor(on_result=reputation.on_result)``: record without output or events.

        ``ReliabilitySpanProcessor(reputation=...)`` wires reputation into the engine instead, which adds both.
        """
        self.record(result)

    def evaluation(self, attributes: Any) -> Evidence | None:
        """A ``gen_ai.evaluation.result`` event's attributes as evidence, weighted as configured."""
        name = str(attributes.get("gen_ai.evaluation.name") or "unnamed")
        rule = self.config.evaluator(name)
        return evaluation_evidence(
            attributes,
            confidence=rule.confidence,
            dimension=rule.dimension,
            pass_threshold=self.config.evaluation_pass_threshold,
        )

    def feedback(
        self,
        agent: str,
        passed: bool,
        detail: str = "",
        *,
        source: str = "feedback",
        dimension: str = SIDQ,
        confidence: float | None = None,
        trace_id: int | None = None,
        run_span_id: int | None = None,
        at: float | None = None,
    ) -> Standing:
        """External judgement of an agent (a user's thumbs-up, a reviewer's verdict).

        With ``trace_id`` and ``run_span_id`` of a run still in the window it joins that
        run's evidence; otherwise it counts as an evaluation of its own.
        """
        item = Evidence(dimension, source, passed, detail, self.config.feedback_confidence if confidence is None else confidence)
        return self.amend(agent, [item], trace_id=trace_id, run_span_id=run_span_id, at=at)

    def amend(
        self,
        agent: str,
        evidence: Sequence[Evidence],
        *,
        trace_id: int | None = None,
        run_span_id: int | None = None,
        at: float | None = None,
    ) -> Standing:
        """Add evidence about a run after its verdict (see ``feedback``)."""
        at = time.time() if at is None else at
        return self._remember(self._store.amend(agent, trace_id, run_span_id, evidence, at))

    # -- standings out ----------------------------------------------------------------

    def standing(self, agent: str, *, fresh: bool = False) -> Standing | None:
        """The agent's standing; cached for ``cache_seconds`` unless ``fresh``."""
        if not fresh:
            with self._cache_lock:
                cached = self._cache.get(agent)
            if cached is not None and time.monotonic() - cached[0] < self._cache_seconds:
                return cached[1]
        standing = self._store.standing(agent)
        with self._cache_lock:
            self._cache[agent] = (time.monotonic(), standing)
        return standing

    def standings(self) -> list[Standing]:
        return self._store.standings()

    def window(self, agent: str, limit: int | None = None) -> list[WindowEntry]:
        return self._store.window(agent, limit)

    def report(self, agent: str, *, evidence_limit: int = 20) -> str:
        """The article's Markdown report of the agent's standing."""
        standing = self._store.standing(agent)
        if standing is None:
            raise KeyError(f"no standing for agent {agent!r}")
        return standing_markdown(standing, self._store.window(agent), evidence_limit=evidence_limit)

    # -- access by grade --------------------------------------------------------------

    def check_permission(self, agent: str, action: str) -> Decision:
        """May ``agent`` take ``action`` now? Answered by the policy from the current standing."""
        if self.policy is None:
            raise RuntimeError("no access policy: give Reputation(policy=...) a policy or a policy file")
        standing = self.standing(agent)
        return self.policy.decide(agent, action, None if standing is None else standing.grade)

    def enforce(self, agent: str, action: str) -> Decision:
        """``check_permission``, then ask the approver when the policy needs one; raise when denied.

        A denial marks the current span (the tool's span, inside a tool function)
        ``reliability.policy.denied`` and counts it in ``agent.reliability.policy.denied``.
        """
        decision = self.check_permission(agent, action)
        if decision.allowed and decision.needs_approval:
            if self._approve is None:
                decision = replace(decision, allowed=False, reason=decision.reason + "; needs manual approval and no approver is configured")
            elif self._approve(decision):
                decision = replace(decision, needs_approval=False, reason=decision.reason + "; approved")
            else:
                decision = replace(decision, allowed=False, reason=decision.reason + "; approval refused")
        if not decision.allowed:
            span = trace.get_current_span()
            if span.is_recording():
                span.set_attributes({DENIED: True, DENIED_REASON: decision.reason, GRADE_ATTRIBUTE: decision.grade.value})
            self.metrics.denied(agent, action)
            raise PermissionDenied(decision)
        return decision

    def guard(
        self,
        action: str | None = None,
        *,
        agent: str | Callable[[], str],
        on_denied: Callable[[PermissionDenied], Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate a tool so that the policy is asked before each call; it does not run when denied.

        ``action`` defaults to the function's name; ``agent`` is a name or a callable
        giving it at call time. When denied, the call raises ``PermissionDenied``, or
        returns ``on_denied(error)`` when given (e.g. a message for the model).
        """

        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            name = action or fn.__name__

            def check() -> Any:
                who = agent() if callable(agent) else agent
                try:
                    self.enforce(who, name)
                except PermissionDenied as denied:
                    if on_denied is None:
                        raise
                    return _Denied(on_denied(denied))
                return None

            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                    denied = check()
                    return denied.value if denied is not None else await fn(*args, **kwargs)

                return guarded_async

            @functools.wraps(fn)
            def guarded(*args: Any, **kwargs: Any) -> Any:
                denied = check()
                return denied.value if denied is not None else fn(*args, **kwargs)

            return guarded

        return decorate

    # -- wiring -----------------------------------------------------------------------

    def close(self) -> None:
        self._closed = True
        self._store.close()

    def _observed(self) -> list[Standing]:
        return [] if self._closed else self._store.standings()

    def learn(self, expectations: Sequence[Expectation | str | Path]) -> list[Expectation]:
        """Load expectations (objects or files) and know them by name, for their ``expected_output``;
        returns the ones loaded."""
        files = [e for e in expectations if not isinstance(e, Expectation)]
        loaded = [e for e in expectations if isinstance(e, Expectation)] + load_expectations(files)
        for expectation in loaded:
            if expectation.name not in self._by_name:
                self.expectations.append(expectation)
            self._by_name[expectation.name] = expectation
        return loaded

    def _remember(self, standing: Standing) -> Standing:
        with self._cache_lock:
            self._cache[standing.agent] = (time.monotonic(), standing)
        return standing


class _Denied:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def check_permission(agent: str, action: str) -> Decision:
    """The article's ``check_agent_permission``: asks the most recently created ``Reputation``.

    >>> reputation = Reputation(":memory:", policy=AccessPolicy(default="allow"))
    >>> check_permission("weather-agent", "query_weather").allowed
    True
    >>> reputation.close()
    """
    reputation = _DEFAULT() if _DEFAULT is not None else None
    if reputation is None:
        raise RuntimeError("no Reputation has been created in this process")
    return reputation.check_permission(agent, action)
