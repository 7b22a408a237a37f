"""A span read as a convention file's rule says: each field from where the rule puts it,
through the decoder it names. Nothing here knows a convention: it only follows the rule."""

from __future__ import annotations

import re
from typing import Any, Callable

from ...jsontext import decode_json
from ...model import Role, SpanData, SpanRecord, ToolRequest
from .. import frameworks
from ..common import RESULT_PREFIX, error_text, stops_for_tools, str_or_none, text_of
from .. import flattened
from ..decoders import VALUE_DECODERS, as_json, bound_arguments, first_at
from ..usage import tokens_from
from . import condition_holds
from .conditions import decoded
from .messages import Reader, reader
from .model import SOURCE_FIELDS, Source, SpanRule

_JSON_WHITESPACE = " \t\n\r"


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
    plan = _PLANS.get(id(rule))
    if plan is None or plan.rule is not rule:
        plan = _plan(rule)
    record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
    error = error_text(span)
    if error is not None and any(condition_holds(condition, span) for condition in rule.no_call_when):
        return record  # no call, and its error no failure
    if error is not None and any(condition_holds(condition, span) for condition in rule.not_failed_when):
        error = None  # control flow the framework raised, not a failure
    record.error = error
    if rule.role == "model":  # the most common roles first
        record.role, record.model_call = Role.MODEL, rule.model_call
        if plan.requests is not None:
            record.requests = plan.requests(span)
        if not record.requests and plan.requests_else is not None:
            record.requests = plan.requests_else(span)
        if plan.responses is not None:
            record.responses = plan.responses(span)
        if not (record.requests or record.responses):
            if plan.requests_otherwise is not None:
                record.requests = plan.requests_otherwise(span)
            if plan.responses_otherwise is not None:
                record.responses = plan.responses_otherwise(span)
        if rule.tokens is not None:
            record.tokens = tokens_from(span.attributes, rule.tokens.parts, rule.tokens.totals)
        record.tool_definitions = plan.tool_definitions(span, match)
        if rule.finish_reasons:
            record.stopped_for_tools = stops_for_tools(plan.finish_reasons(span, match))
    elif rule.role == "agent_run":
        record.role = Role.AGENT_RUN
        if rule.clock_slack_ms:
            slack = int(rule.clock_slack_ms * 1_000_000)
            record.start_ns, record.end_ns = max(0, record.start_ns - slack), record.end_ns + slack
        record.agent_name = str_or_none(plan.agent_name(span, match))
        record.attributes = span.attributes
        if rule.run_key:
            record.run_key = str_or_none(plan.run_key(span, match))
        output = plan.output(span, match)
        record.output = None if output is None else text_of(output)
        record.outlived = rule.outlived
        if rule.tool_definitions:
            record.tool_definitions = plan.tool_definitions(span, match)
    elif rule.role == "tool":
        _read_tool(record, span, rule, plan, match)
    elif rule.role == "names_agent":
        record.names_agent = str_or_none(plan.agent_name(span, match))
    elif rule.role == "acting_agent":  # no run: the agent acting from here on in the run around it
        record.agent_name = str_or_none(plan.agent_name(span, match))
    elif rule.role == "handoff":
        record.role, record.handoff_to = Role.TOOL, str_or_none(plan.target(span, match))
    elif rule.role == "answers" and plan.responses is not None:  # no model call: the answers alone
        record.responses = plan.responses(span)
    elif rule.role == "dispatch":  # no call of its own: the call it handed a tool, the answers it gave
        _read_dispatch(record, span, rule, plan, match)
    elif rule.role == "relay":  # requests or answers delivered between agents, no model call
        record.role, record.sent_by = Role.MODEL, str_or_none(plan.sent_by(span, match))
        if plan.requests is not None:
            record.requests = plan.requests(span)
        if plan.responses is not None:
            record.responses = plan.responses(span)
    return record


