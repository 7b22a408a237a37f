"""A rule compiled into one function that reads a span as the rule says (``reader_for``).

The function is generated once per rule from the rule's own fields: only the fields the rule
has are read, each place's lookups are inline with its keys and decoders bound as constants,
and the role's steps are written out for that rule alone. The per-span path so runs no loop
over a rule's places and asks no question of the rule; ``reading.read_by_rule`` documents what
a rule reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ...model import Role, SpanData, SpanRecord, ToolRequest
from .. import flattened
from ..common import RESULT_PREFIX, error_text, stops_for_tools, str_or_none, text_of
from ..decoders import VALUE_DECODERS, as_json
from ..json_paths import first_at
from ..usage import tokens_from
from . import condition_holds
from .conditions import _in, decoded
from ..span_formats import SPAN_FORMATS
from .messages import reader
from .model import Source, SpanRule

RuleReader = Callable[[SpanData, "re.Match[str] | None"], SpanRecord]

# How a place is read: an attribute of the span, an attribute of its first event of a name, its
# name, its name after a prefix, a group of its pattern, a flattened list's items, or a place
# ``read_source`` reads (bound arguments, dropped values, a search)
_ATTRIBUTE, _EVENT, _NAME, _NAME_AFTER, _GROUP, _EACH, _SOURCE = range(7)


class _Source:
    """The generated function's text and the constants it names."""

    def __init__(self, read_source: Callable[[SpanData, Source], Any], helpers: dict[str, Any]) -> None:
        self.constants: dict[str, Any] = {
            "SpanRecord": SpanRecord, "ToolRequest": ToolRequest, "error_text": error_text, "str_or_none": str_or_none,
            "text_of": text_of, "stops_for_tools": stops_for_tools, "tokens_from": tokens_from, "first_at": first_at,
            "condition_holds": condition_holds, "flattened": flattened, "same_type_in": _in, "read_source": read_source, **helpers,
        }
        self.lines: list[str] = []

    def constant(self, value: Any) -> str:
        name = f"c{len(self.constants)}"
        self.constants[name] = value
        return name

    def add(self, *lines: str, indent: int = 1) -> None:
        self.lines.extend("    " * indent + line for line in lines)

    def field(self, sources: tuple[Source, ...], into: str, indent: int = 1) -> None:
        """Lines that set ``into`` to the value at the first of ``sources`` the span has (None when none)."""
        if not sources:
            self.add(f"{into} = None", indent=indent)
            return
        source, rest = sources[0], sources[1:]
        fetch, present, value = self._place(source)
        self.add(*fetch, f"if {present}:", f"    {into} = {value}", "else:", indent=indent)
        self.field(rest, into, indent + 1)

    def _place(self, source: Source) -> tuple[list[str], str, str]:
        """The lines that fetch one place's raw value, the test that the span has it, and its value."""
        if source.each is not None and (source.names_from, source.drop_values, source.search) == (None,) * 3:
            # a flattened list's items as written (the model enforces decode raw, no event or path)
            first = self.constant(f"{source.attribute}.0{source.each}")
            fetch = f"raw = flattened.values(attributes, {self.constant(str(source.attribute))}, {self.constant(source.each)}) if {first} in attributes else None"
            return [fetch], "raw", "raw"
        if (source.each, source.names_from, source.drop_values, source.search) != (None,) * 4:
            return [f"raw = read_source(span, {self.constant(source)})"], "raw is not None", "raw"
        if source.after is not None:
            prefix = self.constant(source.after)
            fetch = f"raw = span.name[{len(source.after)}:] or None if span.name.startswith({prefix}) else None"
        elif source.span_name:
            fetch = "raw = span.name"
        elif source.span_name_group is not None:
            fetch = f"raw = match.group({self.constant(source.span_name_group)}) if match is not None else None"
        elif source.event is not None:
            key, event = self.constant(str(source.attribute)), self.constant(source.event)
            fetch = f"raw = next((e.attributes.get({key}) for e in span.events if e.name == {event}), None)"
        else:
            fetch = f"raw = attributes.get({self.constant(str(source.attribute))})"
        present = "raw is not None"
        if source.unless:
            unless = self.constant(source.unless)
            present += f" and not (raw in {unless} and same_type_in(raw, {unless}))"  # 1 is not True
        decode = None if source.decode == "raw" else VALUE_DECODERS[source.decode]
        if decode is as_json:  # a text a condition may have decoded already
            decode = decoded
        value = "raw" if decode is None else f"{self.constant(decode)}(raw)"
        return [fetch], present, f"first_at({value}, {self.constant(source.path)})" if source.path else value

    def messages(self, rule: SpanRule, field: str) -> str | None:
        """The call that reads ``field`` (``requests``, ``responses``…) from the span, None when the rule has none."""
        messages, requests = getattr(rule, field), field.startswith("requests")
        if messages is not None and messages.format in SPAN_FORMATS:  # a format that reads the span itself
            found = SPAN_FORMATS[messages.format]
            place = _Place(messages.attribute, messages.or_events, messages.events, messages.after_event)
            return f"{self.constant(found.requests if requests else found.responses)}(span, {self.constant(place)})"
        read = reader(messages, requests=requests)
        return None if read is None else f"{self.constant(read)}(span)"

    def function(self) -> RuleReader:
        text = "def read(span, match):\n" + "".join(f"{line}\n" for line in self.lines)
        exec(text, self.constants)  # noqa: S102  # the text is built here from the rule's own fields only
        read: RuleReader = self.constants["read"]
        return read


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a span format finds its messages: a rule's ``Messages`` as plain slots (a format reads
    them for every span; a pydantic model's fields cost several times more to read)."""

    attribute: str
    or_events: str | None
    events: str | None
    after_event: str | None


