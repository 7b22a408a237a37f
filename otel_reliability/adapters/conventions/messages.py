"""A rule's messages (``requests``, ``responses`` and their fallbacks) compiled once into a
reader of a span: the format is looked up when the rule is first read, not for every span."""

from __future__ import annotations

from typing import Any, Callable

from ...model import SpanData, ToolRequest, ToolResponse
from .. import flattened
from ..common import str_or_none, text_of
from ..decoders import REQUEST_FORMATS, RESPONSE_FORMATS
from ..json_paths import at_path, first_at
from ..span_formats import SPAN_FORMATS
from .conditions import decoded
from .model import Messages

_TRUE = (True, "true", "True", 1)
Reader = Callable[[SpanData], "tuple[Any, ...]"]


def reader(messages: Messages | None, *, requests: bool) -> Reader | None:
    """What reads ``messages`` (the calls asked for with ``requests``, else the answers) from a span; None without messages."""
    if messages is None:
        return None
    if messages.format == "flattened_messages":  # a list of attributes, not one attribute's value
        first, name = flattened.message_keys(messages.attribute), messages.attribute
        read = flattened.requests if requests else flattened.responses
        return lambda span: () if span.attributes.keys().isdisjoint(first) else read(span.attributes, name)
    if messages.format in SPAN_FORMATS:  # a format that reads the span: its attribute or its events
        found = SPAN_FORMATS[messages.format]
        read_span = found.requests if requests else found.responses
        return lambda span: read_span(span, messages)
    return lambda span: _messages(span, messages, requests)


def _messages(span: SpanData, messages: Messages, requests: bool) -> tuple[Any, ...]:
    """The calls or answers in one attribute's value (of the span, or of its first event of a name)."""
    if messages.event is not None:
        raw = next((e.attributes.get(messages.attribute) for e in span.events if e.name == messages.event), None)
    else:
        raw = span.attributes.get(messages.attribute)
    if raw is None:
        return ()
    if messages.format != "items":
        return (REQUEST_FORMATS if requests else RESPONSE_FORMATS)[messages.format](raw)
    found: list[ToolRequest | ToolResponse] = []
    for item in at_path(decoded(raw), messages.path):
        if requests:
            name = str_or_none(first_at(item, messages.name)) if messages.name else None
            if name:
                arguments = first_at(item, messages.arguments) if messages.arguments else None
                found.append(ToolRequest(name, arguments, str_or_none(first_at(item, messages.call_id))))
        elif (call_id := str_or_none(first_at(item, messages.call_id))):
            content = text_of(first_at(item, messages.content)) if messages.content else ""
            failed = messages.error is not None and first_at(item, messages.error) in _TRUE
            found.append(ToolResponse(call_id, content, error=failed))
    return tuple(found)
