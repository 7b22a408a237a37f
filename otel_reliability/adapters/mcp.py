"""The OpenTelemetry MCP semantic conventions (``mcp.method.name``).

An MCP client records each JSON-RPC request it sends (span kind CLIENT) and the server each
one it handles (kind SERVER, in its own service; the client propagates the trace context over
stdio or HTTP, so both are in one trace). Only ``tools/call`` is a tool call: ``initialize``,
``tools/list`` and notifications are session traffic. A tool that fails answers with a
successful JSON-RPC response whose result has ``isError``; the conventions record it as
``error.type`` = ``tool_error`` (and the span status ERROR). The model's call id is not on
these spans: ``jsonrpc.request.id`` numbers the session's requests. So an MCP span is one
layer of a call that the framework's own tool span usually records too; assembly folds the
layers into one attempt (``assembly.layers``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord
from .common import error_text, str_or_none

METHOD = "mcp.method.name"  # marks the convention
TOOL_CALL = "tools/call"
_TOOL_ERROR = "tool_error"


def is_tool_call(attributes: Mapping[str, Any]) -> bool:
    """Whether the span records an MCP ``tools/call`` request.

    >>> is_tool_call({"mcp.method.name": "tools/call"}), is_tool_call({"mcp.method.name": "tools/list"})
    (True, False)
    """
    return attributes.get(METHOD) == TOOL_CALL


class MCPAdapter:
    markers = (METHOD,)

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        record.error = error_text(span)
        if not is_tool_call(attrs):
            return record  # session traffic: no call of a tool
        record.role = Role.TOOL
        record.tool_name = str_or_none(attrs.get("gen_ai.tool.name")) or _named_in(span.name)
        record.arguments = attrs.get("gen_ai.tool.call.arguments")
        record.call_id = str_or_none(attrs.get("gen_ai.tool.call.id"))
        if record.error is None and attrs.get("error.type") == _TOOL_ERROR:
            record.error = str_or_none(attrs.get("gen_ai.tool.call.result")) or _TOOL_ERROR
        return record


def _named_in(span_name: str) -> str | None:
    """The tool a ``tools/call {tool}`` span name names (some clients put a word before it:
    ``MCP send tools/call {tool}``).

    >>> _named_in("tools/call multiply"), _named_in("MCP send tools/call multiply"), _named_in("tools/call")
    ('multiply', 'multiply', None)
    """
    _, found, target = span_name.partition(TOOL_CALL + " ")
    return target.strip() or None if found else None