def reader_for(rule: SpanRule, read_source: Callable[[SpanData, Source], Any], helpers: dict[str, Any]) -> RuleReader:
    """One function that reads a span as ``rule`` says. ``read_source`` reads a place that has no
    inline reading; ``helpers`` are the functions the steps of a tool or dispatch call by name
    (``is_json``, ``refusal_or_hold``)."""
    out = _Source(read_source, helpers)
    out.add("attributes = span.attributes",
            "record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)",
            "error = error_text(span)")
    if rule.no_call_when:  # no call, and its error no failure
        out.add(f"if error is not None and any(condition_holds(c, span) for c in {out.constant(rule.no_call_when)}):",
                "    return record")
    if rule.not_failed_when:  # control flow the framework raised, not a failure
        out.add(f"if error is not None and any(condition_holds(c, span) for c in {out.constant(rule.not_failed_when)}):",
                "    error = None")
    out.add("record.error = error")
    _ROLES.get(rule.role, _nothing_more)(out, rule)
    out.add("return record")
    return out.function()


def _model(out: _Source, rule: SpanRule) -> None:
    out.add(f"record.role = {out.constant(Role.MODEL)}", f"record.model_call = {rule.model_call}", "requests = responses = ()")
    if (read := out.messages(rule, "requests")) is not None:
        out.add(f"requests = {read}")
    if (read := out.messages(rule, "requests_else")) is not None:
        out.add("if not requests:", f"    requests = {read}")
    if (read := out.messages(rule, "responses")) is not None:
        out.add(f"responses = {read}")
    otherwise = out.messages(rule, "requests_otherwise"), out.messages(rule, "responses_otherwise")
    if otherwise != (None, None):
        out.add("if not (requests or responses):")
        if otherwise[0] is not None:
            out.add(f"    requests = {otherwise[0]}")
        if otherwise[1] is not None:
            out.add(f"    responses = {otherwise[1]}")
    out.add("record.requests = requests", "record.responses = responses")
    if rule.tokens is not None:
        reading = f"tokens_from(attributes, {out.constant(rule.tokens.parts)}, {out.constant(rule.tokens.totals)})"
        if rule.tokens.parts:  # counts are ints on almost every span: those skip the general reading
            given, taken = (out.constant(key) for key in rule.tokens.parts[0])
            out.add(f"given, taken = attributes.get({given}), attributes.get({taken})",
                    "if type(given) is int and type(taken) is int and given >= 0 and taken >= 0:",
                    "    record.tokens = given + taken",
                    "else:",
                    f"    record.tokens = {reading}")
        else:
            out.add(f"record.tokens = {reading}")
    if rule.tool_definitions:
        out.field(rule.tool_definitions, "record.tool_definitions")
    if rule.finish_reasons:
        out.field(rule.finish_reasons, "value")
        out.add("record.stopped_for_tools = stops_for_tools(value)")


def _agent_run(out: _Source, rule: SpanRule) -> None:
    out.add(f"record.role = {out.constant(Role.AGENT_RUN)}")
    if rule.clock_slack_ms:
        slack = int(rule.clock_slack_ms * 1_000_000)
        out.add(f"record.start_ns, record.end_ns = max(0, record.start_ns - {slack}), record.end_ns + {slack}")
    if rule.agent_name:
        out.field(rule.agent_name, "value")
        out.add("record.agent_name = str_or_none(value)")
    out.add("record.attributes = attributes")
    if rule.run_key:
        out.field(rule.run_key, "value")
        out.add("record.run_key = str_or_none(value)")
    if rule.output:
        out.field(rule.output, "value")
        out.add("record.output = None if value is None else text_of(value)")
    if rule.outlived:
        out.add("record.outlived = True")
    if rule.tool_definitions:
        out.field(rule.tool_definitions, "record.tool_definitions")


