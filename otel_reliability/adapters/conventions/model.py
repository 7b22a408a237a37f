"""What a convention file says, validated at load (pydantic); ``conventions`` compiles it.

A convention file describes one tracing convention: per kind of span (found by its name or
by an attribute, with optional conditions), what the span is (an agent run, a tool
execution, a model call, or a span that names the agent of a run it wraps) and where its
fields are — an attribute, an attribute of one of its events, the span's name or a group of a
pattern on it — with the decoder each value is written in (``decoders``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..decoders import REQUEST_FORMATS
from ..span_formats import SPAN_FORMATS
from .when import Inside, Scalar, When

__all__ = ["SOURCE_FIELDS", "Convention", "Inside", "LogEvents", "Messages", "Scalar", "Source", "SpanRule", "Tokens", "When"]


class Source(BaseModel):
    """Where one field's value is: an ``attribute`` (of the span, or of its first ``event`` of
    that name), the ``span_name``, or a named group of the rule's ``span_name_matches``
    (``span_name_group``); ``path`` picks inside the decoded value (dotted keys, ``*``, list
    positions); ``decode`` names its decoder. A plain string is an attribute's name.

    >>> Source.model_validate("sdk.tool.name").attribute
    'sdk.tool.name'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    attribute: str | None = Field(None, min_length=1)
    event: str | None = Field(None, min_length=1)
    span_name: bool = False
    span_name_group: str | None = Field(None, min_length=1)
    path: str | None = Field(None, min_length=1)
    decode: Literal["json", "text", "kwargs", "python", "raw", "identifier", "callback_input", "last_ai_message",
                    "object_name", "bound_arguments", "string"] = "json"
    # ``attribute`` names a flattened list (``<attribute>.<i><each>``, ``flattened``): the value is
    # the tuple of its items' values at ``each``, none when the list is empty
    each: str | None = Field(None, pattern=r"^\.")
    # ``decode: bound_arguments``: the attribute whose JSON object's keys name the positional
    # arguments, in order (the tool's parameters)
    names_from: str | None = Field(None, min_length=1)
    # a mapping's values whose text this expression matches whole are left out (an object's repr
    # a framework passes a tool beside its arguments)
    drop_values: str | None = None
    # the text's first match of this expression (``last``: its last), its first group: a value
    # written inside a repr (``current_agent_name='(\w+)'``)
    search: str | None = None
    last: bool = False
    # values that stand for none (a placeholder, an empty name): the next place is tried
    unless: tuple[Scalar, ...] = ()
    # with ``span_name``: the rest of the name after this prefix (none when it lacks the prefix or nothing follows)
    after: str | None = Field(None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _attribute_shorthand(cls, data: Any) -> Any:
        return {"attribute": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_place(self) -> Source:
        places = [self.attribute is not None, self.span_name, self.span_name_group is not None]
        if sum(places) != 1:
            raise ValueError("give exactly one of attribute, span_name or span_name_group")
        if self.event is not None and self.attribute is None:
            raise ValueError("event names where an attribute is: give attribute")
        if (self.names_from is None) != (self.decode != "bound_arguments"):
            raise ValueError("decode: bound_arguments names its positional arguments from names_from: give both or neither")
        for name, pattern in (("drop_values", self.drop_values), ("search", self.search)):
            try:
                compiled = re.compile(pattern) if pattern is not None else None
            except re.error as exc:
                raise ValueError(f"{name} {pattern!r} is no regular expression: {exc}") from None
            if name == "search" and compiled is not None and (compiled.groups != 1 or self.decode != "raw" or self.path):
                raise ValueError("search reads one group of the text as written: one group, decode: raw, no path")
        if self.each is not None and (self.attribute is None or self.event is not None or self.path is not None or self.decode != "raw"):
            raise ValueError("each reads a flattened list's items as written: give attribute and decode: raw, no event or path")
        if self.after is not None and not self.span_name:
            raise ValueError("after reads the span's name after a prefix: give span_name: true")
        return self


Sources = Annotated[tuple[Source, ...], Field(min_length=1)]
SOURCE_FIELDS = ("agent_name", "target", "output", "tool_name", "arguments", "result", "call_id", "error", "tool_definitions",
                 "sent_by", "parameters", "run_key", "dispatched_name", "dispatched_arguments", "dispatched_call_id",
                 "refusal_named_in", "finish_reasons")


class Messages(BaseModel):
    """A model span's calls (``requests``, in its output) or answers (``responses``, in its
    input): the ``attribute`` (of the span or of its first ``event`` of that name) in a message
    ``format``. ``items``: the items at ``path`` in its JSON, with the dotted keys of each
    item's ``call_id``, ``name``, ``arguments``, ``content`` and ``error`` flag;
    ``chat_completions``: chat-completions messages (``tool_calls``; ``role: tool`` answers);
    ``ai_sdk_messages``: the AI SDK's model messages (answers only: the ``tool-result`` parts
    that say no result came back); ``constructor_messages``: messages serialized as constructor
    records in a graph node's output (answers only: its error ``ToolMessage``s);
    ``flattened_messages``: messages written one attribute per leaf under the list ``attribute``
    (``<attribute>.<i>.message.tool_calls.<j>.tool_call.function.name``; answers: the ``tool``
    messages after the last ``assistant`` one; ``flattened``); ``message_dicts``: messages written
    as ``{"type", "data"}`` dicts in a graph node's output (answers only: its tool messages);
    ``repr_messages``: messages written as Python dataclass reprs in a JSON object's lists (the
    ``ToolCall``s asked for; the ``ToolCallResult``s handed back, ``error`` flagging a failure);
    ``gemini_contents``: Gemini ``Content`` (``gemini_formats``: the ``function_call`` parts of a
    response's ``content``, the newest ``function_response`` parts of a request's ``contents``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    attribute: str = Field(min_length=1)
    event: str | None = Field(None, min_length=1)
    format: Literal["items", "chat_completions", "ai_sdk_messages", "constructor_messages", "flattened_messages",
                    "message_dicts", "repr_messages", "gemini_contents", "genai"] = "items"
    path: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    content: str | None = None
    error: str | None = None
    # span formats (``SPAN_FORMATS``), which read the span, not one value: where else the messages
    # may be (the same attribute on each event of this name, when the span's holds none), events
    # that each carry one message, and the event after whose last one those events are new
    or_events: str | None = Field(None, min_length=1)
    events: str | None = Field(None, min_length=1)
    after_event: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _items_say_where(self) -> Messages:
        if self.format not in SPAN_FORMATS and (self.or_events, self.events, self.after_event) != (None, None, None):
            raise ValueError(f"format {self.format} reads one value: or_events, events and after_event are for span formats")
        if self.format == "items" and (self.path is None or self.call_id is None):
            raise ValueError("format items needs path and call_id")
        if self.format != "items" and any(v is not None for v in (self.path, self.call_id, self.name, self.arguments, self.content, self.error)):
            raise ValueError(f"format {self.format} reads its own fields: give only attribute and event")
        return self


class Tokens(BaseModel):
    """Where a model span keeps its token usage: ``parts``, (input, output) attribute pairs
    whose sum is the call's tokens, the first pair the span carries; else the first of
    ``totals`` it carries.

    >>> Tokens(parts=[["sdk.in", "sdk.out"]]).parts
    (('sdk.in', 'sdk.out'),)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    parts: tuple[tuple[str, str], ...] = ()
    totals: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _says_where(self) -> Tokens:
        if not self.parts and not self.totals:
            raise ValueError("give parts or totals")
        return self


class SpanRule(BaseModel):
    """How to read the spans ``when`` finds: as an agent run, a tool execution, a model call, a
    span that names the agent of a run it wraps, a step inside a run that names the agent acting
    from then on (``acting_agent``: a workflow that hands its run from agent to agent), a handoff
    (a transfer to the ``target`` agent, carried out for the model's request whose tool name ends
    with the target's name), a span that hands the model answers without being a model call
    (``answers``: a graph node whose output answers calls no tool ran for), a span that relays a
    model's requests or its tools' answers between agents without being a model call (``relay``:
    a runtime's message delivery, naming the agent that sent them in ``sent_by``), a step that
    dispatched a call a tool span then ran (``dispatch``: a graph's tools node, a workflow's call
    step; the call's ``dispatched_name``, ``dispatched_arguments`` and ``dispatched_call_id``, the
    answers its output holds and the agent acting from then on), or a span of the
    convention that is no call at all (``no_call``: a protocol's session traffic, claimed so that
    no other convention reads it as one). Any span's error is no failure where one of
    ``not_failed_when`` holds (control flow a framework raises, such as an interrupt).

    >>> SpanRule(when={"span_name": "x.tool"}, role="tool", tool_name="x.tool.name").role
    'tool'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    when: When
    role: Literal["agent_run", "tool", "model", "names_agent", "acting_agent", "handoff", "answers", "relay", "dispatch", "no_call"]
    # Each field is one place, or a list of places tried in order (the first the span carries)
    agent_name: Sources = ()  # runs, spans that name the agent of a run they wrap or the agent acting
    target: Sources = ()  # handoffs: the agent handed to (the model's request it carried out ends with that name)
    output: Sources = ()  # runs: the run's answer
    # runs: how far the producer's start and end clocks may disagree (a run read that much wider
    # on each side keeps its children inside it; assembly skips a parent that does not contain its child)
    clock_slack_ms: float = Field(0, ge=0, le=1000)
    # runs: the span closes when the run is started (an asynchronous workflow's handle), so the
    # run lasts until the last span under it ends
    outlived: bool = False
    tool_name: Sources = ()  # tools
    arguments: Sources = ()
    result: Sources = ()
    call_id: Sources = ()
    error: Sources = ()  # tools: the failure's text, where the span status does not carry it
    failed_when: When | None = None  # tools: a condition on the span that says the call failed
    # tools: a condition on a failed span that says the body never ran (arguments its tool's own
    # schema refused), and the refusal's reason (else the span's error); ``refusal`` alone: every span
    # the rule reads is a call refused before its body ran (``when`` says so: a callback answered instead)
    refused_when: When | None = None
    refusal: str | None = Field(None, min_length=1)
    not_failed_when: tuple[When, ...] = ()  # any span: conditions, any of which says its error is no failure
    # tools: the producer writes whatever a body returned as JSON text, so a result that is not
    # JSON was written in the return's place (an exception's message): the call may have failed
    result_is_json: bool = False
    # tools: the instrumentation spans only some of the calls it runs (those of a framework's own
    # tools, say): a request with no execution span in the same trace may still have run
    spans_some_calls: bool = False
    requests: Messages | None = None  # models
    responses: Messages | None = None
    tokens: Tokens | None = None
    # models: the tools declared to the model, each with its parameters (``assembly.declared``);
    # read with ``decode: raw``, they are decoded only for a call that failed
    tool_definitions: Sources = ()
    # relays: the agent that sent the requests or answers (no run span encloses a relay)
    sent_by: Sources = ()
    # models: where the calls are when ``requests`` finds none (an instrumentation mode that writes
    # them elsewhere), and whether the span is the call itself (false: a step that only prepares
    # the request, listed by the call's own span after it)
    requests_else: Messages | None = None
    model_call: bool = True
    # tools: the parameters the tool declares (kept raw: ``assembly.declared`` reads them)
    parameters: Sources = ()
    # runs: an identity that survives a continuation (a run resumed in a new trace)
    run_key: Sources = ()
    # runs: the span processor holds back a span this rule may read as a run (it may yet be the
    # run of what ends under it) wherever it is, or only at the process's local root (a graph's
    # root among many spans alike)
    held_back: Literal["anywhere", "at_local_root"] = "anywhere"
    # dispatches: the call dispatched, read as a model's request is
    dispatched_name: Sources = ()
    dispatched_arguments: Sources = ()
    dispatched_call_id: Sources = ()
    # tools: conditions, any of which says the span is no call at all (a call a workflow paused,
    # run again under a span of its own): a plain span, its error no failure
    no_call_when: tuple[When, ...] = ()
    # models: the calls and answers read when ``requests`` and ``responses`` give neither (a span
    # stamped by a second convention too keeps them in that one's format)
    requests_otherwise: Messages | None = None
    responses_otherwise: Messages | None = None
    # tools: where a failed call's answer to the model is (a result object's ``error``): a refusal a
    # framework file (``frameworks/``) names there is the call's; the first place holding one counts
    refusal_named_in: Sources = ()
    # tools: names that name no call (a span the framework writes for its own bookkeeping, such as
    # the merged answers of several calls): such a span is read as none
    not_calls: tuple[str, ...] = ()
    # tools: the span records a call held for a decision (the tool did not run), unless it failed:
    # read as the model's request, which a later run answers (or not)
    held: bool = False
    # models: the call's finish reason (one text or a list), read only for whether it says the
    # model stopped to have tools called (``tool_calls``, ``TOOL_CALLS``, ``tool_use``…,
    # ``common.stops_for_tools``)
    finish_reasons: Sources = ()

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        # a field's one place stands for a list of one
        data = {key: [value] if key in SOURCE_FIELDS and not isinstance(value, list) else value for key, value in data.items()}
        # ``failed_when: sdk.tool.error`` — a flag attribute whose true value says the call failed
        if isinstance(data.get("failed_when"), str):
            return {**data, "failed_when": {"attribute": data["failed_when"], "equals": [True, "true", "True", 1]}}
        return data

    @model_validator(mode="after")
    def _fields_of_its_role(self) -> SpanRule:
        allowed = {
            "agent_run": {"agent_name", "output", "clock_slack_ms", "outlived", "run_key", "held_back", "tool_definitions"},
            "tool": {"tool_name", "arguments", "result", "call_id", "error", "failed_when", "refused_when", "refusal",
                     "result_is_json", "spans_some_calls", "parameters", "no_call_when", "refusal_named_in", "held", "not_calls"},
            "model": {"requests", "responses", "tokens", "tool_definitions", "requests_else", "model_call", "requests_otherwise",
                      "responses_otherwise", "finish_reasons"},
            "names_agent": {"agent_name"},
            "acting_agent": {"agent_name"},
            "handoff": {"target"},
            "answers": {"responses"},
            "relay": {"requests", "responses", "sent_by"},
            "dispatch": {"agent_name", "dispatched_name", "dispatched_arguments", "dispatched_call_id", "responses"},
            "no_call": set(),
        }[self.role]
        stray = sorted(name for name in self.model_fields_set - {"when", "role", "not_failed_when"} if name not in allowed)
        if stray:
            raise ValueError(f"a {self.role} span reads no {', '.join(stray)}")
        if self.role in ("names_agent", "acting_agent") and not self.agent_name:
            raise ValueError(f"a span of role {self.role} names an agent: it needs agent_name")
        if self.result_is_json and any(source.decode != "raw" for source in self.result):
            raise ValueError("result_is_json tells the result's text as written: read result with decode: raw")
        if self.role == "handoff" and not self.target:
            raise ValueError("a handoff needs target")
        if self.role == "answers" and self.responses is None:
            raise ValueError("a span of role answers needs responses")
        if self.role == "relay" and self.requests is None and self.responses is None:
            raise ValueError("a span of role relay needs requests or responses")
        if self.when.span_name is None and self.when.attribute is None:
            raise ValueError("when: needs span_name or attribute (matches alone would be tried on every span)")
        if self.when.event is not None:
            raise ValueError("when: event is for conditions on a span found (failed_when, not_failed_when, refused_when)")
        for name, conditions in (("when", [self.when]), ("failed_when", [self.failed_when]), ("not_failed_when", self.not_failed_when)):
            if any(condition is not None and "tool" in _groups(condition) for condition in conditions):
                raise ValueError(f"{name}: a group named tool is compared with the tool's name: only refused_when has one")
        if self.requests is not None and self.requests.format not in REQUEST_FORMATS and self.requests.format not in {*_ANY_FORMATS, *SPAN_FORMATS}:
            raise ValueError(f"requests: format {self.requests.format} holds only answers (responses)")
        groups = re.compile(self.when.span_name_matches).groupindex if self.when.span_name_matches else {}
        for name in SOURCE_FIELDS:
            for source in getattr(self, name) or ():
                if source.span_name_group is not None and source.span_name_group not in groups:
                    raise ValueError(f"{name}: span_name_group {source.span_name_group!r} is no named group of when.span_name_matches")
        return self


_ANY_FORMATS = ("items", "flattened_messages")  # formats that hold both requests and answers, read by ``reading``


def _groups(when: When) -> set[str]:
    """The named groups of a condition's ``matches`` patterns."""
    return {name for pattern in when.matches.values() for name in re.compile(pattern).groupindex}


class LogEvents(BaseModel):
    """A convention whose events are also written as OpenTelemetry log records, each correlated
    with its span by trace and span id: a record whose event name (its event name field, else its
    ``name_attribute``) starts with ``prefix`` is the same event a span may carry, its payload in
    its body or attributes, read with the model rule's ``requests`` and ``responses``. A ``turn``
    record marks the assistant's turn: the answers recorded before it under the same span replay
    the history. A structured history in the responses' attribute is cut after its last assistant
    message, as a JSON text of it is.

    >>> LogEvents(prefix="sdk.", name_attribute="sdk.event", turn="sdk.assistant",
    ...           requests={"attribute": "out", "format": "genai"}, responses={"attribute": "in", "format": "genai"}).prefix
    'sdk.'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    prefix: str = Field(min_length=1)
    name_attribute: str = Field(min_length=1)
    turn: str = Field(min_length=1)
    requests: Messages
    responses: Messages

    @model_validator(mode="after")
    def _span_formats(self) -> LogEvents:
        for name, messages in (("requests", self.requests), ("responses", self.responses)):
            if messages.format not in SPAN_FORMATS:
                raise ValueError(f"{name}: an event is read as a span holding it: give a span format ({', '.join(SPAN_FORMATS)})")
        return self


class Convention(BaseModel):
    """One convention file. ``refines``: conventions whose spans this one's carry, read more
    closely here (OpenLLMetry's over one framework): its rules are tried before theirs.
    ``framework``: the file reads how one framework's spans are written (its runtime's messages,
    its wrapped arguments): framework knowledge, which a cold reading (``knowledge.removed()``)
    leaves out.

    >>> Convention(name="acme", description="d", spans=[{"when": {"span_name": "acme.run"}, "role": "agent_run"}]).name
    'acme'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9_.-]+$")
    description: str = Field(min_length=1)
    refines: tuple[str, ...] = ()
    framework: str | None = Field(None, pattern=r"^[a-z0-9_.-]+$")
    spans: tuple[SpanRule, ...]
    log_events: LogEvents | None = None

    @field_validator("spans")
    @classmethod
    def _reads_something(cls, spans: tuple[SpanRule, ...]) -> tuple[SpanRule, ...]:
        if not spans:  # checked after the rules, not by Field(min_length): a rule's own error says enough
            raise ValueError("give at least one rule")
        return spans
