"""Reputation as OpenTelemetry metrics (SPEC §6).

- ``agent.reliability.reputation.score`` — gauge, 0–100, by ``gen_ai.agent.name`` and
  ``reliability.grade``: each agent's current standing. Observed from the standings
  store at each collection, so every process reporting on a shared store reports the
  same figures, and an agent's old grade series stops when its grade changes.
- ``agent.reliability.reputation.grade`` — gauge, the grade's rank (4 Thiqah … 0
  Matruk) by agent: one series per agent, for alerts such as "rank < 3".

  An unrated agent (no evidence yet) has neither series: it has no score to report.
- ``agent.reliability.policy.denied`` — counter of tool calls the access policy
  denied, by agent and ``gen_ai.tool.name``.

Agent and tool names come from spans, so each passes at most ``max_label_values``
distinct values; later ones are recorded as ``_other``.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

from otel_reliability.emitters.metrics import AGENT, TOOL, CappedLabel
from otel_reliability.reputation.standing import Standing

logger = logging.getLogger(__name__)

GRADE = "reliability.grade"
SCORE_METRIC = "agent.reliability.reputation.score"
GRADE_METRIC = "agent.reliability.reputation.grade"
DENIED_METRIC = "agent.reliability.policy.denied"


class ReputationMetrics:
    """The reputation instruments on one meter, fed by ``standings`` at each collection.

    >>> from opentelemetry.sdk.metrics import MeterProvider
    >>> m = ReputationMetrics(lambda: [], MeterProvider())
    >>> m.denied("calc", "delete_files")
    """

    def __init__(
        self,
        standings: Callable[[], Iterable[Standing]],
        meter_provider: MeterProvider | None = None,
        *,
        max_label_values: int = 100,
    ) -> None:
        meter = metrics.get_meter("otel_reliability.reputation", meter_provider=meter_provider)
        self._standings = standings
        self._agent = CappedLabel(max_label_values)
        self._tool = CappedLabel(max_label_values)
        meter.create_observable_gauge(
            SCORE_METRIC,
            callbacks=[self._observe_scores],
            unit="{score}",
            description="Agent reputation score (0-100) over its rolling window, by grade",
        )
        meter.create_observable_gauge(
            GRADE_METRIC,
            callbacks=[self._observe_grades],
            unit="{rank}",
            description="Agent reputation grade as a rank: 4 Thiqah, 3 Saduq, 2 Saduq Hadith, 1 Da'if, 0 Matruk",
        )
        self._denied = meter.create_counter(
            DENIED_METRIC, unit="{call}", description="Tool calls the grade-based access policy denied"
        )

    def denied(self, agent: str, tool: str) -> None:
        """Count one tool call the access policy denied."""
        self._denied.add(1, {AGENT: self._agent(agent), TOOL: self._tool(tool)})

    def _current(self) -> list[Standing]:
        try:
            return list(self._standings())
        except Exception as exc:  # a store that is down must not break the metrics pipeline (said, not traced:
            # it is said on every scrape while the store is down)
            logger.error("otel-reliability could not read standings for the reputation gauges: %s", exc)
            return []

    def _observe_scores(self, options: CallbackOptions) -> Iterable[Observation]:
        for standing in self._current():
            if standing.score is not None:  # an unrated agent has no score to report
                yield Observation(standing.score, {AGENT: self._agent(standing.agent), GRADE: standing.grade_label})

    def _observe_grades(self, options: CallbackOptions) -> Iterable[Observation]:
        for standing in self._current():
            if standing.grade is not None:
                yield Observation(standing.grade.rank, {AGENT: self._agent(standing.agent)})
