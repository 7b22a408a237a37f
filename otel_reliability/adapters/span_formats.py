"""Message formats that read a span, not one value (``SPAN_FORMATS``): a convention file names
one as a ``requests`` / ``responses`` format when a model span's messages may be in an attribute
or in its events, or when each event carries one message.

* ``genai`` — the OpenTelemetry GenAI messages: ``parts`` lists whose ``tool_call`` parts are
  the calls the model asked for (in the output messages) and whose ``tool_call_response``
  parts are the answers its input hands back (after its last assistant message: ``history``),
  in the span's attribute or else in that attribute of each ``or_events`` event; and the legacy
  one-message-per-event shape (``events``: an OpenAI-style ``tool_calls`` message or Bedrock
  ``toolUse`` / ``toolResult`` blocks; answers only after the last ``after_event``), which
  strands still writes by default.

An answer that is an object with an ``error`` (how ADK answers the model) names a refusal when a
framework file (``frameworks/``) says its text is one.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Mapping, Protocol

from ..model import EventData, SpanData, ToolRequest, ToolResponse
from . import frameworks
from .common import loads, str_or_none, text_of
from .decoders import tool_call_requests
from .history import newest_messages

_ASCII_ESCAPE = re.compile(r"\\u00[0-7]")  # a \u escape of an ASCII character


class Placed(Protocol):
    """Where a span format finds its messages (``conventions.model.Messages``)."""

    @property
    def attribute(self) -> str: ...

    @property
    def or_events(self) -> str | None: ...

    @property
    def events(self) -> str | None: ...

    @property
    def after_event(self) -> str | None: ...


class SpanFormat(Protocol):
    def requests(self, span: SpanData, place: Placed) -> tuple[ToolRequest, ...]: ...

    def responses(self, span: SpanData, place: Placed) -> tuple[ToolResponse, ...]: ...


# ------------------------------------------------------------------ GenAI messages


class GenAIMessages:
    """``format: genai``."""

    def requests(self, span: SpanData, place: Placed) -> tuple[ToolRequest, ...]:
        requests = []
        for part in _parts(span, place, "tool_call", loads):
            if part.get("name"):
                requests.append(ToolRequest(str(part["name"]), part.get("arguments"), str_or_none(part.get("id"))))
        if place.events is not None:
            for event in span.events:
                if event.name == place.events:
                    requests.extend(_one_message_requests(event.attributes))
        return tuple(requests)

    def responses(self, span: SpanData, place: Placed) -> tuple[ToolResponse, ...]:
        responses = []
        for part in _parts(span, place, "tool_call_response", newest_messages):
            if part.get("id") is not None:
                content = part["response"] if "response" in part else part.get("result")
                responses.append(ToolResponse(str(part["id"]), text_of(content), refusal=True, names_refusal=_refusal_named(content)))
        if place.events is not None:
            for event in _newest_events(span.events, place.events, place.after_event):
                responses.extend(_one_message_answers(event.attributes))
        return tuple(responses)


def _refusal_named(content: Any) -> str | None:
    """The refusal a framework's answer to the model names (ADK's ``{"error": ...}``), else None."""
    error = content.get("error") if isinstance(content, Mapping) else None
    return frameworks.refusal_named(error) if isinstance(error, str) else None


def _messages(span: SpanData, place: Placed, part_type: str, decode: Callable[[Any], Any]) -> list[Any]:
    """The span's messages (its attribute's, else the first ``or_events`` event's that has a list)
    as ``decode`` reads them; [] when none can hold a part of ``part_type``."""
    key = place.attribute
    events = span.events if place.or_events is not None else ()
    value = _loads_mentioning(span.attributes.get(key), part_type, bool(events), decode)
    if isinstance(value, list):
        return value
    for event in events:
        if event.name == place.or_events and key in event.attributes:
            value = _loads_mentioning(event.attributes[key], part_type, True, decode)
            if isinstance(value, list):
                return value
    return []


def _loads_mentioning(value: Any, part_type: str, decides: bool, decode: Callable[[Any], Any]) -> Any:
    # Message histories are the largest attributes a span carries, and most hold no part
    # of the type asked for: a substring search is far cheaper than decoding them. A JSON
    # text can spell the (ASCII) type only literally or with \u00XX escapes (tool\u005fcall);
    # other escapes ("21 \u00b0C") cannot. Such a text is still decoded when ``decides``:
    # whether it decodes to a list decides if the caller reads an event instead.
    if isinstance(value, str) and part_type not in value and (
        "\\u" not in value or (not decides and _ASCII_ESCAPE.search(value) is None)
    ):
        return None
    return decode(value)


def _parts(span: SpanData, place: Placed, part_type: str, decode: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """The parts of type ``part_type`` in the span's messages (as ``decode`` reads them), in order."""
    found = []
    for message in _messages(span, place, part_type, decode):
        parts = message.get("parts") if isinstance(message, dict) else None
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and part.get("type") == part_type:
                    found.append(part)
    return found


def _one_message_requests(attrs: Mapping[str, Any]) -> Iterator[ToolRequest]:
    """The calls in a one-message event's ``message``: Bedrock blocks or an OpenAI-style message."""
    message = loads(attrs.get("message"))
    if isinstance(message, list):  # Bedrock content blocks: [{"toolUse": {...}}]
        for block in message:
            use = block.get("toolUse") if isinstance(block, dict) else None
            if isinstance(use, dict) and use.get("name"):
                yield ToolRequest(str(use["name"]), use.get("input"), str_or_none(use.get("toolUseId")))
    elif isinstance(message, dict):  # OpenAI-style
        yield from tool_call_requests(message.get("tool_calls"))


def _newest_events(events: tuple[EventData, ...], name: str, after: str | None) -> list[EventData]:
    """The events named ``name`` after the last one named ``after``: one-message events replay the
    history too, one event a message, in order."""
    newest = []
    for event in reversed(events):
        if event.name == after:
            break
        if event.name == name:
            newest.append(event)
    newest.reverse()
    return newest


def _one_message_answers(attrs: Mapping[str, Any]) -> Iterator[ToolResponse]:
    """The answers in a one-message event's ``content``: Bedrock ``toolResult`` blocks, or the
    event's own answer to the call its ``id`` (or ``tool_call_id``) names."""
    raw = attrs.get("content")
    content = loads(raw)
    if content is None and isinstance(raw, str):
        content = raw  # plain text ("error: unknown tool 'x'"), not JSON
    if isinstance(content, list):  # Bedrock: [{"toolResult": {"toolUseId", "status", "content"}}]
        for block in content:
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict) and result.get("toolUseId") is not None:
                yield ToolResponse(
                    str(result["toolUseId"]),
                    text_of(result.get("content")),
                    refusal=True,
                    error=result.get("status") == "error",
                )
    elif (call_id := attrs.get("id", attrs.get("tool_call_id"))) is not None:  # the event's id; some name it as the message does
        yield ToolResponse(str(call_id), text_of(content), refusal=True)


SPAN_FORMATS: dict[str, SpanFormat] = {"genai": GenAIMessages()}