def _read_tool(record: SpanRecord, span: SpanData, rule: SpanRule, plan: _Plan, match: re.Match[str] | None) -> None:
    # a rule that says where the name is names none when the span lacks it; one that does not, the span's name
    name = str_or_none(plan.tool_name(span, match)) if rule.tool_name else span.name
    if rule.not_calls and name in rule.not_calls:
        return  # a span the framework writes for its own bookkeeping: no call
    record.role, record.tool_name = Role.TOOL, name
    record.arguments = plan.arguments(span, match)
    record.call_id = str_or_none(plan.call_id(span, match))
    if rule.parameters:
        record.parameters = plan.parameters(span, match)
    result = plan.result(span, match)
    record.returned = result is not None
    # what the call returned (a JSON null is nothing): a witness (``assembly.witnesses``); told
    # from its text, since decoding a whole result only to see it is not null costs more
    if result is not None and not (type(result) is str and result.strip(_JSON_WHITESPACE) == "null"):
        record.output = text_of(result)[:RESULT_PREFIX]
    record.spans_some_calls = rule.spans_some_calls
    if rule.result_is_json and isinstance(result, str):
        record.failure_possible = not _is_json(result)
    failed = rule.failed_when is not None and condition_holds(rule.failed_when, span)
    if record.error is None and failed:
        said = plan.error(span, match)
        record.error = text_of(said if said is not None else result)
    elif record.error == "" and rule.error:
        record.error = text_of(plan.error(span, match))
    if record.error is not None and rule.refused_when is not None and condition_holds(rule.refused_when, span, record.tool_name):
        record.refusal = rule.refusal or record.error  # the body never ran
    if rule.refusal is not None or rule.held or (record.error is not None and rule.refusal_named_in):
        _read_refusal_or_hold(record, span, rule)


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


def _read_dispatch(record: SpanRecord, span: SpanData, rule: SpanRule, plan: _Plan, match: re.Match[str] | None) -> None:
    if rule.agent_name:
        record.agent_name = str_or_none(plan.agent_name(span, match))
    name = str_or_none(plan.dispatched_name(span, match))
    if name:
        arguments = plan.dispatched_arguments(span, match)
        record.dispatched = ToolRequest(name, arguments, str_or_none(plan.dispatched_call_id(span, match)))
    if plan.responses is not None:
        record.responses = plan.responses(span)


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


# How a place is read, compiled once per list of places (``_steps``): an attribute of the span, an
# attribute of its first event of a name, its name, its name after a prefix, a group of its pattern,
# a flattened list's items, or a place read by ``_read_source`` (bound arguments, dropped values, a search)
_ATTRIBUTE, _EVENT, _NAME, _NAME_AFTER, _GROUP, _EACH, _SOURCE = range(7)
# (kind, attribute / event / prefix / group, the event's attribute, decoder (None: as written), path, unless)
_Step = tuple[int, str, str, "Any", "str | None", "tuple[Any, ...]"]
FieldReader = Callable[[SpanData, "re.Match[str] | None"], Any]
_STEPS: dict[int, tuple[tuple[Source, ...], tuple[_Step, ...]]] = {}


def _steps(sources: tuple[Source, ...]) -> tuple[_Step, ...]:
    """``sources`` compiled into steps, once: the per-span path only follows them. Kept by the
    tuple's id with the tuple itself, so that an id is never reused while its entry lives."""
    found = _STEPS.get(id(sources))
    if found is not None and found[0] is sources:
        return found[1]
    steps: list[_Step] = []
    for source in sources:
        if source.each is not None and (source.names_from, source.drop_values, source.search) == (None,) * 3:
            # a flattened list's items as written (the model enforces decode raw, no event or path)
            steps.append((_EACH, str(source.attribute), f"{source.attribute}.0{source.each}", source.each, None, ()))
            continue
        if (source.each, source.names_from, source.drop_values, source.search) != (None,) * 4:
            steps.append((_SOURCE, "", "", source, None, ()))
            continue
        decode = None if source.decode == "raw" else VALUE_DECODERS[source.decode]
        if source.after is not None:
            step: _Step = (_NAME_AFTER, source.after, "", decode, source.path, source.unless)
        elif source.span_name:
            step = (_NAME, "", "", decode, source.path, source.unless)
        elif source.span_name_group is not None:
            step = (_GROUP, source.span_name_group, "", decode, source.path, source.unless)
        elif source.event is not None:
            step = (_EVENT, source.event, str(source.attribute), decode, source.path, source.unless)
        else:
            step = (_ATTRIBUTE, str(source.attribute), "", decode, source.path, source.unless)
        steps.append(step)
    _STEPS[id(sources)] = (sources, tuple(steps))
    return tuple(steps)


