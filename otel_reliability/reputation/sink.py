"""Reputation as one of the engine's sinks: every judgement becomes evidence about its agent.

The engine hands over each run with its output, the ``gen_ai.evaluation.result`` events
other evaluators put on its spans, and its calls an access policy stopped; this sink
turns them into evidence and appends it to the agent's window (a re-judgement replaces
the run's entry, so a run counts once). It remembers which run spans it recorded, so that
a judge reporting on a run after the fact (``ReputationSpanProcessor``) can amend it, and
keeps what such a judge said before the run was recorded until it is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Mapping, Sequence

from otel_reliability.engine import Judgement, SinkUnavailable
from otel_reliability.reputation.evidence import Evidence
from otel_reliability.reputation.tracker import Observed, Reputation
from otel_reliability.stores.base import passing_fault

_MAX_REMEMBERED = 10_000


class ReputationSink:
    """Records every verdict in ``reputation``; closes it only when ``owned``."""

    name = "reputation"

    def __init__(self, reputation: Reputation, *, owned: bool = False) -> None:
        self.reputation = reputation
        self._owned = owned
        self._lock = threading.Lock()
        self._recorded: OrderedDict[int, tuple[str, int]] = OrderedDict()  # run span id → (agent, trace id)
        self._early: OrderedDict[int, list[Evidence]] = OrderedDict()  # run span id → a judge's evidence

    def publish(self, judgements: Sequence[Judgement]) -> None:
        """Record the judgements; ``SinkUnavailable`` when the standings store failed in a way
        that may pass (the engine holds them and offers them again)."""
        observed = self._observed(judgements)
        fresh = [seen for seen, j in zip(observed, judgements, strict=True) if not j.late]
        late = [seen for seen, j in zip(observed, judgements, strict=True) if j.late]
        try:
            # One transaction, fresh then late (a late one replaces the entry a fresh one of the
            # same batch made): a batch that failed wrote nothing, and is offered again whole.
            if fresh or late:
                self.reputation.record_together(fresh, late)
        except Exception as exc:
            reason = passing_fault(exc)
            if reason is None:
                raise
            raise SinkUnavailable(reason, str(exc)) from exc

    def close(self) -> None:
        if self._owned:
            self.reputation.close()

    def recorded(self, run_span_id: int) -> tuple[str, int] | None:
        """The agent and trace of a run recorded here, if it is still remembered."""
        with self._lock:
            return self._recorded.get(run_span_id)

    def hold(self, run_span_id: int, evidence: list[Evidence]) -> bool:
        """Keep a judge's evidence about a run not recorded yet; False when it already is."""
        with self._lock:
            if run_span_id in self._recorded:
                return False
            self._early.setdefault(run_span_id, []).extend(evidence)
            while len(self._early) > _MAX_REMEMBERED:
                self._early.popitem(last=False)
            return True

    def evaluations(self, events: Sequence[Mapping[str, Any]]) -> list[Evidence]:
        items = (self.reputation.evaluation(attributes) for attributes in events)
        return [item for item in items if item is not None]

    def _observed(self, judgements: Sequence[Judgement]) -> list[Observed]:
        """Each judgement with its evidence, remembered as recorded (one lock for the batch)."""
        external = [self.evaluations(j.evaluations) if j.evaluations else [] for j in judgements]
        recorded, early = self._recorded, self._early
        with self._lock:
            for judgement, evidence in zip(judgements, external, strict=True):
                result = judgement.result
                if early:
                    evidence += early.pop(result.run_span_id, ())
                recorded[result.run_span_id] = (result.agent, result.trace_id)
                recorded.move_to_end(result.run_span_id)
            while len(recorded) > _MAX_REMEMBERED:
                recorded.popitem(last=False)
        return [
            Observed(j.result, j.run.output, evidence, j.denied_span_ids) for j, evidence in zip(judgements, external, strict=True)
        ]
