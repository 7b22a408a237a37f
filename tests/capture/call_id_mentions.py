"""Where a truth entry's call id shows up in a capture: its execution span, and every other mention.

Used by the capture scripts of ``openai_v2``/``openai_v2_latest`` and ``traceloop_langgraph``
after a scenario ran, to annotate ``tool_executions`` the way the shared corpus does
(``execution_span``, ``mentioned_in``). It only reads what the instrumentation wrote.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

SpanMatcher = Callable[[Any, dict[str, Any]], "str | None"]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def annotate(
    truth: list[dict[str, Any]],
    spans: Iterable[Any],
    log_records: Iterable[Any] = (),
    execution_matcher: SpanMatcher | None = None,
) -> None:
    """Add ``execution_span`` and ``mentioned_in`` to each entry that has a ``tool_call_id``.

    ``execution_matcher(span, entry)`` says how a span is this entry's execution (the
    attribute that matched), or None.
    """
    spans = sorted(spans, key=lambda s: s.start_time or 0)
    records = list(log_records)
    claimed: set[int] = set()
    for entry in truth:
        call_id = entry.get("tool_call_id")
        entry["execution_span"] = None
        if execution_matcher:
            for span in spans:
                matched_by = span.context.span_id not in claimed and execution_matcher(span, entry)
                if matched_by:
                    claimed.add(span.context.span_id)
                    entry["execution_span"] = {
                        "span_id": f"{span.context.span_id:016x}",
                        "span_name": span.name,
                        "status": span.status.status_code.name,
                        "matched_by": matched_by,
                    }
                    break
        if not call_id:
            continue
        mentions: list[dict[str, Any]] = []
        for span in spans:
            for key, value in (span.attributes or {}).items():
                if call_id in _text(value):
                    mentions.append({"span_id": f"{span.context.span_id:016x}", "span_name": span.name, "attribute": key})
            for event in span.events:
                for key, value in (event.attributes or {}).items():
                    if call_id in _text(value):
                        mentions.append(
                            {"span_id": f"{span.context.span_id:016x}", "span_name": span.name, "attribute": f"event:{event.name}/{key}"}
                        )
        for data in records:
            record = getattr(data, "log_record", data)
            body_and_attributes = [("body", record.body)] + list((record.attributes or {}).items())
            for key, value in body_and_attributes:
                if call_id in _text(value):
                    span_id = record.span_id or 0
                    event_name = getattr(record, "event_name", None) or (record.attributes or {}).get("event.name")
                    mentions.append({"log_record": event_name, "span_id": f"{span_id:016x}", "attribute": key})
        entry["mentioned_in"] = mentions
