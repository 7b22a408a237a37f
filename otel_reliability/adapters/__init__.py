"""Convention adapters: one span in, one normalised ``SpanRecord`` out.

Each module reads one span convention, detected by attributes (never by framework
name). ``to_record`` tries them in order; a span no adapter claims still becomes a
plain record, because its ids and times are needed to walk parent chains.
A new convention is one new module that implements ``Adapter`` and one line in
``ADAPTERS``.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Protocol

from ..model import EVALUATION_EVENT, POLICY_DENIED, SpanData, SpanRecord
from . import genai, openinference, traceloop, vercel_ai
from .autogen_runtime import AutogenRuntimeAdapter
from .genai import GenAIAdapter
from .genai_events import may_be_genai_event, to_event_record
from .openinference import OpenInferenceAdapter
from .traceloop import TraceloopAdapter
from .vercel_ai import VercelAIAdapter

logger = logging.getLogger(__name__)

__all__ = ["ADAPTERS", "Adapter", "may_be_genai_event", "may_be_run", "to_event_record", "to_record"]


class Adapter(Protocol):
    def claims(self, span: SpanData) -> bool:
        """Whether this convention describes the span."""

    def adapt(self, span: SpanData) -> SpanRecord:
        """The normalised record of a span this adapter claims."""


# The most specific convention first: traceloop's spans carry GenAI attributes too.
ADAPTERS: tuple[Adapter, ...] = (
    TraceloopAdapter(), VercelAIAdapter(), GenAIAdapter(), OpenInferenceAdapter(), AutogenRuntimeAdapter()
)


def may_be_run(attributes: Mapping[str, Any], local_root: bool) -> bool:
    """A cheap, conservative test for spans an adapter may read as an agent run, for a front
    door's hot path (the span processor holds such spans back until judged). ``local_root``:
    the span has no parent in this process. ``to_record`` gives the exact answer.

    >>> may_be_run({"gen_ai.operation.name": "invoke_agent"}, local_root=False)
    True
    """
    # in ADAPTERS order: the first convention a span is of decides
    answer = traceloop.may_be_run(attributes)
    if answer is None:
        answer = vercel_ai.may_be_run(attributes)
    if answer is None:
        answer = genai.may_be_run(attributes)
    if answer is None:
        answer = openinference.may_be_run(attributes, local_root)
    return bool(answer)


def to_record(span: SpanData) -> SpanRecord:
    """Normalise one span with the first adapter that claims it.

    >>> from otel_reliability.model import SpanData
    >>> to_record(SpanData(1, 2, 0, "work", 0, 1, {})).role.value
    'other'
    """
    record = None
    for adapter in ADAPTERS:
        if adapter.claims(span):
            try:
                record = adapter.adapt(span)
            except Exception:  # a producer's odd shape must not stop the trace from being judged
                logger.warning("could not read span %r with %s", span.name, type(adapter).__name__, exc_info=True)
            break
    if record is None:
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
    if span.events:
        record.evaluations = tuple([e.attributes for e in span.events if e.name == EVALUATION_EVENT])
    if span.attributes.get(POLICY_DENIED) is True:
        record.policy_denied = True
    return record
