"""A span read as a convention file's rule says: each field from where the rule puts it,
through the decoder it names. Nothing here knows a convention: it only follows the rule."""

from __future__ import annotations

import re
from typing import Any

from ...model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from ..common import RESULT_PREFIX, error_text, str_or_none, text_of
from ..decoders import REQUEST_FORMATS, RESPONSE_FORMATS, VALUE_DECODERS, as_json, at_path, first_at
from . import holds
from .model import Messages, Source, SpanRule

_TRUE = (True, "true", "True", 1)


def read_by_rule(span: SpanData, rule: SpanRule, match: re.Match[str] | None) -> SpanRecord:
    """The record of ``span`` as ``rule`` reads it (``match``: its span name pattern's match).

    >>> from otel_reliability.model import SpanData
    >>> rule = SpanRule(when={"attribute": "x.kind", "equals": ["tool"]}, role="tool", tool_name="x.name",
    ...                 arguments={"attribute": "x.input", "decode": "kwargs"}, failed_when="x.failed", result="x.out")
    >>> span = SpanData(1, 2, 0, "t", 0, 1, {"x.kind": "tool", "x.name": "rm", "x.input": '{"args": [], "kwargs": {"p": "/"}}',
    ...                                       "x.failed": True, "x.out": "denied"})
    >>> record = read_by_rule(span, rule, None)
    >>> record.role.value, record.tool_name, record.arguments, record.error
    ('tool', 'rm', {'p': '/'}, 'denied')
    """
    record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
    record.error = error_text(span)
    if rule.role == "agent_run":
        record.role = Role.AGENT_RUN
        record.agent_name = str_or_none(_value(span, rule.agent_name, match))
        record.attributes = span.attributes
        output = _value(span, rule.output, match)
        record.output = None if output is None else text_of(output)
        record.outlived = rule.outlived
    elif rule.role == "tool":
        _read_tool(record, span, rule, match)
    elif rule.role == "names_agent":
        record.names_agent = str_or_none(_value(span, rule.agent_name, match))
    elif rule.role == "acting_agent":  # no run: the agent acting from here on in the run around it
        record.agent_name = str_or_none(_value(span, rule.agent_name, match))
    elif rule.role == "handoff":
        record.role, record.handoff_to = Role.TOOL, str_or_none(_value(span, rule.target, match))
    else:
        record.role, record.model_call = Role.MODEL, True
        if rule.requests is not None:
            record.requests = _messages(span, rule.requests, requests=True)
        if rule.responses is not None:
            record.responses = _messages(span, rule.responses, requests=False)
    return record


def _read_tool(record: SpanRecord, span: SpanData, rule: SpanRule, match: re.Match[str] | None) -> None:
    record.role = Role.TOOL
    record.tool_name = str_or_none(_value(span, rule.tool_name, match)) or span.name
    record.arguments = _value(span, rule.arguments, match)
    record.call_id = str_or_none(_value(span, rule.call_id, match))
    result = _value(span, rule.result, match)
    record.returned = result is not None
    if as_json(result) is not None:  # what the call returned (a JSON null is nothing): a witness (``assembly.witnesses``)
        record.output = text_of(result)[:RESULT_PREFIX]
    failed = rule.failed_when is not None and holds(rule.failed_when, span.attributes)
    if record.error is None and failed:
        said = _value(span, rule.error, match)
        record.error = text_of(said if said is not None else result)
    elif record.error == "" and rule.error is not None:
        record.error = text_of(_value(span, rule.error, match))


def _value(span: SpanData, source: Source | None, match: re.Match[str] | None) -> Any:
    """The value ``source`` points at, decoded; None when the span does not carry it."""
    if source is None:
        return None
    if source.span_name:
        raw: Any = span.name
    elif source.span_name_group is not None:
        raw = match.group(source.span_name_group) if match is not None else None
    elif source.event is not None:
        raw = next((e.attributes.get(str(source.attribute)) for e in span.events if e.name == source.event), None)
    else:
        raw = span.attributes.get(str(source.attribute))
    if raw is None:
        return None
    value = VALUE_DECODERS[source.decode](raw)
    return first_at(value, source.path) if source.path else value


def _messages(span: SpanData, messages: Messages, *, requests: bool) -> tuple[Any, ...]:
    if messages.event is not None:
        raw = next((e.attributes.get(messages.attribute) for e in span.events if e.name == messages.event), None)
    else:
        raw = span.attributes.get(messages.attribute)
    if raw is None:
        return ()
    if messages.format != "items":
        return (REQUEST_FORMATS if requests else RESPONSE_FORMATS)[messages.format](raw)
    found: list[ToolRequest | ToolResponse] = []
    for item in at_path(as_json(raw), messages.path):
        if requests:
            name = str_or_none(first_at(item, messages.name)) if messages.name else None
            if name:
                arguments = first_at(item, messages.arguments) if messages.arguments else None
                found.append(ToolRequest(name, arguments, str_or_none(first_at(item, messages.call_id))))
        elif (call_id := str_or_none(first_at(item, messages.call_id))):
            content = text_of(first_at(item, messages.content)) if messages.content else ""
            failed = messages.error is not None and first_at(item, messages.error) in _TRUE
            found.append(ToolResponse(call_id, content, error=failed))
    return tuple(found)
