"""A span read as a convention file's rule says: each field from where the rule puts it,
through the decoder it names, by the rule's reader (``rule_readers``, made once per rule). Nothing
here knows a convention: it only follows the rule."""

from __future__ import annotations

import re
from typing import Any

from ...jsontext import decode_json
from ...model import Role, SpanData, SpanRecord, ToolRequest
from .. import flattened, frameworks
from ..decoders import VALUE_DECODERS, bound_arguments
from ..json_paths import first_at
from .rule_readers import RuleReader, reader_for
from .model import Source, SpanRule


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
    read = _READERS.get(id(rule))
    if read is None or read[0] is not rule:
        read = _READERS[id(rule)] = (rule, reader_for(rule, _read_source, _HELPERS))
    return read[1](span, match)


# each rule's reader, made once (kept by the rule's id with the rule itself: the id is never reused meanwhile)
_READERS: dict[int, tuple[SpanRule, RuleReader]] = {}


def _read_refusal_or_hold(record: SpanRecord, span: SpanData, rule: SpanRule) -> None:
    """What a tool rule says beyond a failure's own condition: a refusal every span it reads is
    (``refusal`` alone), one a framework names in a failed call's answer (``refusal_named_in``),
    or a call held for a decision (``held``), read as the model's request."""
    if rule.refusal is not None and rule.refused_when is None:
        record.refusal = rule.refusal
    elif record.error is not None and record.refusal is None and rule.refusal_named_in:
        answer = _first_text(span, rule.refusal_named_in)
        if answer is not None:
            record.refusal = frameworks.refusal_named(answer)
    if rule.held and record.error is None:
        request = ToolRequest(record.tool_name or span.name, record.arguments, record.call_id)
        record.role, record.requests, record.refusal = Role.MODEL, (request,), None
        record.tool_name = record.call_id = record.arguments = None


def _is_json(text: str) -> bool:
    try:
        decode_json(text)
    except ValueError:
        return False
    return True


def _first_text(span: SpanData, sources: tuple[Source, ...]) -> str | None:
    """The text at the ``path`` of the first of ``sources`` (span attributes) that holds one there.
    Most values hold no such key, which a substring test of their JSON text tells without decoding."""
    for source in sources:
        raw = span.attributes.get(str(source.attribute))
        key = source.path.rsplit(".", 1)[-1] if source.path else "*"
        if raw is None or (isinstance(raw, str) and key != "*" and not key.isdigit() and "\\u" not in raw and f'"{key}"' not in raw):
            continue
        value = VALUE_DECODERS[source.decode](raw)
        value = first_at(value, source.path) if source.path else value
        if isinstance(value, str):
            return value
    return None


def _read_source(span: SpanData, source: Source) -> Any:
    """The value at a place that has no step of its own (a flattened list, a tool's bound
    arguments, a mapping without some values, a search in a text); None when the span lacks it."""
    if source.span_name:
        raw: Any = span.name
    elif source.event is not None:
        raw = next((e.attributes.get(str(source.attribute)) for e in span.events if e.name == source.event), None)
    elif source.each is not None:
        raw = flattened.values(span.attributes, str(source.attribute), source.each) or None
    else:
        raw = span.attributes.get(str(source.attribute))
    if raw is None:
        return None
    if source.search is not None:
        return _searched(raw, source.search, source.last)
    if source.names_from is not None:
        value = bound_arguments(raw, span.attributes.get(source.names_from))
    else:
        value = VALUE_DECODERS[source.decode](raw)
    if source.drop_values is not None and isinstance(value, dict):
        value = _without_values(value, source.drop_values)
    return first_at(value, source.path) if source.path else value


def _searched(raw: Any, pattern: str, last: bool) -> str | None:
    """The first group of ``pattern``'s first match in ``raw`` (``last``: of its last), None when none."""
    if not isinstance(raw, str):
        return None
    if last:
        found = re.findall(pattern, raw)
        return found[-1] if found else None
    first = re.search(pattern, raw)
    return first.group(1) if first else None


def _without_values(value: dict[str, Any], pattern: str) -> dict[str, Any]:
    """``value`` without the entries whose text ``pattern`` matches whole (``Source.drop_values``)."""
    return {key: item for key, item in value.items() if not (isinstance(item, str) and re.fullmatch(pattern, item))}


_HELPERS = {"is_json": _is_json, "refusal_or_hold": _read_refusal_or_hold}
