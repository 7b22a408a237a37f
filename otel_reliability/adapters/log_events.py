"""A convention's events written as OpenTelemetry log records, read as what they add to their span.

Instrumentations in their default mode (``opentelemetry-instrumentation-openai-v2``, Google
ADK with content in events only) write message content not on the model-call span but as
log records correlated with it by trace and span id. Such a record is the same event a span
may carry, with its payload in the body or in attributes; a convention file says which records
are its events and how their messages read (``log_events``: the GenAI conventions' file). So a
record is read as a span holding that one event, and yields the same
``ToolRequest``/``ToolResponse`` the span shapes give. History events add no request (requests
count from the model's answer only, as they do on spans); as on spans, a model call keeps only
the answers its input adds: those after the last assistant message. A ``turn`` record marks
that place (``EventRecord.assistant_turn``: the engine drops the answers recorded before it
under the same span), and a structured input history is cut after its last assistant message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..model import EventData, EventRecord, LogData, SpanData
from . import conventions
from .common import loads
from .history import _after_last_assistant as _newest_after_assistant
from .span_formats import SPAN_FORMATS

logger = logging.getLogger(__name__)


def may_be_genai_event(name: str | None, attributes: Mapping[str, Any] | None) -> bool:
    """A cheap test for a front door's hot path: whether a log record with this event name
    field and these attributes may be an event of a convention in force (the GenAI conventions'
    events, with the shipped files; ``to_event_record`` gives the answer).

    >>> may_be_genai_event("app.login", {})
    False
    """
    for events in conventions.log_events():
        found = name
        if not found and attributes:
            found = attributes.get(events.name_attribute)
        if isinstance(found, str) and found.startswith(events.prefix):
            return True
    return False


def to_event_record(log: LogData) -> EventRecord | None:
    """What an event log record adds to its span; None when it is no event of a convention in
    force, is not correlated with a span, or carries no requested call and no tool result.

    >>> from otel_reliability.model import LogData
    >>> to_event_record(LogData(1, 2, "app.login", 0, {}, None)) is None
    True
    """
    if not log.trace_id or not log.span_id:
        return None
    for events in conventions.log_events():
        name = log.event_name or log.attributes.get(events.name_attribute)
        if isinstance(name, str) and name.startswith(events.prefix):
            return _read(log, name, events)
    return None


def _read(log: LogData, name: str, events: Any) -> EventRecord | None:
    """The record ``log`` (an event named ``name`` of a convention whose ``log_events`` are ``events``)."""
    if name == events.turn:
        return EventRecord(log.trace_id, log.span_id, log.time_ns, assistant_turn=True)
    payload = dict(_plain(log.attributes))
    body = _plain(log.body)
    if isinstance(body, str) and body.startswith("{"):
        body = loads(body)  # some producers write the payload as JSON text (the legacy events' body)
    if isinstance(body, dict):
        payload.update(body)  # the body's fields are the event's payload, as a span event's attributes
    history = payload.get(events.responses.attribute)
    if isinstance(history, list):  # structured, not a JSON text: newest_messages' cut, done here
        payload[events.responses.attribute] = _after_last_assistant(history)
    span = SpanData(log.trace_id, log.span_id, 0, "", 0, 0, {}, (EventData(name, payload, log.time_ns),))
    try:
        requests = SPAN_FORMATS[events.requests.format].requests(span, events.requests)
        responses = SPAN_FORMATS[events.responses.format].responses(span, events.responses)
    except Exception:  # a producer's odd shape must not stop the trace from being judged
        logger.warning("could not read event %r", name, exc_info=True)
        return None
    if not requests and not responses:
        return None
    return EventRecord(log.trace_id, log.span_id, log.time_ns, requests, responses)


def _plain(value: Any) -> Any:
    """Structured log values as JSON would give them: OTLP arrays arrive as tuples."""
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _after_last_assistant(messages: list[Any]) -> list[Any]:
    """The messages after the last assistant message (all of them when there is none)."""
    newest = _newest_after_assistant(messages)
    return messages if newest is None else newest
