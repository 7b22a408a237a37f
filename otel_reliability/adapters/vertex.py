"""Google ADK's legacy model-call spans (``call_llm``): Gemini ``Content`` JSON, no ``gen_ai.operation.name``.

Under ADK's schema 1 the ``generate_content`` span inside ``call_llm`` carries no
messages (they go to log records); ``call_llm`` carries the whole request
(``gcp.vertex.agent.llm_request``, history included) and the response
(``gcp.vertex.agent.llm_response``) whose ``function_call`` parts are the calls the
model asked for.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from .common import loads, str_or_none, text_of
from .usage import genai_tokens

REQUEST = "gcp.vertex.agent.llm_request"
RESPONSE = "gcp.vertex.agent.llm_response"


def model_call(span: SpanData, record: SpanRecord) -> SpanRecord:
    """``record`` (of ``span``, a ``call_llm`` span) as a model call with its requests and new answers.

    >>> from otel_reliability.model import SpanData, SpanRecord
    >>> response = '{"content": {"parts": [{"function_call": {"id": "c1", "args": {"a": 1}, "name": "f"}}], "role": "model"}}'
    >>> span = SpanData(1, 2, 0, "call_llm", 0, 1, {RESPONSE: response})
    >>> model_call(span, SpanRecord(1, 2, 0, "call_llm", 0, 1)).requests
    (ToolRequest(name='f', arguments={'a': 1}, call_id='c1'),)
    """
    record.role = Role.MODEL
    record.model_call = True
    record.tokens = genai_tokens(span.attributes)
    response = loads(span.attributes.get(RESPONSE))
    content = response.get("content") if isinstance(response, dict) else None
    record.requests = tuple(_requests(content))
    request = loads(span.attributes.get(REQUEST))
    contents = request.get("contents") if isinstance(request, dict) else None
    record.responses = tuple(_newest_answers(contents))
    return record


def _parts(content: Any, kind: str) -> Iterator[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    for part in parts if isinstance(parts, list) else ():
        value = part.get(kind) if isinstance(part, dict) else None
        if isinstance(value, dict):
            yield value


def _requests(content: Any) -> Iterator[ToolRequest]:
    for call in _parts(content, "function_call"):
        if call.get("name"):
            yield ToolRequest(str(call["name"]), call.get("args"), str_or_none(call.get("id")))


def _newest_answers(contents: Any) -> Iterator[ToolResponse]:
    """The function responses after the request's last model turn: earlier ones replay the history."""
    if not isinstance(contents, list):
        return
    newest = contents
    for index in range(len(contents) - 1, -1, -1):
        if isinstance(contents[index], dict) and contents[index].get("role") == "model":
            newest = contents[index + 1:]
            break
    for content in newest:
        for answer in _parts(content, "function_response"):
            if answer.get("id") is not None:
                yield ToolResponse(str(answer["id"]), text_of(answer.get("response")), refusal=True)
