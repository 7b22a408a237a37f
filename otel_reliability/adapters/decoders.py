"""Value decoders: how a convention file says a field's value is written, each named once.

A tracing SDK writes arguments, results and messages as JSON text, as a Python ``repr``, or
wrapped (``{"args": [], "kwargs": {…}}``); a convention file names the decoder beside the
attribute (``decode: kwargs``) and never code of its own. Message formats read the calls a
model asked for (``requests``) and the answers its input hands back (``responses``) from a
model span's messages.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

from ..model import ToolRequest, ToolResponse
from ..jsontext import decode_json
from .common import loads, object_of, str_or_none, text_of
from .gemini_formats import gemini_requests, gemini_responses
from .history import newest_messages
from .message_dicts import tool_message_answers

_PYTHON_LITERAL_LIMIT = 100_000  # characters: literal_eval of a huge repr costs more than it tells


def as_json(value: Any) -> Any:
    """JSON text decoded (``null`` is None: nothing recorded); a value that is not JSON text is
    kept as it is (a raw string stays one).

    >>> as_json('{"a": 1}'), as_json("null"), as_json("plain words")
    ({'a': 1}, None, 'plain words')
    """
    if not isinstance(value, str):
        return value
    try:
        return decode_json(value)
    except ValueError:
        return value


def as_text(value: Any) -> str | None:
    """Plain text: a string as it is, anything else rendered (JSON decoded first)."""
    if value is None:
        return None
    return text_of(as_json(value))


def as_kwargs(value: Any) -> Any:
    """A call's arguments wrapped as ``{"args": [...], "kwargs": {...}}`` (a decorator that
    records a Python call): the keyword arguments when no positional one was given; the whole
    wrapper otherwise, since positional ones cannot be named without the tool's signature.

    >>> as_kwargs('{"args": [], "kwargs": {"a": 10, "b": 5}}')
    {'a': 10, 'b': 5}
    """
    decoded = as_json(value)
    if isinstance(decoded, dict) and set(decoded) <= {"args", "kwargs"} and isinstance(decoded.get("kwargs"), dict):
        return decoded["kwargs"] if not decoded.get("args") else decoded
    return decoded


def as_python(value: Any) -> Any:
    """A Python literal's ``repr`` (``{'a': 1}``) decoded; JSON is tried first, and anything
    neither reads is kept as it is.

    >>> as_python("{'a': 1, 'ok': True}")
    {'a': 1, 'ok': True}
    """
    decoded = loads(value)
    if decoded is not None or not isinstance(value, str) or len(value) > _PYTHON_LITERAL_LIMIT:
        return value if decoded is None else decoded
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return value


def as_identifier(value: Any) -> Any:
    """A display name as the identifier a framework hands the model for it: camelCase split, lower
    case, each run of other characters one ``_`` (a tool span named by its display name then
    joins the model's request, which names the identifier). Anything but a string is kept.

    >>> as_identifier("Delegate work to coworker"), as_identifier("lookupWeather"), as_identifier("Ask the HR-team!")
    ('delegate_work_to_coworker', 'lookup_weather', 'ask_the_hr_team')
    """
    if not isinstance(value, str):
        return value
    split = _CAMEL_LOWER_UPPER.sub(r"\1_\2", _CAMEL_UPPER_LOWER.sub(r"\1_\2", value))
    return _NOT_ALNUM.sub("_", split.lower()).strip("_")


_CAMEL_UPPER_LOWER = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def as_callback_input(value: Any) -> Any:
    """A tool's input as a callback records it, ``{"input_str": "<str() of the input>", "inputs":
    {…}, "kwargs": {…}}`` (a tool callback's arguments): ``inputs`` when it is a mapping, else
    ``input_str`` read as a Python literal mapping, else that text; a value that is no such
    record is kept as recorded (undecoded: its JSON is parsed when the run is judged).

    >>> as_callback_input('{"input_str": "", "inputs": {"a": 10}, "kwargs": {"tool_call_id": "c1"}}')
    {'a': 10}
    >>> as_callback_input('{"a": 10}')
    '{"a": 10}'
    """
    wrapper = loads(value)
    if not isinstance(wrapper, dict) or not ("inputs" in wrapper or "input_str" in wrapper):
        return value
    inputs = wrapper.get("inputs")
    if isinstance(inputs, dict):
        return inputs
    text = wrapper.get("input_str")
    if not isinstance(text, str) or len(text) > _PYTHON_LITERAL_LIMIT:
        return text
    try:
        literal = ast.literal_eval(text)  # evaluates no code: a call or a name is no literal
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text  # a plain string input: the text is the argument
    return literal if isinstance(literal, dict) else text


def last_ai_message(value: Any) -> str | None:
    """A final state whose messages are serialized as constructor records (``{"outputs":
    {"messages": [...]}}``, each ``{"lc": 1, "type": "constructor", "id": [..., "AIMessage"],
    "kwargs": {"content": …}}``): the text of its last AI message, None when that message has
    no text (it ended on a tool call).

    >>> last_ai_message('{"outputs": {"messages": [{"id": ["schema", "AIMessage"], "kwargs": {"content": "50"}}]}}')
    '50'
    """
    decoded = loads(value)
    outputs = decoded.get("outputs") if isinstance(decoded, dict) else None
    messages = outputs.get("messages") if isinstance(outputs, dict) else None
    for message in reversed(messages) if isinstance(messages, list) else ():
        if isinstance(message, dict) and isinstance(message.get("id"), list) and message["id"][-1:] == ["AIMessage"]:
            fields = message.get("kwargs")
            content = fields.get("content") if isinstance(fields, dict) else None
            return content if isinstance(content, str) and content else None
    return None


def object_name(value: Any) -> Any:
    """A span name ``<object>.<method>`` (how instrumentations that wrap methods name spans): the
    object; any other name as it is.

    >>> object_name("multiply.__call__"), object_name("handoff to billing")
    ('multiply', 'handoff to billing')
    """
    return (object_of(value) or value) if isinstance(value, str) else value


_BOUND_PREFIX = '{"args": '


def bound_arguments(value: Any, parameters: Any) -> Any:
    """A Python call's bound arguments as recorded, ``{"args": [...], "kwargs": {...}}`` beside
    flags of the call (``true``/``false``): the keyword arguments, with the positional ones named by
    the keys of ``parameters`` (a JSON object, the tool's parameters in order). Anything else, or
    positional values the parameters cannot name, is kept as recorded.

    >>> bound_arguments('{"args": [57], "sanitize": false, "kwargs": {}}', '{"answer": {}}')
    {'answer': 57}
    """
    if not isinstance(value, str) or not value.startswith(_BOUND_PREFIX):
        return value
    bound = loads(value)
    if not isinstance(bound, dict) or "kwargs" not in bound or any(
            not isinstance(flag, bool) for key, flag in bound.items() if key not in ("args", "kwargs")):
        return value
    positional, named = bound["args"], bound["kwargs"]
    if not isinstance(positional, list) or not isinstance(named, dict):
        return value
    if not positional:
        return named
    schema = loads(parameters)
    names = list(schema) if isinstance(schema, dict) else []
    if len(positional) > len(names):
        return value  # values the parameters cannot name: keep the recording as it is
    return {**dict(zip(names, positional, strict=False)), **named}


VALUE_DECODERS: dict[str, Callable[[Any], Any]] = {
    "json": as_json, "text": as_text, "kwargs": as_kwargs, "python": as_python, "raw": lambda value: value,
    "identifier": as_identifier, "callback_input": as_callback_input, "last_ai_message": last_ai_message,
    "object_name": object_name,
    "string": lambda value: value if isinstance(value, str) else None,  # any other type: none
}




# ------------------------------------------------------------------ message formats


def chat_completions_requests(value: Any) -> tuple[ToolRequest, ...]:
    """The calls a chat-completions output asks for: an assistant message, a list of messages
    (the last assistant one), or a completion (``choices[0].message``), with ``tool_calls``
    ``[{id, function: {name, arguments}}]``."""
    message = _assistant_message(as_json(value))
    return tool_call_requests(message.get("tool_calls") if message else None)


def tool_call_requests(calls: Any) -> tuple[ToolRequest, ...]:
    """The calls of a chat-completions ``tool_calls`` list, ``[{id, function: {name, arguments}}]``.

    >>> tool_call_requests([{"id": "c1", "function": {"name": "add", "arguments": "{}"}}, {"function": {}}])
    (ToolRequest(name='add', arguments='{}', call_id='c1'),)
    """
    requests = []
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and (name := str_or_none(function.get("name"))):
            requests.append(ToolRequest(name, function.get("arguments"), str_or_none(call.get("id"))))
    return tuple(requests)


def chat_completions_responses(value: Any) -> tuple[ToolResponse, ...]:
    """The answers a chat-completions input hands back: the ``role: tool`` messages after its
    last assistant message (earlier ones were the newest of an earlier model call)."""
    messages = as_json(value)
    if isinstance(messages, dict):
        messages = messages.get("messages")
    if not isinstance(messages, list):
        return ()
    last_assistant = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"), default=-1)
    responses = []
    for message in messages[last_assistant + 1:]:
        if isinstance(message, dict) and message.get("role") == "tool" and message.get("tool_call_id") is not None:
            responses.append(ToolResponse(str(message["tool_call_id"]), text_of(message.get("content"))))
    return tuple(responses)


def _assistant_message(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and isinstance(value.get("choices"), list) and value["choices"]:
        value = value["choices"][0].get("message") if isinstance(value["choices"][0], dict) else None
    if isinstance(value, list):
        assistants = [m for m in value if isinstance(m, dict) and m.get("role") == "assistant"]
        value = assistants[-1] if assistants else None
    return value if isinstance(value, dict) else None


# tool-result output types that say no result came back; a success result for a call no
# tool span ran (a provider-executed tool) is no refusal, so it is not read as an answer
_AI_SDK_FAILED_RESULTS = frozenset({"error-text", "error-json", "execution-denied"})


def ai_sdk_failed_results(value: Any) -> tuple[ToolResponse, ...]:
    """The AI SDK's model messages (``[{role, content: [parts]}]``): the ``tool-result`` parts
    after the last assistant message whose output says no result came back (``error-text``,
    ``error-json``: failed; ``execution-denied``: refused, with its reason). A call no tool
    ran for (unknown tool, invalid input, a denied approval) shows only there.

    >>> [answer] = ai_sdk_failed_results('[{"role": "assistant", "content": []}, {"role": "tool", "content": [{"type":'
    ...                                  ' "tool-result", "toolCallId": "c1", "output": {"type": "execution-denied", "reason": "no"}}]}]')
    >>> answer.call_id, answer.content, answer.error
    ('c1', 'no', False)
    """
    if not isinstance(value, str) or "tool-result" not in value:
        return ()
    messages = newest_messages(value)
    responses = []
    for message in messages if isinstance(messages, list) else ():
        parts = message.get("content") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, dict) or part.get("type") != "tool-result" or part.get("toolCallId") is None:
                continue
            output = part.get("output")
            kind = output.get("type") if isinstance(output, dict) else None
            if isinstance(output, dict) and isinstance(kind, str) and kind in _AI_SDK_FAILED_RESULTS:
                text = output.get("reason") if kind == "execution-denied" else output.get("value")
                responses.append(ToolResponse(str(part["toolCallId"]), text_of(text), error=kind != "execution-denied"))
    return tuple(responses)


def constructor_error_answers(value: Any) -> tuple[ToolResponse, ...]:
    """Messages serialized as constructor records (``{"lc": 1, "type": "constructor", "id":
    [..., "ToolMessage"], "kwargs": {…}}``) in a graph node's state update (``{"outputs":
    {"messages": [...]}}``, or the list itself): its error ``ToolMessage``s, the answers a node
    gave calls no tool ran for (an unknown tool, a guard, a limit, a rejected approval).

    A node's output is its state update, not the whole history, so it is small; most hold no
    error message, which a substring test tells without decoding.

    >>> [answer] = constructor_error_answers('{"outputs": {"messages": [{"id": ["ToolMessage"], "kwargs":'
    ...                                    ' {"content": "no such tool", "tool_call_id": "c1", "status": "error"}}]}}')
    >>> answer.call_id, answer.content, answer.error
    ('c1', 'no such tool', True)
    """
    if not isinstance(value, str) or '"ToolMessage"' not in value or '"error"' not in value:
        return ()
    decoded = loads(value)
    outputs = decoded.get("outputs") if isinstance(decoded, dict) else None
    messages = outputs.get("messages") if isinstance(outputs, dict) else outputs
    responses = []
    for message in messages if isinstance(messages, list) else ():
        fields = message.get("kwargs") if isinstance(message, dict) else None
        if isinstance(fields, dict) and fields.get("status") == "error" and fields.get("tool_call_id") is not None:
            responses.append(ToolResponse(str(fields["tool_call_id"]), text_of(fields.get("content")), error=True))
    return tuple(responses)


_PY_STR = r"'(?:[^'\\]|\\.)*'|" + r'"(?:[^"\\]|\\.)*"'  # a Python str literal, either quote
# A tool call's dataclass repr; its arguments are a dict repr, ended by the ``, id=`` after them
_REPR_CALL = rf"ToolCall\(tool_name=(?P<name>{_PY_STR}), arguments=(?P<arguments>\{{.*?\}}), id=(?P<id>{_PY_STR}|None)"
_REPR_REQUEST = re.compile(rf"(?<!origin=){_REPR_CALL}")
_REPR_RESULT = re.compile(rf"ToolCallResult\(result=(?P<result>{_PY_STR}), origin={_REPR_CALL}, extra=.*?\), error=(?P<error>True|False)\)")


def _repr_texts(value: Any) -> str:
    """The message reprs of a JSON object (the strings of its lists), as one text (empty when none)."""
    decoded = as_json(value)
    lists = decoded.values() if isinstance(decoded, dict) else ()
    return "\n".join(m for items in lists if isinstance(items, list) for m in items if isinstance(m, str))


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def repr_requests(value: Any) -> tuple[ToolRequest, ...]:
    """The calls asked for in messages written as Python dataclass reprs in a JSON object's
    lists (``{"replies": ["ChatMessage(… ToolCall(tool_name='f', arguments={…}, id='c1', …)"]}``).

    >>> reply = "ChatMessage(_content=[ToolCall(tool_name='f', arguments={'a': 1}, id='c1', extra=None)])"
    >>> [call] = repr_requests({"replies": [reply]})
    >>> call.name, call.arguments, call.call_id
    ('f', {'a': 1}, 'c1')
    """
    requests = []
    for found in _REPR_REQUEST.finditer(_repr_texts(value)):
        call_id = found["id"]
        requests.append(ToolRequest(_literal(found["name"]), _literal(found["arguments"]), None if call_id == "None" else _literal(call_id)))
    return tuple(requests)


def repr_responses(value: Any) -> tuple[ToolResponse, ...]:
    """The answers handed back in messages written as Python dataclass reprs: each
    ``ToolCallResult`` with its call's id; ``error=True`` flags a body that raised and a call
    refused alike, ``error=False`` a call that ran (``ToolResponse.ran``).

    >>> answer = "ToolCallResult(result='5', origin=ToolCall(tool_name='f', arguments={}, id='c1', extra=None), error=False)"
    >>> [answer] = repr_responses({"messages": [f"ChatMessage(_content=[{answer}])"]})
    >>> answer.call_id, answer.content, answer.ran, answer.error
    ('c1', '5', True, False)
    """
    responses = []
    for found in _REPR_RESULT.finditer(_repr_texts(value)):
        if found["id"] == "None":
            continue
        failed = found["error"] == "True"
        responses.append(ToolResponse(_literal(found["id"]), str(_literal(found["result"])), refusal=False, error=failed, ran=not failed))
    return tuple(responses)


REQUEST_FORMATS: dict[str, Callable[[Any], tuple[ToolRequest, ...]]] = {
    "chat_completions": chat_completions_requests, "repr_messages": repr_requests, "gemini_contents": gemini_requests,
}
RESPONSE_FORMATS: dict[str, Callable[[Any], tuple[ToolResponse, ...]]] = {
    "chat_completions": chat_completions_responses, "ai_sdk_messages": ai_sdk_failed_results,
    "constructor_messages": constructor_error_answers, "repr_messages": repr_responses,
    "gemini_contents": gemini_responses, "message_dicts": tool_message_answers,
}
