"""Messages written as dicts of their type and data (``{"type": "tool", "data": {…}}``, as
LangChain's ``messages_to_dict`` writes them) in a graph node's output, ``{"messages": [...]}``:
the tool messages it produced, with their call ids. Such an output is a node's state update, not
the history, so every tool message in it is an answer given now.
"""

from __future__ import annotations

from typing import Any

from ..model import ToolResponse
from .common import loads, text_of
from .flattened import answer


def tool_message_answers(value: Any) -> tuple[ToolResponse, ...]:
    """The answers of the tool messages in a node's output (``status`` ``error``: a failure).

    >>> [reply] = tool_message_answers('{"messages": [{"type": "tool", "data": {"tool_call_id": "c1", "content": "3"}}]}')
    >>> reply.call_id, reply.content, reply.error
    ('c1', '3', False)
    """
    if not isinstance(value, str) or '"tool_call_id"' not in value:
        return ()
    output = loads(value)
    messages = output.get("messages") if isinstance(output, dict) else None
    responses = []
    for message in messages or ():
        data = message.get("data") if isinstance(message, dict) else None
        if isinstance(data, dict) and data.get("tool_call_id") is not None:
            responses.append(answer(str(data["tool_call_id"]), text_of(data.get("content")), error=data.get("status") == "error"))
    return tuple(responses)
