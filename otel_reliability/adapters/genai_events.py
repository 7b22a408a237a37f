"""GenAI events emitted as OpenTelemetry log records, read as what they add to their span.

Instrumentations in their default mode (``opentelemetry-instrumentation-openai-v2``, Google
ADK with content in events only) write message content not on the model-call span but as
log records correlated with it by trace and span id. Such a record is the same GenAI event
a span may carry, with its payload in the body or in attributes:

- ``gen_ai.choice``: the model's answer; its ``message.tool_calls`` are the requested calls;
- ``gen_ai.tool.message``: a tool result the app sent back (``id`` = the call id);
- ``gen_ai.client.inference.operation.details``: ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` with ``tool_call`` and ``tool_call_response`` parts.

So a record is read by the span-event readers of ``genai`` and yields the same
``ToolRequest``/``ToolResponse`` the span-attribute shapes give. History events add no
request (requests count from the model's answer only, as they do on spans); as on spans,
a model call keeps only the answers its input adds: those after the last assistant message.
A ``gen_ai.assistant.message`` record marks that place (``EventRecord.assistant_turn``: the
engine drops the answers recorded before it under the same span), and the input messages of
an operation-details record are cut after their last assistant message.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..model import EventData, EventRecord, LogData, SpanData
from .common import loads
from .genai import _requests, _responses
from .history import _after_last_assistant as _newest_after_assistant

logger = logging.getLogger(__name__)
_ASSISTANT_MESSAGE = "gen_ai.assistant.message"
_INPUT_MESSAGES = "gen_ai.input.messages"
_EVENT_NAME_ATTRIBUTE = "event.name"  # where producers put the name before OTLP had a field for it
_PREFIX = "gen_ai."


def event_name(log: LogData) -> str:
    """The record's event name: its event name field, else its ``event.name`` attribute."""
    if log.event_name:
        return log.event_name
    name = log.attributes.get(_EVENT_NAME_ATTRIBUTE)
    return name if isinstance(name, str) else ""


def may_be_genai_event(name: str | None, attributes: Mapping[str, Any] | None) -> bool:
    """A cheap test for a front door's hot path: whether a log record with this event name
    field and these attributes may be a GenAI event (``to_event_record`` gives the answer).

    >>> may_be_genai_event("gen_ai.choice", None), may_be_genai_event("", {"event.name": "app.login"})
    (True, False)
    """
    if not name and attributes:
        name = attributes.get(_EVENT_NAME_ATTRIBUTE)
    return isinstance(name, str) and name.startswith(_PREFIX)


def to_event_record(log: LogData) -> EventRecord | None:
    """What a GenAI event log record adds to its span; None when it is no GenAI event, is not
    correlated with a span, or carries no requested call and no tool result.

    >>> from otel_reliability.model import LogData
    >>> body = {"message": {"tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": "{}"}}]}}
    >>> record = to_event_record(LogData(1, 2, "gen_ai.choice", 0, {}, body))
    >>> [(r.name, r.call_id) for r in record.requests]
    [('add', 'c1')]
    """
    if not log.trace_id or not log.span_id:
        return None
    name = event_name(log)
    if not name.startswith(_PREFIX):
        return None
    if name == _ASSISTANT_MESSAGE:
        return EventRecord(log.trace_id, log.span_id, log.time_ns, assistant_turn=True)
    payload = dict(_plain(log.attributes))
    body = _plain(log.body)
    if isinstance(body, str) and body.startswith("{"):
        body = loads(body)  # some producers write the payload as JSON text (the legacy events' body)
    if isinstance(body, dict):
        payload.update(body)  # the body's fields are the event's payload, as a span event's attributes
    history = payload.get(_INPUT_MESSAGES)
    if isinstance(history, list):  # structured, not a JSON text: newest_messages' cut, done here
        payload[_INPUT_MESSAGES] = _after_last_assistant(history)
    span = SpanData(log.trace_id, log.span_id, 0, "", 0, 0, {}, (EventData(name, payload, log.time_ns),))
    try:
        requests = _requests(span)
        responses = _responses(span)
    except Exception:  # a producer's odd shape must not stop the trace from being judged
        logger.warning("could not read GenAI event %r", name, exc_info=True)
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
