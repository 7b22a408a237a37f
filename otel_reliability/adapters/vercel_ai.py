"""The Vercel AI SDK's own spans (``ai.operationId``, ``experimental_telemetry``).

* **Runs** are ``ai.generateText`` / ``ai.streamText`` calls; nothing marks them as an
  agent, and only ``ai.telemetry.functionId`` names one (a call without it names none).
  An agent called from a tool's ``execute`` is a child of that ``ai.toolCall`` span.
* **Tools**: ``ai.toolCall``, one span per executed call, with the model's call id
  (``ai.toolCall.id``), its name and its validated arguments.
* **Model calls** (``….doGenerate`` / ``….doStream``) list the calls the model asked for
  in ``ai.response.toolCalls``, and replay the conversation in ``ai.prompt.messages``,
  whose newest ``tool-result`` parts are the answers to the previous step's calls. A call
  no tool ran for (unknown tool, invalid input, a denied approval) shows only there, as
  an ``error-text`` or ``execution-denied`` result.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from .common import error_text, is_one_of, loads, str_or_none, text_of
from .history import newest_messages
from .usage import vercel_tokens

OPERATION = "ai.operationId"
RUN_OPERATIONS = frozenset({"ai.generateText", "ai.streamText"})
MODEL_OPERATIONS = frozenset({"ai.generateText.doGenerate", "ai.streamText.doStream"})
TOOL_OPERATION = "ai.toolCall"
# The SDK's start times are whole milliseconds and its end times are not, so a child may
# start before its run or end after it by under 1 ms; a run reads as that much wider so that
# its children stay inside it (assembly skips a parent that does not contain its child).
_CLOCK_SLACK_NS = 1_000_000
# tool-result output types that say no result came back; a success result for a call no
# tool span ran (a provider-executed tool) is no refusal, so it is not read as an answer
_FAILED_RESULTS = frozenset({"error-text", "error-json", "execution-denied"})


def may_be_run(attributes: Mapping[str, Any]) -> bool | None:
    """Whether a span of this convention may be an agent run; None when it is not of this convention."""
    operation = attributes.get(OPERATION)
    if operation is None:
        return None
    return is_one_of(operation, RUN_OPERATIONS)


class VercelAIAdapter:
    markers = (OPERATION,)

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        operation = attrs.get(OPERATION)
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        record.error = error_text(span)
        if is_one_of(operation, RUN_OPERATIONS):
            record.role = Role.AGENT_RUN
            record.start_ns = max(0, record.start_ns - _CLOCK_SLACK_NS)
            record.end_ns += _CLOCK_SLACK_NS
            record.agent_name = str_or_none(attrs.get("ai.telemetry.functionId"))
            record.attributes = attrs
            output = attrs.get("ai.response.text")
            record.output = output if isinstance(output, str) else None
        elif operation == TOOL_OPERATION:
            record.role = Role.TOOL
            record.tool_name = str_or_none(attrs.get("ai.toolCall.name"))
            record.call_id = str_or_none(attrs.get("ai.toolCall.id"))
            record.arguments = attrs.get("ai.toolCall.args")
        elif is_one_of(operation, MODEL_OPERATIONS):
            record.role = Role.MODEL
            record.model_call = True
            record.tokens = vercel_tokens(attrs)
            record.requests = _requests(attrs.get("ai.response.toolCalls"))
            record.responses = _failed_results(attrs.get("ai.prompt.messages"))
        return record


def _requests(value: Any) -> tuple[ToolRequest, ...]:
    """``[{"toolCallId", "toolName", "input"}]``; ``input`` is the model's JSON text (an object when streamed)."""
    calls = loads(value)
    requests = []
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and call.get("toolName"):
            requests.append(ToolRequest(str(call["toolName"]), call.get("input"), str_or_none(call.get("toolCallId"))))
    return tuple(requests)


def _failed_results(value: Any) -> tuple[ToolResponse, ...]:
    """The failed ``tool-result`` parts the prompt adds (those after its last assistant message)."""
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
            if isinstance(output, dict) and is_one_of(kind, _FAILED_RESULTS):
                text = output.get("reason") if kind == "execution-denied" else output.get("value")
                responses.append(ToolResponse(str(part["toolCallId"]), text_of(text), error=kind != "execution-denied"))
    return tuple(responses)