_MESSAGE_FIELDS = ("requests", "responses", "requests_else", "requests_otherwise", "responses_otherwise")


class _Plan:
    """A rule's places compiled into steps (``_steps``), one attribute per field that has places."""

    __slots__ = ("rule", *SOURCE_FIELDS, *_MESSAGE_FIELDS)
    agent_name: FieldReader
    target: FieldReader
    output: FieldReader
    tool_name: FieldReader
    arguments: FieldReader
    result: FieldReader
    call_id: FieldReader
    error: FieldReader
    tool_definitions: FieldReader
    refusal_named_in: FieldReader
    sent_by: FieldReader
    parameters: FieldReader
    run_key: FieldReader
    dispatched_name: FieldReader
    dispatched_arguments: FieldReader
    dispatched_call_id: FieldReader

    requests: Reader | None
    responses: Reader | None
    requests_else: Reader | None
    requests_otherwise: Reader | None
    responses_otherwise: Reader | None

    def __init__(self, rule: SpanRule) -> None:
        self.rule = rule
        for name in SOURCE_FIELDS:
            setattr(self, name, _field_reader(_steps(getattr(rule, name) or ())))
        for name in _MESSAGE_FIELDS:
            setattr(self, name, reader(getattr(rule, name), requests=name.startswith("requests")))


def _field_reader(steps: tuple[_Step, ...]) -> FieldReader:
    """What reads a field from its compiled places: one generated function that follows them in
    order, each place's lookups inline (its values bound as constants)."""
    if not steps:
        return _no_value
    constants: dict[str, Any] = {"flattened": flattened, "_read_source": _read_source, "_is_one_of": _is_one_of,
                                 "first_at": first_at}

    def constant(value: Any) -> str:
        name = f"c{len(constants)}"
        constants[name] = value
        return name

    lines = ["attributes = span.attributes"]
    for kind, where, key, decode, path, unless in steps:
        if kind == _EACH:
            lines += [f"if {constant(key)} in attributes:",
                      f"    raw = flattened.values(attributes, {constant(where)}, {constant(decode)})",
                      "    if raw: return raw"]
            continue
        if kind == _SOURCE:
            lines += [f"found = _read_source(span, {constant(decode)})", "if found is not None: return found"]
            continue
        if kind == _ATTRIBUTE:
            lines.append(f"raw = attributes.get({constant(where)})")
        elif kind == _NAME_AFTER:
            prefix = constant(where)
            lines.append(f"raw = span.name[{len(where)}:] or None if span.name.startswith({prefix}) else None")
        elif kind == _NAME:
            lines.append("raw = span.name")
        elif kind == _GROUP:
            lines.append(f"raw = match.group({constant(where)}) if match is not None else None")
        else:
            lines.append(f"raw = next((e.attributes.get({constant(key)}) for e in span.events if e.name == {constant(where)}), None)")
        present = "raw is not None"
        if unless:
            present += f" and not (raw in {constant(unless)} and _is_one_of(raw, {constant(unless)}))"
        if decode is as_json:  # a text a condition may have decoded already
            decode = decoded
        value = "raw" if decode is None else f"{constant(decode)}(raw)"
        lines.append(f"if {present}: return {f'first_at({value}, {constant(path)})' if path else value}")
    lines.append("return None")
    source = "def read(span, match):\n" + "".join(f"    {line}\n" for line in lines)
    exec(source, constants)  # noqa: S102  # the source is built above from the rule's own places only
    read: FieldReader = constants["read"]
    return read


def _no_value(span: SpanData, match: re.Match[str] | None) -> None:
    return None


_PLANS: dict[int, _Plan] = {}


def _plan(rule: SpanRule) -> _Plan:
    """``rule``'s plan, made once (kept by the rule's id with the rule itself: the id is never reused meanwhile)."""
    plan = _PLANS[id(rule)] = _Plan(rule)
    return plan


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


def _is_one_of(value: Any, values: tuple[Any, ...]) -> bool:
    """Whether ``value`` is one of ``values``, of the same type (``1`` is not ``True``)."""
    return any(value == candidate and type(value) is type(candidate) for candidate in values)
