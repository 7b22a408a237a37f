"""``ReputationSpanProcessor``: what reputation still needs from spans in process.

The engine hands reputation every verdict with its run's output, other evaluators'
events and denied calls (``ReputationSink``). Two things happen outside a run, so they
are this processor's, between ``ReliabilitySpanProcessor`` and the exporting processor
(``ReliabilitySpanProcessor(reputation=...)`` wires it so); it forwards every span:

- with an access policy, it marks the tool spans of agents the policy denies the tool
  ``reliability.policy.denied`` (an enriched copy goes to the exporter) and counts them —
  the audit view, after the fact: those calls did run, and count as evidence;
- a judge that reports on a run after it ended (a ``gen_ai.evaluation.result`` event on a
  span linked to the run span, or its child) amends that run's evidence; when the verdict
  is not recorded yet, the sink keeps the evidence until it is.

Which span is a run or a tool, and whose, is the adapters' answer. On the application
thread this costs one dict insert per span start and one pop per end, plus an adapter
read for tool spans under a policy and spans with events.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_reliability.adapters import to_record
from otel_reliability.expectations import Expectation
from otel_reliability.model import Role, SpanRecord
from otel_reliability.reputation.policy import PermissionDenied
from otel_reliability.reputation.sink import ReputationSink
from otel_reliability.reputation.tracker import DENIED, DENIED_REASON, GRADE_ATTRIBUTE
from otel_reliability.sources.sdk import from_ended_span, from_readable_span, with_additions

if TYPE_CHECKING:
    from otel_reliability.reputation.tracker import Reputation

logger = logging.getLogger(__name__)

_MAX_OPEN = 100_000
_MAX_DEPTH = 256


class ReputationSpanProcessor(SpanProcessor):
    """Policy marks and after-the-fact judges for ``reputation``; forwards every span to ``span_processor``."""

    def __init__(self, reputation: Reputation, sink: ReputationSink, span_processor: SpanProcessor | None = None) -> None:
        self._reputation = reputation
        self._sink = sink
        self._next = span_processor
        self._open: dict[int, Span] = {}
        self._police = reputation.policy is not None

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self._open[span.context.span_id] = span
        if len(self._open) > _MAX_OPEN:
            self._open.pop(next(iter(self._open)), None)
        if self._next is not None:
            self._next.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        forward = span
        try:
            if self._police or span.events:
                forward = self._observe(span)
        except Exception:  # reputation must never stop a span from being exported
            logger.exception("otel-reliability reputation could not read span %r", getattr(span, "name", span))
        finally:
            self._open.pop(span.context.span_id, None)
            if self._next is not None:
                self._next.on_end(forward)

    def shutdown(self) -> None:
        if self._next is not None:
            self._next.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._next.force_flush(timeout_millis) if self._next is not None else True

    def _observe(self, span: ReadableSpan) -> ReadableSpan:
        record = to_record(from_ended_span(span))
        if record.evaluations:
            self._after_the_fact(span, record)
        if self._police and record.role is Role.TOOL and not record.policy_denied and record.tool_name:
            return self._police_tool(span, record)  # the call ran: mark it for the audit
        return span

    def _after_the_fact(self, span: ReadableSpan, record: SpanRecord) -> None:
        """A judge's events about a run that has ended: the run span is its parent or a link."""
        candidates = [link.context.span_id for link in span.links or ()]
        if span.parent is not None:
            candidates.append(span.parent.span_id)
        for run_span_id in candidates:
            recorded = self._sink.recorded(run_span_id)
            if recorded is None:
                held = self._open.get(run_span_id)  # ended, and waiting for its verdict
                if held is None or held.end_time is None or to_record(from_ended_span(held)).role is not Role.AGENT_RUN:
                    continue  # an open run: the engine reads this span with the run's others
                evidence = self._sink.evaluations(record.evaluations)
                if self._sink.hold(run_span_id, evidence):
                    return
                recorded = self._sink.recorded(run_span_id)
                if recorded is None:
                    return
            agent, trace_id = recorded
            self._reputation.amend(agent, self._sink.evaluations(record.evaluations), trace_id=trace_id, run_span_id=run_span_id)
            return

    def _police_tool(self, span: ReadableSpan, record: SpanRecord) -> ReadableSpan:
        agent, tool = self._agent_of(span), record.tool_name
        if agent is None or tool is None:
            return span
        decision = self._reputation.check_permission(agent, tool)
        if decision.allowed:
            return span
        self._reputation.metrics.denied(agent, tool)
        logger.info("otel-reliability: %s", PermissionDenied(decision))
        marks = {DENIED: True, DENIED_REASON: decision.reason, GRADE_ATTRIBUTE: decision.grade.value}
        return with_additions(span, marks)

    def _agent_of(self, span: ReadableSpan) -> str | None:
        """The nearest open agent-run span's agent."""
        parent = span.parent
        for _ in range(_MAX_DEPTH):
            ancestor = self._open.get(parent.span_id) if parent is not None else None
            if ancestor is None:
                return None
            record = to_record(from_readable_span(ancestor))
            if record.role is Role.AGENT_RUN:
                return record.agent_name or record.name
            parent = ancestor.parent
        return None


def wire_reputation(
    reputation: Reputation,
    span_processor: SpanProcessor | None,
    sinks: Sequence[Any],
    expectations: Sequence[Expectation | str | Path],
) -> tuple[SpanProcessor, list[Any], Sequence[Expectation | str | Path]]:
    """For ``ReliabilitySpanProcessor(reputation=...)``: reputation as a sink of the engine, this
    processor in front of the exporting one, and the expectations both judge by (the
    reputation's own when none are given)."""
    sink = ReputationSink(reputation)
    expectations = reputation.learn(expectations) if expectations else reputation.expectations
    return ReputationSpanProcessor(reputation, sink, span_processor), [*sinks, sink], expectations
