"""``ReputationSpanProcessor``: what reputation needs from spans, with no change to the reliability processor.

It sits between ``ReliabilitySpanProcessor`` and the exporting processor
(``Reputation.processor()`` wires it so), forwards every span, and adds one job:

- it keeps each open span until it ends, so that when the verdict of a run arrives
  (``on_result``, called by the reliability processor before it forwards the run
  span) the run span is at hand: its final output (read by the same adapters that
  fill ``Run.output``) and the ``gen_ai.evaluation.result`` events on it;
- it collects ``gen_ai.evaluation.result`` events other evaluators put on the run's
  other spans (they end, and are forwarded, before the run span) and the tool spans
  whose call ``Reputation.guard`` blocked (marked ``reliability.policy.denied`` while
  open): those attempts are not held against the agent;
- with an access policy, it marks tool spans of agents the policy denies the tool
  ``reliability.policy.denied`` (an enriched copy goes to the exporter) and counts
  them — the audit view, after the fact: those calls did run, and count as evidence;
- an evaluator span that ends after its run was recorded (a post-hoc judge) amends
  that run's evidence.

On the application thread it does one dict insert per span start and one pop per
end; the rest happens only for spans with events, tool spans under a policy, and
once per run on the reliability processor's worker.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_reliability.adapters import to_record
from otel_reliability.adapters.genai import RUN_OPERATIONS
from otel_reliability.processor import with_additions
from otel_reliability.reputation.evidence import Evidence
from otel_reliability.reputation.policy import PermissionDenied
from otel_reliability.reputation.tracker import DENIED, DENIED_REASON, GRADE_ATTRIBUTE
from otel_reliability.model import EVALUATION_EVENT
from otel_reliability.results import RunResult
from otel_reliability.sources.sdk import attributes_view, from_readable_span

if TYPE_CHECKING:
    from otel_reliability.reputation.tracker import Reputation

logger = logging.getLogger(__name__)

_MAX_OPEN = 100_000
_MAX_PENDING = 10_000
_MAX_RECORDED = 10_000


@dataclass(slots=True)
class _Gathered:
    evidence: list[Evidence] = field(default_factory=list)
    denied: set[int] = field(default_factory=set)


class ReputationSpanProcessor(SpanProcessor):
    """Feeds a ``Reputation`` from spans; forwards every span to ``span_processor``."""

    def __init__(self, reputation: Reputation, span_processor: SpanProcessor | None = None) -> None:
        self._reputation = reputation
        self._next = span_processor
        self._open: dict[int, Span] = {}
        self._lock = threading.Lock()
        self._pending: OrderedDict[int, _Gathered] = OrderedDict()  # by top-level run span id
        self._recorded: OrderedDict[int, tuple[str, int]] = OrderedDict()  # run span id -> (agent, trace id)
        self._police = reputation.policy is not None

    # -- the span pipeline --------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self._open[_span_id(span)] = span
        if len(self._open) > _MAX_OPEN:
            self._open.pop(next(iter(self._open)), None)
        if self._next is not None:
            self._next.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        forward = span
        try:
            if self._police or _has_events(span) or _attributes(span).get(DENIED) is True:
                forward = self._observe(span)
        except Exception:  # reputation must never stop a span from being exported
            logger.exception("otel-reliability reputation could not read span %r", getattr(span, "name", span))
        finally:
            self._open.pop(_span_id(span), None)
            if self._next is not None:
                self._next.on_end(forward)

    def shutdown(self) -> None:
        if self._next is not None:
            self._next.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._next.force_flush(timeout_millis) if self._next is not None else True

    # -- the verdict --------------------------------------------------------------

    def on_result(self, result: RunResult) -> None:
        """Record a verdict with the run's output, evaluator events and denied calls."""
        span = self._open.get(result.run_span_id)
        output = None
        own: list[Evidence] = []
        if span is not None:
            output = to_record(from_readable_span(span)).output
            own = self._evaluations(span)
        with self._lock:
            gathered = self._pending.pop(result.run_span_id, None) or _Gathered()
            self._recorded[result.run_span_id] = (result.agent, result.trace_id)
            while len(self._recorded) > _MAX_RECORDED:
                self._recorded.popitem(last=False)
        self._reputation.record(
            result, output=output, external=[*own, *gathered.evidence], denied_span_ids=gathered.denied
        )

    # -- reading spans ------------------------------------------------------------

    def _observe(self, span: ReadableSpan) -> ReadableSpan:
        if span.context.span_id in self._recorded:
            return span  # a judged run span on its way out: on_result has read it
        attributes = _attributes(span)
        blocked = attributes.get(DENIED) is True  # a guard stopped this call before it ran
        forward = span
        if self._police and not blocked and _tool_name(attributes) is not None:
            forward = self._police_tool(span, attributes)  # the call ran: mark it for the audit
        evidence = self._evaluations(span) if _has_events(span) else []
        if not evidence and not blocked:
            return forward
        run_id = self._top_run(span)
        if run_id is None:  # a judge's span after the run: linked to it, or its child
            candidates = [link.context.span_id for link in span.links or ()]
            if span.parent is not None:
                candidates.append(span.parent.span_id)
            run_id = next((c for c in candidates if c in self._recorded), None)
        if run_id is None:
            return forward
        with self._lock:
            recorded = self._recorded.get(run_id)
            if recorded is None:
                gathered = self._pending.setdefault(run_id, _Gathered())
                gathered.evidence.extend(evidence)
                if blocked:
                    gathered.denied.add(span.context.span_id)
                while len(self._pending) > _MAX_PENDING:
                    self._pending.popitem(last=False)
                return forward
        if evidence:  # a post-hoc evaluator: the run's verdict is already recorded
            agent, trace_id = recorded
            self._reputation.amend(agent, evidence, trace_id=trace_id, run_span_id=run_id)
        return forward

    def _evaluations(self, span: ReadableSpan) -> list[Evidence]:
        items = []
        for event in span.events:
            if event.name == EVALUATION_EVENT:
                item = self._reputation.evaluation(event.attributes or {})
                if item is not None:
                    items.append(item)
        return items

    def _top_run(self, span: ReadableSpan) -> int | None:
        """The outermost open agent-run span above ``span`` (or ``span`` itself), if any."""
        found = span.context.span_id if _is_run(span, _attributes(span)) else None
        parent = span.parent
        seen = 0
        while parent is not None and seen < 256:
            ancestor = self._open.get(parent.span_id)
            if ancestor is None:
                break
            if _is_run(ancestor, _attributes(ancestor)):
                found = parent.span_id
            parent = ancestor.parent
            seen += 1
        return found

    def _agent_of(self, span: ReadableSpan) -> str | None:
        """The nearest open agent-run span's agent name."""
        parent = span.parent
        seen = 0
        while parent is not None and seen < 256:
            ancestor = self._open.get(parent.span_id)
            if ancestor is None:
                return None
            attributes = _attributes(ancestor)
            if _is_run(ancestor, attributes):
                return _agent_name(ancestor, attributes)
            parent = ancestor.parent
            seen += 1
        return None

    def _police_tool(self, span: ReadableSpan, attributes: Any) -> ReadableSpan:
        agent = self._agent_of(span)
        tool = _tool_name(attributes)
        if agent is None or tool is None:
            return span
        decision = self._reputation.check_permission(agent, tool)
        if decision.allowed:
            return span
        self._reputation.metrics.denied(agent, tool)
        logger.info("otel-reliability: %s", PermissionDenied(decision))
        marks = {DENIED: True, DENIED_REASON: decision.reason, GRADE_ATTRIBUTE: decision.grade.value}
        return with_additions(span, marks)


