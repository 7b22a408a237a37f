"""Replaying recorded spans through a span processor as the SDK would call it: each span's
``on_start`` and ``on_end`` in the order they happened, with the spans' own ids and times."""

from __future__ import annotations

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from otel_reliability.model import STATUS_ERROR, STATUS_OK, SpanData


def sdk_span(span: SpanData) -> ReadableSpan:
    def context(span_id: int) -> SpanContext:
        return SpanContext(span.trace_id, span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))

    code = {STATUS_ERROR: StatusCode.ERROR, STATUS_OK: StatusCode.OK}.get(span.status_code, StatusCode.UNSET)
    return ReadableSpan(
        name=span.name,
        context=context(span.span_id),
        parent=context(span.parent_id) if span.parent_id else None,
        attributes=dict(span.attributes),
        events=[Event(e.name, dict(e.attributes), e.time_ns) for e in span.events],
        status=Status(code, span.status_message or None),
        start_time=span.start_ns,
        end_time=span.end_ns,
    )


def replay_events(spans: list[SpanData]) -> list[tuple[str, ReadableSpan]]:
    """Each span's start and end, in the order they happened, as the SDK calls a processor.

    At the same instant a span ends before another starts, and parents start before their children.
    """
    by_id = {span.span_id: span for span in spans}

    def depth(span: SpanData) -> int:
        seen = 0
        while span.parent_id in by_id and seen < 64:
            span, seen = by_id[span.parent_id], seen + 1
        return seen

    sdk = {span.span_id: sdk_span(span) for span in spans}
    events = [(s.start_ns, 1, depth(s), "start", s.span_id) for s in spans]
    events += [(s.end_ns, 0, -depth(s), "end", s.span_id) for s in spans]
    return [(kind, sdk[span_id]) for *_, kind, span_id in sorted(events)]