def _tool(out: _Source, rule: SpanRule) -> None:
    if rule.tool_name:  # a rule that says where the name is names none when the span lacks it
        out.field(rule.tool_name, "value")
        out.add("name = str_or_none(value)")
    else:
        out.add("name = span.name")
    if rule.not_calls:  # a span the framework writes for its own bookkeeping: no call
        out.add(f"if name in {out.constant(frozenset(rule.not_calls))}:", "    return record")
    out.add(f"record.role = {out.constant(Role.TOOL)}", "record.tool_name = name")
    out.field(rule.arguments, "record.arguments")
    out.field(rule.call_id, "value")
    out.add("record.call_id = str_or_none(value)")
    if rule.parameters:
        out.field(rule.parameters, "record.parameters")
    out.field(rule.result, "result")
    if rule.result:
        # what the call returned (a JSON null is nothing): a witness (``assembly.witnesses``); told
        # from its text, since decoding a whole result only to see it is not null costs more
        out.add("if result is not None:",
                "    record.returned = True",
                "    if not (isinstance(result, str) and result.strip(' \\t\\n\\r') == 'null'):",
                f"        record.output = text_of(result)[:{RESULT_PREFIX}]")
    if rule.spans_some_calls:
        out.add("record.spans_some_calls = True")
    if rule.result_is_json:
        out.add("if isinstance(result, str):", "    record.failure_possible = not is_json(result)")
    if rule.failed_when is not None:
        out.add(f"if error is None and condition_holds({out.constant(rule.failed_when)}, span):")
        out.field(rule.error, "said", indent=2)
        out.add("    error = record.error = text_of(said if said is not None else result)")
        if rule.error:
            out.add("elif error == '':")
    elif rule.error:
        out.add("if error == '':")
    if rule.error:
        out.field(rule.error, "said", indent=2)
        out.add("    error = record.error = text_of(said)")
    if rule.refused_when is not None:  # the body never ran
        out.add(f"if error is not None and condition_holds({out.constant(rule.refused_when)}, span, name):",
                f"    record.refusal = {out.constant(rule.refusal)} or error")
    if rule.refusal is not None or rule.held:
        out.add(f"refusal_or_hold(record, span, {out.constant(rule)})")
    elif rule.refusal_named_in:
        out.add("if error is not None:", f"    refusal_or_hold(record, span, {out.constant(rule)})")


def _names_agent(out: _Source, rule: SpanRule) -> None:
    out.field(rule.agent_name, "value")
    out.add("record.names_agent = str_or_none(value)")


def _acting_agent(out: _Source, rule: SpanRule) -> None:  # no run: the agent acting from here on in the run around it
    out.field(rule.agent_name, "value")
    out.add("record.agent_name = str_or_none(value)")


def _handoff(out: _Source, rule: SpanRule) -> None:
    out.field(rule.target, "value")
    out.add(f"record.role = {out.constant(Role.TOOL)}", "record.handoff_to = str_or_none(value)")


def _answers(out: _Source, rule: SpanRule) -> None:  # no model call: the answers alone
    if (read := out.messages(rule, "responses")) is not None:
        out.add(f"record.responses = {read}")


def _dispatch(out: _Source, rule: SpanRule) -> None:  # no call of its own: the call it handed a tool, the answers it gave
    if rule.agent_name:
        out.field(rule.agent_name, "value")
        out.add("record.agent_name = str_or_none(value)")
    out.field(rule.dispatched_name, "value")
    out.add("name = str_or_none(value)", "if name:")
    out.field(rule.dispatched_arguments, "arguments", indent=2)
    out.field(rule.dispatched_call_id, "value", indent=2)
    out.add("    record.dispatched = ToolRequest(name, arguments, str_or_none(value))")
    _answers(out, rule)


def _relay(out: _Source, rule: SpanRule) -> None:  # requests or answers delivered between agents, no model call
    out.field(rule.sent_by, "value")
    out.add(f"record.role = {out.constant(Role.MODEL)}", "record.sent_by = str_or_none(value)")
    if (read := out.messages(rule, "requests")) is not None:
        out.add(f"record.requests = {read}")
    _answers(out, rule)


def _nothing_more(out: _Source, rule: SpanRule) -> None:  # a span that is no call: its error alone
    pass


_ROLES: dict[str, Callable[[_Source, SpanRule], None]] = {
    "model": _model, "agent_run": _agent_run, "tool": _tool, "names_agent": _names_agent, "acting_agent": _acting_agent,
    "handoff": _handoff, "answers": _answers, "dispatch": _dispatch, "relay": _relay,
}
