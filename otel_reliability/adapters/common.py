"""Small readers shared by the convention adapters."""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

from ..jsontext import decode_json
from ..model import STATUS_ERROR, STATUS_OK, SpanData

# How much of a tool's result the adapters keep (``SpanRecord.output``): its start says what it is.
RESULT_PREFIX = 256


def error_text(span: SpanData) -> str | None:
    """The span's error, or None when it did not fail.

    A span failed when its status is ERROR, or, with an UNSET status, when it has
    ``error.type`` or an ``exception`` event. An explicit OK wins over events:
    LangGraph records control-flow exceptions (``ParentCommand``) on OK spans.
    """
    if span.status_code == STATUS_ERROR:
        return span.status_message or _exception_message(span) or ""
    if span.status_code == STATUS_OK:
        return None
    error_type = span.attributes.get("error.type")
    if error_type:
        return _exception_message(span) or str(error_type)
    return _exception_message(span) if span.events else None


def _exception_message(span: SpanData) -> str | None:
    for event in span.events:
        if event.name == "exception":
            attrs = event.attributes
            return str(attrs.get("exception.message") or attrs.get("exception.type") or "")
    return None


def str_or_none(value: Any) -> str | None:
    """Attribute values may be any type; names and ids are compared as strings. A value with
    no text (an int past Python's 4,300-digit ``str`` limit) is unknown, not an error."""
    if type(value) is str:  # nearly always: names and ids are text (adapters ask this of every span)
        return value
    if value is None:
        return None
    try:
        return str(value)
    except ValueError:
        return None


def is_one_of(value: Any, names: frozenset[str] | dict[str, Any]) -> TypeGuard[str]:
    """``value in names`` for an attribute of any type: a list or dict value is not hashable,
    so it must not reach the set lookup (it would raise, on the app's thread in ``may_be_run``)."""
    return isinstance(value, str) and value in names


# A finish reason that says the model stopped to have tools called, as providers spell it
# (OpenAI's ``tool_calls`` and older ``function_call``, the GenAI conventions' ``tool_call``,
# Anthropic's and Bedrock's ``tool_use``, Spring AI's ``TOOL_CALLS``), compared without case or
# separators so that any SDK's spelling of the same words reads alike.
_STOPPED_FOR_TOOLS = frozenset({"toolcall", "toolcalls", "tooluse", "functioncall", "functioncalls"})
_SEPARATORS = str.maketrans("", "", "_- ")


def stops_for_tools(finish_reasons: Any) -> bool:
    """Whether a model call's recorded finish reasons (one text, a list of them, or a JSON text
    of a list) say it stopped to have tools called.

    >>> stops_for_tools(("tool_call",)), stops_for_tools('["TOOL_CALLS"]'), stops_for_tools(["stop"]), stops_for_tools(None)
    (True, True, False, False)
    """
    if finish_reasons is None:
        return False
    kind = type(finish_reasons)
    if kind is str or (kind is not tuple and kind is not list and isinstance(finish_reasons, str)):  # a str enum's too
        decoded = loads(finish_reasons) if finish_reasons[:1] == "[" else None
        finish_reasons = decoded if isinstance(decoded, list) else (finish_reasons,)
    elif kind is not tuple and kind is not list:
        return False
    for reason in finish_reasons:
        if isinstance(reason, str):
            said = _SAID.get(reason)
            if said is None:
                said = _learn(reason)
            if said:
                return True
    return False


# Each finish reason seen, read once: every model span of a run carries one of a handful of
# them, and normalising one costs more than looking it up (this runs for every model span).
_SAID: dict[str, bool] = {}
_SAID_LIMIT = 256  # distinct reasons remembered; past it a reason is normalised every time


def _learn(reason: str) -> bool:
    said = reason.lower().translate(_SEPARATORS) in _STOPPED_FOR_TOOLS
    if len(_SAID) < _SAID_LIMIT:
        _SAID[reason] = said
    return said


def loads(value: Any) -> Any:
    """Decode a JSON string attribute; anything that is not JSON comes back as None."""
    if not isinstance(value, str):
        return value
    try:
        return decode_json(value)
    except ValueError:
        return None


def text_of(content: Any) -> str:
    """Render a tool result (string, list of parts, object) as plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [text for part in content if isinstance(part, dict) and isinstance(text := part.get("text"), str)]
        if len(texts) == len(content):
            return "".join(texts)
    return json.dumps(content, sort_keys=True, default=str)


# ``<object>.<method>``: how Python instrumentations that wrap methods name their spans
# (``ReAct.forward``, ``Agent.run``, ``multiply.__call__``).
_OBJECT_DOT_METHOD = re.compile(r"^([A-Za-z_][\w-]*)\.(?:[a-z_][a-z0-9_]*)$")


def object_of(span_name: str) -> str | None:
    """The object a ``<object>.<method>`` span name names, None for any other name.

    >>> object_of("ReAct.forward"), object_of("multiply.__call__"), object_of("invoke_agent calc")
    ('ReAct', 'multiply', None)
    """
    match = _OBJECT_DOT_METHOD.match(span_name)
    return match.group(1) if match else None
