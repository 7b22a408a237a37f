"""The OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``).

Covers the current conventions (``gen_ai.input.messages`` / ``gen_ai.output.messages``
as attributes or inside ``gen_ai.client.inference.operation.details`` events) and the
older event-based shape (``gen_ai.choice``, ``gen_ai.tool.message``) that strands
still emits by default, where a tool's arguments live only in an event. What a tool
span's own attributes say beyond the convention (refusals, placeholders, synthetic
spans) is read in ``genai_tools``; Google ADK's legacy ``call_llm`` spans, which carry
the model's Gemini content instead of GenAI messages, by the convention file
``google_adk_call_llm.yaml``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Mapping

from ..model import EventData, Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from . import genai_tools, openinference
from .common import error_text, loads, stops_for_tools, str_or_none, text_of
from .history import newest_messages
from .knowledge import FRAMEWORKS
from .usage import genai_tokens

OPERATION = "gen_ai.operation.name"  # marks the convention
RUN_OPERATIONS = frozenset({"invoke_agent", "invoke_workflow", "invoke_swarm", "invoke_graph"})
MODEL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
FINISH_REASONS = "gen_ai.response.finish_reasons"  # read only for whether the model stopped to have tools called
_TOOL_DEFINITIONS = "gen_ai.tool.definitions"  # the tools offered to the model, kept raw (``assembly.declared``)
_ASCII_ESCAPE = re.compile(r"\\u00[0-7]")  # a \u escape of an ASCII character

def may_be_run(attributes: Mapping[str, Any]) -> bool | None:
    """Whether a span of this convention may be an agent run; None when it is not of this convention."""
    operation = attributes.get(OPERATION)
    if operation is None:
        return None
    # is_one_of, inlined: the app's thread asks this of every span
    return isinstance(operation, str) and operation in RUN_OPERATIONS


class GenAIAdapter:
    markers = (OPERATION,)

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        operation = attrs.get(OPERATION)
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        error = record.error = error_text(span)
        if type(operation) is not str and not isinstance(operation, str):  # one test for the common case
            return record  # an operation that is no text names none of ours
        if operation in RUN_OPERATIONS:
            record.role = Role.AGENT_RUN
            # Only the attribute names the agent: a span named ``invoke_agent <x>`` without it does
            # not follow the convention (``x`` is a model's name, a function's), and a workflow's,
            # graph's or swarm's span names those, not an agent.
            record.agent_name = str_or_none(attrs.get("gen_ai.agent.name")) or None
            record.attributes = attrs
            record.tool_definitions = attrs.get(_TOOL_DEFINITIONS)
            output = attrs.get("final_result")
            record.output = output if isinstance(output, str) else None
        elif operation == "execute_tool":
            tool_name = str_or_none(attrs.get("gen_ai.tool.name")) or _name_after(span.name, operation)
            if genai_tools.is_synthetic(tool_name):
                return record
            call_id = genai_tools.call_id(attrs)
            arguments = genai_tools.arguments(attrs)
            if arguments is None:
                arguments = _event_arguments(span)
            result = genai_tools.result_error(attrs)
            if result is not None and genai_tools.awaits_confirmation(error, result):
                # The span records a call held for the user's confirmation, not a run of the
                # tool: it is the request, answered (or not) by a later run.
                record.role = Role.MODEL
                record.requests = (ToolRequest(tool_name or span.name, arguments, call_id),)
                return record
            record.role = Role.TOOL
            record.tool_name = tool_name
            record.call_id = call_id
            record.arguments = arguments
            record.refusal = genai_tools.refusal(span, tool_name, error, result)
        elif operation in MODEL_OPERATIONS:
            record.role = Role.MODEL
            record.model_call = True
            record.tokens = genai_tokens(attrs)
            record.stopped_for_tools = stops_for_tools(attrs.get(FINISH_REASONS))
            record.tool_definitions = attrs.get(_TOOL_DEFINITIONS)
            record.requests = _requests(span)
            record.responses = _responses(span)
            if not (record.requests or record.responses) and openinference.KIND in attrs:
                # stamped by both conventions (strands under OpenInference): the messages are OpenInference's
                openinference.read_messages(attrs, record, FRAMEWORKS.applies)
        return record


def _name_after(span_name: str, operation: str) -> str | None:
    prefix = operation + " "
    return span_name[len(prefix):] or None if span_name.startswith(prefix) else None


def _event_arguments(span: SpanData) -> Any:
    """A tool's arguments when only the legacy ``gen_ai.tool.message`` event carries them."""
    for event in span.events:
        if event.name == "gen_ai.tool.message":
            return event.attributes.get("content")
    return None


