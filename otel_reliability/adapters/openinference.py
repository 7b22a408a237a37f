"""The OpenInference conventions (``openinference.span.kind``).

Messages are flattened into indexed attributes
(``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name``), so a
model span is read in one pass over its keys. Instrumentations differ in where the
run lives: agno and openai-agents mark it ``AGENT``; LangGraph marks its graph's
root ``CHAIN`` (its ``AGENT`` kind is a name heuristic that also hits graph nodes),
and records the call id of a tool only on the ``tools`` node that dispatched it.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from .common import error_text, loads, str_or_none, text_of

_OUTPUT_CALL = re.compile(r"llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$")
_INPUT_MESSAGE = re.compile(r"llm\.input_messages\.(\d+)\.message\.(role|tool_call_id|content)$")
_HANDOFF_PREFIX = "handoff to "
_DISPATCH_MARKER = '"tool_call_with_context"'

# agno records a call the user rejected as an errored execution, not a refusal.
_RAN_BUT_REJECTED = ("Function call was rejected by the user",)


def may_be_run(attributes: Mapping[str, Any], local_root: bool) -> bool | None:
    """Whether a span of this convention may be an agent run (a graph's root ``CHAIN`` only at the
    process's local root, where it is cheap to tell); None when it is not of this convention."""
    kind = attributes.get("openinference.span.kind")
    if kind is None:
        return None
    return kind == "AGENT" or (kind == "CHAIN" and local_root)


class OpenInferenceAdapter:
    def claims(self, span: SpanData) -> bool:
        return "openinference.span.kind" in span.attributes

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        kind = attrs.get("openinference.span.kind")
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        record.error = error_text(span)
        if kind == "TOOL" or (kind == "AGENT" and attrs.get("tool.name")):
            _read_tool(span, record)
        elif kind == "AGENT" and not _is_graph_node(attrs):
            _read_run(span, record, attrs.get("agent.name") or attrs.get("graph.node.name"))
        elif kind == "CHAIN" and _is_graph_root(attrs):
            _read_run(span, record, span.name)
        elif kind == "LLM":
            record.role = Role.MODEL
            _read_messages(attrs, record)
        elif kind == "CHAIN":
            _read_dispatch(attrs, record)
        return record


def _read_run(span: SpanData, record: SpanRecord, agent_name: Any) -> None:
    attrs = span.attributes
    record.role = Role.AGENT_RUN
    record.agent_name = str(agent_name) if agent_name else None
    record.run_key = str_or_none(attrs.get("agno.run.id"))
    record.attributes = attrs
    output = attrs.get("output.value")
    record.output = output if isinstance(output, str) else None


def _read_tool(span: SpanData, record: SpanRecord) -> None:
    attrs = span.attributes
    record.role = Role.TOOL
    record.tool_name = str_or_none(attrs.get("tool.name"))
    if record.tool_name is None and span.name.startswith(_HANDOFF_PREFIX):
        # openai-agents: the span names the target; its input is the source agent, not arguments
        record.handoff_to = span.name[len(_HANDOFF_PREFIX):]
    else:
        record.tool_name = record.tool_name or span.name
        arguments = attrs.get("input.value")
        record.arguments = arguments if arguments is not None else attrs.get("tool.parameters")
    call_id = attrs.get("tool.id") or attrs.get("tool_call.id")
    record.call_id = str(call_id) if call_id is not None else None


def _metadata(attrs: Any) -> dict[str, Any]:
    metadata = loads(attrs.get("metadata"))
    return metadata if isinstance(metadata, dict) else {}


def _is_graph_node(attrs: Any) -> bool:
    return "langgraph_node" in _metadata(attrs)


def _is_graph_root(attrs: Any) -> bool:
    metadata = _metadata(attrs)
    return metadata.get("ls_integration") == "langgraph" and "langgraph_node" not in metadata


def _read_messages(attrs: Any, record: SpanRecord) -> None:
    calls: dict[tuple[int, int], dict[str, str]] = {}
    inputs: dict[int, dict[str, str]] = {}
    for key, value in attrs.items():
        if key.startswith("llm.output_messages."):
            match = _OUTPUT_CALL.match(key)
            if match:
                calls.setdefault((int(match[1]), int(match[2])), {})[match[3]] = value
        elif key.startswith("llm.input_messages."):
            match = _INPUT_MESSAGE.match(key)
            if match:
                inputs.setdefault(int(match[1]), {})[match[2]] = value
    record.requests = tuple(
        ToolRequest(str(call["function.name"]), call.get("function.arguments"), str_or_none(call.get("id")))
        for _, call in sorted(calls.items())
        if call.get("function.name")
    )
    record.responses = tuple(
        _response(str(message["tool_call_id"]), str(message.get("content") or ""))
        for _, message in sorted(inputs.items())
        if message.get("role") == "tool" and message.get("tool_call_id") is not None
    )


def _response(call_id: str, content: str, error: bool = False) -> ToolResponse:
    return ToolResponse(call_id, content, refusal=not content.startswith(_RAN_BUT_REJECTED), error=error)


def _read_dispatch(attrs: Any, record: SpanRecord) -> None:
    """A LangGraph ``tools`` node: the call it dispatched and the ToolMessage it produced."""
    raw = attrs.get("input.value")
    if not isinstance(raw, str) or _DISPATCH_MARKER not in raw[:64]:
        return
    dispatch = loads(raw)
    call = dispatch.get("tool_call") if isinstance(dispatch, dict) else None
    if not isinstance(call, dict) or not call.get("name"):
        return
    record.dispatched = ToolRequest(str(call["name"]), call.get("args"), str_or_none(call.get("id")))
    output = loads(attrs.get("output.value"))
    messages = output.get("messages") if isinstance(output, dict) else None
    responses = []
    for message in messages or ():
        data = message.get("data") if isinstance(message, dict) else None
        if isinstance(data, dict) and data.get("tool_call_id") is not None:
            responses.append(
                _response(str(data["tool_call_id"]), text_of(data.get("content")), error=data.get("status") == "error")
            )
    record.responses = tuple(responses)