def _span_id(span: Any) -> int:
    context = getattr(span, "_context", None)  # the SDK's field behind the ``context`` property
    return (context if context is not None else span.context).span_id


def _attributes(span: Any) -> Any:
    """The span's attributes for reading, without the SDK property's copy where it allows."""
    storage = getattr(getattr(span, "_attributes", None), "_dict", None)
    return storage if type(storage) is dict else attributes_view(span)


def _has_events(span: Any) -> bool:
    events = getattr(span, "_events", None)  # ``events`` copies the list under a lock
    return bool(events if events is not None else span.events)


def _is_run(span: Any, attributes: Any) -> bool:
    """Spans an adapter may call an agent run (the reliability processor's own test)."""
    if attributes.get("gen_ai.operation.name") in RUN_OPERATIONS:
        return True
    kind = attributes.get("openinference.span.kind")
    return kind == "AGENT" or (kind == "CHAIN" and (span.parent is None or span.parent.is_remote))


def _agent_name(span: ReadableSpan, attributes: Any) -> str:
    for key in ("gen_ai.agent.name", "agent.name", "graph.node.name"):
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    name = span.name or ""
    return name.split(" ", 1)[1] if name.startswith("invoke_agent ") else name


def _tool_name(attributes: Any) -> str | None:
    if attributes.get("gen_ai.operation.name") == "execute_tool":
        value = attributes.get("gen_ai.tool.name")
    elif attributes.get("openinference.span.kind") == "TOOL":
        value = attributes.get("tool.name")
    else:
        return None
    return value if isinstance(value, str) and value else None
