"""autogen-core's runtime message spans (``autogen process <recipient>``): a team's tool-call events.

A team's ``SingleThreadedAgentRuntime`` traces each message it delivers with the message as
JSON in a ``message`` attribute. An agent's ``ToolCallRequestEvent`` (the calls its model asked
for) and ``ToolCallExecutionEvent`` (the answers its workbench gave, ``is_error`` included)
reach the group chat manager so: the only record of a call that never ran (an unknown tool, a
``Workbench`` that refused it) — autogen writes no model span, and no tool span for such a call.
These spans hang under the runtime's publish spans, not under the agent's ``invoke_agent``;
the record names the agent that sent the message (``sent_by``) so assembly can give it to
that agent's run. A cold reading (``knowledge``) reads none of them.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from .common import loads, str_or_none, text_of
from .knowledge import FRAMEWORKS

MESSAGE = "message"
OPERATION = "messaging.operation"
_REQUESTS = "ToolCallRequestEvent"
_ANSWERS = "ToolCallExecutionEvent"


class AutogenRuntimeAdapter:
    """Reads a runtime ``process`` span that delivered an agent's tool-call requests or answers.

    >>> import json
    >>> event = {"message": {"type": "ToolCallRequestEvent", "source": "calc",
    ...          "content": [{"id": "c1", "name": "add", "arguments": "{}"}]}}
    >>> span = SpanData(1, 2, 0, "autogen process x", 0, 1,
    ...                 {"messaging.operation": "process", "message": json.dumps(event)})
    >>> record = AutogenRuntimeAdapter().adapt(span)
    >>> record.sent_by, record.requests
    ('calc', (ToolRequest(name='add', arguments='{}', call_id='c1'),))
    """

    # messaging.operation marks every messaging span; only a runtime's process span carrying
    # an agent's tool-call event is read (the rest stay plain records).
    markers = (OPERATION,)

    def adapt(self, span: SpanData) -> SpanRecord:
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        attrs = span.attributes
        message = attrs.get(MESSAGE)
        if not FRAMEWORKS.applies or attrs.get(OPERATION) != "process" or not isinstance(message, str) or (
            _REQUESTS not in message and _ANSWERS not in message
        ):
            return record
        document = loads(message)
        event = document.get("message") if isinstance(document, dict) else None
        if not isinstance(event, dict) or event.get("type") not in (_REQUESTS, _ANSWERS):
            return record  # e.g. a team response that only replays these events among its inner messages
        record.role = Role.MODEL
        record.sent_by = str_or_none(event.get("source"))
        if event["type"] == _REQUESTS:
            record.requests = tuple(_requests(event.get("content")))
        else:
            record.responses = tuple(_answers(event.get("content")))
        return record


def _items(content: Any) -> Iterator[dict[str, Any]]:
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict):
            yield item


def _requests(content: Any) -> Iterator[ToolRequest]:
    for call in _items(content):
        if call.get("name"):
            yield ToolRequest(str(call["name"]), call.get("arguments"), str_or_none(call.get("id")))


def _answers(content: Any) -> Iterator[ToolResponse]:
    for answer in _items(content):
        if answer.get("call_id") is not None:
            # refusal=True: for a call no tool span records, the workbench's answer is all there is
            yield ToolResponse(str(answer["call_id"]), text_of(answer.get("content")), error=answer.get("is_error") is True)
