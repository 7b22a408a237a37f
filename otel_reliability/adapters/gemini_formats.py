"""The Gemini ``Content`` message format, as convention files name it (``format: gemini_contents``).

A Gemini request carries the conversation as ``contents`` (``[{"role": "user" | "model",
"parts": [...]}]``, history included) and a response the model's turn as ``content``. The
calls the model asked for are the response's ``function_call`` parts; the answers a request
hands back are the ``function_response`` parts after its last ``model`` turn (earlier ones
replay the history, and were the newest of an earlier model call).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import ToolRequest, ToolResponse
from .common import loads, str_or_none, text_of


def gemini_requests(value: Any) -> tuple[ToolRequest, ...]:
    """The calls a Gemini response (``{"content": Content}``) asks for.

    >>> gemini_requests('{"content": {"parts": [{"function_call": {"id": "c1", "args": {"a": 1}, "name": "f"}}], "role": "model"}}')
    (ToolRequest(name='f', arguments={'a': 1}, call_id='c1'),)
    """
    response = loads(value)
    content = response.get("content") if isinstance(response, dict) else None
    return tuple(ToolRequest(str(call["name"]), call.get("args"), str_or_none(call.get("id")))
                 for call in _parts(content, "function_call") if call.get("name"))


def gemini_responses(value: Any) -> tuple[ToolResponse, ...]:
    """The function responses a Gemini request (``{"contents": [Content]}``) adds after its last model turn.

    >>> gemini_responses('{"contents": [{"role": "model", "parts": []}, {"role": "user", "parts":'
    ...                  ' [{"function_response": {"id": "c1", "response": {"result": 2}}}]}]}')
    (ToolResponse(call_id='c1', content='{"result": 2}', refusal=True, error=False, names_refusal=None, ran=False),)
    """
    request = loads(value)
    contents = request.get("contents") if isinstance(request, dict) else None
    if not isinstance(contents, list):
        return ()
    newest = contents
    for index in range(len(contents) - 1, -1, -1):
        if isinstance(contents[index], dict) and contents[index].get("role") == "model":
            newest = contents[index + 1:]
            break
    return tuple(ToolResponse(str(answer["id"]), text_of(answer.get("response")), refusal=True)
                 for content in newest for answer in _parts(content, "function_response") if answer.get("id") is not None)


def _parts(content: Any, kind: str) -> Iterator[dict[str, Any]]:
    """The ``kind`` value of each part of ``content`` that has one."""
    parts = content.get("parts") if isinstance(content, dict) else None
    for part in parts if isinstance(parts, list) else ():
        value = part.get(kind) if isinstance(part, dict) else None
        if isinstance(value, dict):
            yield value
