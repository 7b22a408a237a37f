"""Spans of no known convention, read as a profile declares (``Profile.spans``).

A framework's own tracer follows none of the conventions the other modules read, but names
its spans and attributes the same way every time. Its
profile says, per span name, what the span is and where its fields are; this module only
follows those directions, so the framework's knowledge stays data.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from .common import error_text, loads, str_or_none, text_of
from .profiles import Items, SpanReading

_TRUE = (True, "true", "True", 1)


def read_declared(span: SpanData, reading: SpanReading) -> SpanRecord:
    """The record of a span as ``reading`` declares it.

    >>> from otel_reliability.model import SpanData
    >>> reading = SpanReading(span_name="x.tool", role="tool", tool_name="x.name", failed_when="x.failed", result="x.out")
    >>> record = read_declared(SpanData(1, 2, 0, "x.tool", 0, 1, {"x.name": "rm", "x.failed": "true", "x.out": "denied"}), reading)
    >>> record.role.value, record.tool_name, record.error
    ('tool', 'rm', 'denied')
    """
    attrs = span.attributes
    record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
    record.error = error_text(span)
    if reading.role == "agent_run":
        record.role = Role.AGENT_RUN
        record.agent_name = str_or_none(attrs.get(reading.agent_name)) if reading.agent_name else None
        record.attributes = attrs
        output = attrs.get(reading.output) if reading.output else None
        record.output = output if isinstance(output, str) else None
    elif reading.role == "tool":
        record.role = Role.TOOL
        record.tool_name = (str_or_none(attrs.get(reading.tool_name)) if reading.tool_name else None) or span.name
        record.arguments = attrs.get(reading.arguments) if reading.arguments else None
        record.call_id = str_or_none(attrs.get(reading.call_id)) if reading.call_id else None
        result = attrs.get(reading.result) if reading.result else None
        record.returned = result is not None
        if reading.failed_when and attrs.get(reading.failed_when) in _TRUE and record.error is None:
            decoded = loads(result)
            record.error = text_of(result if decoded is None else decoded)
    elif reading.role == "names_agent":
        record.names_agent = str_or_none(attrs.get(reading.agent_name)) if reading.agent_name else None
    else:
        record.role, record.model_call = Role.MODEL, True
        if reading.requests is not None:
            record.requests = tuple(_requests(attrs, reading.requests))
        if reading.responses is not None:
            record.responses = tuple(_responses(attrs, reading.responses))
    return record


def _requests(attrs: Mapping[str, Any], items: Items) -> Iterator[ToolRequest]:
    for item in _items(attrs, items):
        name = str_or_none(_at(item, items.name)) if items.name else None
        if name:
            arguments = _at(item, items.arguments) if items.arguments else None
            yield ToolRequest(name, arguments, str_or_none(_at(item, items.call_id)))


def _responses(attrs: Mapping[str, Any], items: Items) -> Iterator[ToolResponse]:
    for item in _items(attrs, items):
        call_id = str_or_none(_at(item, items.call_id))
        if call_id:
            content = text_of(_at(item, items.content)) if items.content else ""
            yield ToolResponse(call_id, content, error=items.error is not None and _at(item, items.error) in _TRUE)


def _items(attrs: Mapping[str, Any], items: Items) -> Iterator[Any]:
    """The items at ``items.path`` in the attribute's JSON, in document order."""
    found = [loads(attrs.get(items.attribute))]
    for key in items.path.split("."):
        if key == "*":
            found = [element for value in found if isinstance(value, list) for element in value]
        else:
            found = [value[key] for value in found if isinstance(value, dict) and key in value]
    return iter(found)


def _at(item: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(item, dict):
            return None
        item = item.get(key)
    return item