def _messages(span: SpanData, key: str, part_type: str, decode: Callable[[Any], Any] = loads) -> list[Any]:
    """The span's messages under ``key`` as ``decode`` reads them; [] when none can hold a part of ``part_type``."""
    events = span.events
    value = _loads_mentioning(span.attributes.get(key), part_type, bool(events), decode)
    if isinstance(value, list):
        return value
    for event in events:
        if event.name == DETAILS_EVENT and key in event.attributes:
            value = _loads_mentioning(event.attributes[key], part_type, True, decode)
            if isinstance(value, list):
                return value
    return []


def _loads_mentioning(value: Any, part_type: str, decides: bool, decode: Callable[[Any], Any]) -> Any:
    # Message histories are the largest attributes a span carries, and most hold no part
    # of the type asked for: a substring search is far cheaper than decoding them. A JSON
    # text can spell the (ASCII) type only literally or with \u00XX escapes (tool\u005fcall);
    # other escapes ("21 \u00b0C") cannot. Such a text is still decoded when ``decides``:
    # whether it decodes to a list decides if the caller reads an event instead.
    if isinstance(value, str) and part_type not in value and (
        "\\u" not in value or (not decides and _ASCII_ESCAPE.search(value) is None)
    ):
        return None
    return decode(value)


def _parts(
    span: SpanData, key: str, part_type: str, decode: Callable[[Any], Any] = loads
) -> list[dict[str, Any]]:
    """The parts of type ``part_type`` in the span's messages under ``key`` (as ``decode`` reads them), in order."""
    found = []
    for message in _messages(span, key, part_type, decode):
        parts = message.get("parts") if isinstance(message, dict) else None
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and part.get("type") == part_type:
                    found.append(part)
    return found


def _requests(span: SpanData) -> tuple[ToolRequest, ...]:
    requests = []
    for part in _parts(span, "gen_ai.output.messages", "tool_call"):
        if part.get("name"):
            requests.append(ToolRequest(str(part["name"]), part.get("arguments"), str_or_none(part.get("id"))))
    for event in span.events:
        if event.name == "gen_ai.choice":
            requests.extend(_legacy_choice_requests(event.attributes))
    return tuple(requests)


def _legacy_choice_requests(attrs: Any) -> Iterator[ToolRequest]:
    message = loads(attrs.get("message"))
    if isinstance(message, list):  # Bedrock content blocks: [{"toolUse": {...}}]
        for block in message:
            use = block.get("toolUse") if isinstance(block, dict) else None
            if isinstance(use, dict) and use.get("name"):
                yield ToolRequest(str(use["name"]), use.get("input"), str_or_none(use.get("toolUseId")))
    elif isinstance(message, dict) and isinstance(message.get("tool_calls"), list):  # OpenAI-style
        for call in message["tool_calls"]:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and function.get("name"):
                yield ToolRequest(str(function["name"]), function.get("arguments"), str_or_none(call.get("id")))


def _responses(span: SpanData) -> tuple[ToolResponse, ...]:
    """The answers the span's input adds: those after its last assistant message (``history``)."""
    responses = []
    for part in _parts(span, "gen_ai.input.messages", "tool_call_response", newest_messages):
        if part.get("id") is not None:
            content = part["response"] if "response" in part else part.get("result")
            refused = genai_tools.answer_refusal(content)
            responses.append(ToolResponse(str(part["id"]), text_of(content), refusal=True, names_refusal=refused))
    for event in _newest_tool_messages(span.events):
        responses.extend(_legacy_tool_message(event.attributes))
    return tuple(responses)


def _newest_tool_messages(events: tuple[EventData, ...]) -> list[EventData]:
    """The legacy ``gen_ai.tool.message`` events after the last ``gen_ai.assistant.message``: the
    legacy events replay the history too, one event a message, in order."""
    newest = []
    for event in reversed(events):
        if event.name == "gen_ai.assistant.message":
            break
        if event.name == "gen_ai.tool.message":
            newest.append(event)
    newest.reverse()
    return newest


def _legacy_tool_message(attrs: Any) -> Iterator[ToolResponse]:
    raw = attrs.get("content")
    content = loads(raw)
    if content is None and isinstance(raw, str):
        content = raw  # plain text ("error: unknown tool 'x'"), not JSON
    if isinstance(content, list):  # Bedrock: [{"toolResult": {"toolUseId", "status", "content"}}]
        for block in content:
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict) and result.get("toolUseId") is not None:
                yield ToolResponse(
                    str(result["toolUseId"]),
                    text_of(result.get("content")),
                    refusal=True,
                    error=result.get("status") == "error",
                )
    elif (call_id := attrs.get("id", attrs.get("tool_call_id"))) is not None:  # the event's id; some name it as the message does
        yield ToolResponse(str(call_id), text_of(content), refusal=True)
