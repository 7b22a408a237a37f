"""OpenLLMetry (traceloop) around LangChain / LangGraph: ``traceloop.span.kind``.

Its spans carry GenAI attributes too (``gen_ai.operation.name`` on every span), but read
as GenAI they give wrong chains, so this adapter reads every span that has a traceloop
kind, and the graph wrappers that come with them (``gen_ai.workflow.nodes``); model
calls (``ChatOpenAI.chat``) have no traceloop kind and stay with the GenAI adapter.

* **Runs.** A graph invocation has two spans: the wrapper (``invoke_agent <graph>``) and
  the callback tree's root (``<graph>.workflow``, kind ``workflow``, under the wrapper at
  the top level; a ``task`` named after the agent when the graph runs inside another).
  A sub-agent's wrapper is an empty sibling of its callback root, which holds its tools;
  so the callback root is the run and the wrapper is not.
* **Tools** (kind ``tool``) record the callback's whole input as their arguments:
  ``{"input_str": "<python literal>", "inputs": {…}, "kwargs": {"tool_call_id": …}}``;
  the call id exists only in that wrapper.
* **Refusals.** A call that never reached a tool (unknown tool, a middleware guard, a
  limit, a rejected approval) leaves an error ``ToolMessage`` in the output of the graph
  node that answered it; an argument validation failure is a tool span that raised a
  ``ValidationError`` for that tool.
* **Control flow.** LangGraph steers graphs with exceptions (a handoff's
  ``ParentCommand``, an approval's ``GraphInterrupt``) that the spans record as errors.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord, ToolResponse
from .common import RESULT_PREFIX, error_text, loads, str_or_none, text_of

KIND = "traceloop.span.kind"
_GRAPH_WRAPPER = "gen_ai.workflow.nodes"  # only the wrapper span of a graph invocation sets it
_ENTITY = "traceloop.entity.name"
_AGENT = "traceloop.association.properties.lc_agent_name"
_OUTPUT = "traceloop.entity.output"
# langgraph.errors raised to pause or redirect a graph, not failures
_CONTROL_FLOW = frozenset({"GraphBubbleUp", "GraphInterrupt", "NodeInterrupt", "ParentCommand"})
_VALIDATION_ERROR = "ValidationError"
_VALIDATION_MESSAGE = re.compile(r"\d+ validation errors? for (\S+)")  # pydantic's first line names the tool
_LITERAL_LIMIT = 100_000  # characters: a longer Python literal is kept as text rather than parsed


def may_be_run(attributes: Mapping[str, Any]) -> bool | None:
    """Whether a span of this convention may be an agent run; None when it is not of this convention."""
    kind = attributes.get(KIND)
    if kind is None:
        return None
    return _is_run(kind, attributes)


def _is_run(kind: Any, attrs: Mapping[str, Any]) -> bool:
    if kind == "workflow":
        return True
    entity = attrs.get(_ENTITY)
    return kind == "task" and entity is not None and entity == attrs.get(_AGENT)


class TraceloopAdapter:
    markers = (KIND, _GRAPH_WRAPPER)

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        kind = attrs.get(KIND)
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        record.error = None if _steered(span) else error_text(span)
        if kind is None:  # a graph wrapper: the callback root beside or under it is the run
            return record
        if _is_run(kind, attrs):
            record.role = Role.AGENT_RUN
            # The agent's name, never the entity's: a workflow's entity is its graph (``LangGraph``)
            record.agent_name = str_or_none(attrs.get("gen_ai.agent.name") or attrs.get(_AGENT)) or None
            record.attributes = attrs
            record.output = _final_answer(attrs.get(_OUTPUT))
        elif kind == "tool":
            _read_tool(span, record)
        elif kind == "task":
            record.responses = _error_tool_messages(attrs.get(_OUTPUT))
        return record


def _final_answer(output: Any) -> str | None:
    """The text of the last AI message in a run's final state: its answer, for reputation's fact checks."""
    decoded = loads(output)
    outputs = decoded.get("outputs") if isinstance(decoded, dict) else None
    messages = outputs.get("messages") if isinstance(outputs, dict) else None
    for message in reversed(messages) if isinstance(messages, list) else ():
        if isinstance(message, dict) and isinstance(message.get("id"), list) and message["id"][-1:] == ["AIMessage"]:
            fields = message.get("kwargs")
            content = fields.get("content") if isinstance(fields, dict) else None
            return content if isinstance(content, str) and content else None  # empty: it ended on a tool call
    return None


def _steered(span: SpanData) -> bool:
    """Whether the span's error is LangGraph control flow rather than a failure."""
    error_type = span.attributes.get("error.type")
    if isinstance(error_type, str) and error_type.rsplit(".", 1)[-1] in _CONTROL_FLOW:
        return True
    for event in span.events:
        if event.name == "exception":
            exception_type = str(event.attributes.get("exception.type") or "")
            return exception_type.rsplit(".", 1)[-1] in _CONTROL_FLOW
    return False


