"""Flattened lists: a list written one attribute per leaf, ``<list>.<i>.<field>`` (OpenInference
writes messages so: ``llm.output_messages.0.message.tool_calls.1.tool_call.function.name``).

The indices of a list run from 0 without gaps, so its length is found by a binary search on the
index: a long run's input holds thousands of keys, and one pass over them would cost every model
span the whole history. A message list is read from its end. A convention file names the list
(``format: flattened_messages``; a field's ``each``); the layout inside an item is the format's.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import ToolRequest, ToolResponse
from . import frameworks
from .common import str_or_none

# The keys one of which every message (and every tool call) of a list sets, the most common first.
_MESSAGE_FIELDS = (".message.role", ".message.content", ".message.tool_call_id",
                   ".message.contents.0.message_content.type", ".message.tool_calls.0.tool_call.function.name",
                   ".message.tool_calls.0.tool_call.id")
_CALL_FIELDS = (".tool_call.function.name", ".tool_call.id", ".tool_call.function.arguments")


def count(attrs: Mapping[str, Any], prefix: str, fields: tuple[str, ...]) -> int:
    """How many items ``prefix<i>`` the attributes hold, an item being an index that sets one of ``fields``.

    The search probes only the first field, which items nearly always set, then walks on
    past any item that sets only others.

    >>> count({"x.0.a": 1, "x.1.a": 1, "x.2.b": 1}, "x.", (".a", ".b"))
    3
    """
    probed = fields[0]
    high = 0
    if f"{prefix}0{probed}" in attrs:
        low, high = 0, 1  # items 0..low are present; high is yet to be probed
        while f"{prefix}{high}{probed}" in attrs:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            if f"{prefix}{middle}{probed}" in attrs:
                low = middle
            else:
                high = middle
    while any(f"{prefix}{high}{field}" in attrs for field in fields):
        high += 1
    return high


def message_keys(name: str) -> frozenset[str]:
    """The keys one of which the first message of the list ``name`` sets: a span that carries none
    holds no such list (``attrs.keys().isdisjoint`` tells it in one set test)."""
    return frozenset(f"{name}.0{field}" for field in _MESSAGE_FIELDS)


def values(attrs: Mapping[str, Any], name: str, field: str) -> tuple[Any, ...]:
    """The values at ``field`` of each item of the list ``name`` (``<name>.<i><field>``).

    >>> values({"sdk.tools.0.schema": "{}", "sdk.tools.1.schema": "[]"}, "sdk.tools", ".schema")
    ('{}', '[]')
    """
    prefix = f"{name}."
    return tuple(attrs.get(f"{prefix}{i}{field}") for i in range(count(attrs, prefix, (field,))))


def requests(attrs: Mapping[str, Any], name: str) -> tuple[ToolRequest, ...]:
    """The calls the messages of the list ``name`` ask for (a model's output).

    >>> requests({"out.0.message.role": "assistant", "out.0.message.tool_calls.0.tool_call.function.name": "add",
    ...           "out.0.message.tool_calls.0.tool_call.id": "c1"}, "out")
    (ToolRequest(name='add', arguments=None, call_id='c1'),)
    """
    found = []
    for message in range(count(attrs, f"{name}.", _MESSAGE_FIELDS)):
        prefix = f"{name}.{message}.message.tool_calls."
        for call in range(count(attrs, prefix, _CALL_FIELDS)):
            tool = attrs.get(f"{prefix}{call}.tool_call.function.name")
            if tool:
                arguments = attrs.get(f"{prefix}{call}.tool_call.function.arguments")
                found.append(ToolRequest(str(tool), arguments, str_or_none(attrs.get(f"{prefix}{call}.tool_call.id"))))
    return tuple(found)


def responses(attrs: Mapping[str, Any], name: str) -> tuple[ToolResponse, ...]:
    """The answers the messages of the list ``name`` hand the model (its input): the tool messages
    after its last assistant message, since the input replays the history (``adapters.history``
    says why that is enough).

    >>> [answer] = responses({"in.0.message.role": "assistant", "in.1.message.role": "tool",
    ...                       "in.1.message.tool_call_id": "c1", "in.1.message.content": "3"}, "in")
    >>> answer.call_id, answer.content
    ('c1', '3')
    """
    answers = []
    for message in range(count(attrs, f"{name}.", _MESSAGE_FIELDS) - 1, -1, -1):
        prefix = f"{name}.{message}.message."
        role = attrs.get(prefix + "role")
        if role == "assistant":
            break
        call_id = attrs.get(prefix + "tool_call_id")
        if role == "tool" and call_id is not None:
            answers.append(answer(str(call_id), str(attrs.get(prefix + "content") or "")))
    answers.reverse()
    return tuple(answers)


def answer(call_id: str, content: str, error: bool = False) -> ToolResponse:
    """A tool message's answer: a refusal for a call no tool span records, unless a framework
    answers a call it did not run as a failure (agno's rejection: ``frameworks``)."""
    return ToolResponse(call_id, content, refusal=not frameworks.answer_says_it_ran(content), error=error)
