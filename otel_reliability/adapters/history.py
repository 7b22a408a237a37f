"""Reading only the newest end of a model call's message history.

A model call's input replays the whole conversation so far, then appends what is new:
the answers to the calls the previous model call asked for, which come after that
call's assistant message. So the answers a model span adds are the ones after the last
assistant message of its input; every earlier answer was already the newest of an
earlier model span (replayed unchanged), and the first span that carries an answer is
the one assembly reads it from. Decoding a history whole makes a run of N turns cost
O(N²); decoding its tail keeps a span's cost flat.

``newest_messages`` decodes a JSON array from the end: it tries ever longer tails, each
starting at a ``,{`` of the text, until one holds an assistant message. A tail is only
accepted when it decodes as array elements that run exactly to the array's closing
bracket at the end of the text, which proves it starts at an element of the top-level
array (for a valid text): a ``,{`` inside a string would put the tail's reading inside
and outside strings the other way round from the text's own reading, up to the text's
end, where the tail would be left inside a string; one inside a nested array would end
at that array's ``]``, which is followed by more than whitespace. Only a text damaged
before its tail reads differently from decoding it whole (which rejects it): its tail is
read. A text cut short, as attribute length limits cut it, has no closing bracket and
is rejected as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .common import loads

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_ELEMENT_START = re.compile(r",[ \t\n\r]*\{")  # where an object element of an array may start
# scan_once is set on every JSONDecoder by its __init__; typeshed does not declare it
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_FIRST_TAIL = 1024  # characters: most tails (an assistant message and its answers) are shorter
_WIDENING = 4


def _after_whitespace(text: str, index: int) -> int:
    """Where the JSON whitespace at ``index`` ends (the pattern matches the empty string too)."""
    match = _WHITESPACE.match(text, index)
    assert match is not None
    return match.end()


def newest_messages(value: Any) -> Any:
    """The messages after the last ``assistant`` message of a JSON array text (all when none is).

    A value that is not a JSON array text comes back as ``loads`` reads it.

    >>> newest_messages('[{"role": "user"}, {"role": "assistant"}, {"role": "tool", "id": 1}]')
    [{'role': 'tool', 'id': 1}]
    >>> newest_messages('{"role": "user"}')
    {'role': 'user'}
    """
    if not isinstance(value, str):
        return loads(value)
    first = _after_whitespace(value, 0)
    if value[first:first + 1] != "[":
        return loads(value)
    length = _FIRST_TAIL
    while length < len(value) - first:  # a tail that long reaches the array's start: decode it whole
        newest = _newest_in_tail(value, len(value) - length)
        if newest is not None:
            return newest
        length *= _WIDENING
    messages = loads(value)
    if not isinstance(messages, list):
        return messages
    newest = _after_last_assistant(messages)
    return messages if newest is None else newest


def _newest_in_tail(text: str, offset: int) -> list[Any] | None:
    """The messages after the last assistant message, if the elements from ``offset`` on hold one."""
    index = offset
    while (match := _ELEMENT_START.search(text, index)) is not None:
        elements, index = _elements_to_end(text, match.end() - 1)
        if elements is not None:
            return _after_last_assistant(elements)
        # Not an element of the top-level array. The next tried start is past where its
        # reading stopped: starts within a nested array it read whole would fail alike, and a
        # start skipped wrongly costs only a longer tail, since an accepted tail is exact.
    return None


def _elements_to_end(text: str, index: int) -> tuple[list[Any] | None, int]:
    """The array elements from ``index`` to the closing ``]`` that ends ``text`` (None if they
    are not), and the index where their reading stopped."""
    elements = []
    end = len(text)
    while True:
        try:
            element, after = _scan(text, index)
        except (StopIteration, ValueError):
            return None, index + 1
        elements.append(element)
        index = _after_whitespace(text, after)
        separator = text[index:index + 1]
        if separator == ",":
            index = _after_whitespace(text, index + 1)
        elif separator == "]" and _after_whitespace(text, index + 1) == end:
            return elements, end
        else:
            return None, index + 1


def _after_last_assistant(messages: list[Any]) -> list[Any] | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, dict) and message.get("role") == "assistant":
            return messages[index + 1:]
    return None