def _read_tool(span: SpanData, record: SpanRecord) -> None:
    attrs = span.attributes
    record.role = Role.TOOL
    record.tool_name = str_or_none(attrs.get("gen_ai.tool.name") or attrs.get(_ENTITY))
    raw = attrs.get("gen_ai.tool.call.arguments", attrs.get("traceloop.entity.input"))
    record.arguments, record.call_id = _unwrapped(raw)
    output = attrs.get(_OUTPUT)
    if isinstance(output, str):  # what the tool returned: a witness of the call (``assembly.witnesses``)
        record.returned, record.output = True, output[:RESULT_PREFIX]
    if record.error is not None and _failed_validation(span, record.tool_name):
        record.refusal = "invalid arguments"


def _unwrapped(raw: Any) -> tuple[Any, str | None]:
    """The arguments and call id inside the callback's input wrapper (``raw`` itself when it is none)."""
    wrapper = loads(raw)
    if not isinstance(wrapper, dict) or not ("inputs" in wrapper or "input_str" in wrapper):
        return raw, None
    kwargs = wrapper.get("kwargs")
    call_id = str_or_none(kwargs.get("tool_call_id")) if isinstance(kwargs, dict) else None
    inputs = wrapper.get("inputs")
    if isinstance(inputs, dict):
        return inputs, call_id
    return _python_literal(wrapper.get("input_str")), call_id


def _python_literal(text: Any) -> Any:
    """``input_str`` is ``str()`` of the input: a Python literal, read without evaluating code."""
    if not isinstance(text, str) or len(text) > _LITERAL_LIMIT:
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text  # not a literal (a plain string input): the text is the argument
    return value if isinstance(value, dict) else text


def _failed_validation(span: SpanData, tool_name: str | None) -> bool:
    """Whether the tool's input failed its schema, so its body never ran: pydantic's error for
    the tool's own argument model, not a ``ValidationError`` the body raised about something else."""
    for event in span.events:
        if event.name == "exception":
            attrs = event.attributes
            if not str(attrs.get("exception.type") or "").endswith(_VALIDATION_ERROR):
                return False
            match = _VALIDATION_MESSAGE.match(str(attrs.get("exception.message") or ""))
            return match is not None and match.group(1) == tool_name
    return False


def _error_tool_messages(output: Any) -> tuple[ToolResponse, ...]:
    """The error ``ToolMessage``s a graph node returned: its answers to calls no tool ran.

    A node's output is its state update, not the whole history, so it is small; most
    hold no error message, which a substring test tells without decoding.
    """
    if not isinstance(output, str) or '"ToolMessage"' not in output or '"error"' not in output:
        return ()
    decoded = loads(output)
    outputs = decoded.get("outputs") if isinstance(decoded, dict) else None
    messages = outputs.get("messages") if isinstance(outputs, dict) else outputs
    responses = []
    for message in messages if isinstance(messages, list) else ():
        fields = message.get("kwargs") if isinstance(message, dict) else None
        if isinstance(fields, dict) and fields.get("status") == "error" and fields.get("tool_call_id") is not None:
            responses.append(ToolResponse(str(fields["tool_call_id"]), text_of(fields.get("content")), error=True))
    return tuple(responses)
