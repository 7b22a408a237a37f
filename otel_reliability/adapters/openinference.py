"""The OpenInference conventions (``openinference.span.kind``).

Messages are flattened into indexed attributes
(``llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name``), which a
model span reads by index (a long run's input has thousands of keys; one pass over them
would cost every span the whole history). Instrumentations differ in where the run
lives: agno, openai-agents, smolagents and CrewAI mark it ``AGENT``; LangGraph marks its
graph's root ``CHAIN`` (its ``AGENT`` kind is a name heuristic that also hits graph nodes),
and records the call id of a tool only on the ``tools`` node that dispatched it; LangChain's
``create_agent`` and LlamaIndex mark no run at all. What one instrumentation alone does is
read by a module of its own (``crewai``, ``langchain_agents``, ``llama_index``,
``smolagents``), each detected by attributes, never by a framework's name, and left out of a
cold reading (``knowledge``); what is data (the texts that mark a refusal, a call held for
approval) is in a profile (``profiles/``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from . import crewai, frameworks, langchain_agents, llama_index, smolagents
from .common import error_text, loads, object_of, str_or_none, text_of
from .knowledge import FRAMEWORKS
from .usage import openinference_tokens

KIND = "openinference.span.kind"  # marks the convention
_INPUT_MESSAGE = "llm.input_messages."
_OUTPUT_MESSAGE = "llm.output_messages."
# The keys one of which every message (and every tool call) of a flattened list sets, the most common first.
_MESSAGE_FIELDS = (".message.role", ".message.content", ".message.tool_call_id",
                   ".message.contents.0.message_content.type", ".message.tool_calls.0.tool_call.function.name",
                   ".message.tool_calls.0.tool_call.id")
_CALL_FIELDS = (".tool_call.function.name", ".tool_call.id", ".tool_call.function.arguments")
_TOOLS = "llm.tools."  # the tools offered to the model, one JSON definition each (``assembly.declared``)
_TOOL_FIELDS = (".tool.json_schema",)
_FIRST_TOOL = f"{_TOOLS}0{_TOOL_FIELDS[0]}"
_HANDOFF_PREFIX = "handoff to "
_GRAPH_KINDS = ("CHAIN", "AGENT")
_DISPATCH_MARKER = '"tool_call_with_context"'


def may_be_run(attributes: Mapping[str, Any], local_root: bool) -> bool | None:
    """Whether a span of this convention may be an agent run (a graph's root ``CHAIN`` only at the
    process's local root, where it is cheap to tell); None when it is not of this convention."""
    kind = attributes.get(KIND)
    if kind is None:
        return None
    return kind == "AGENT" or (kind == "CHAIN" and local_root)


class OpenInferenceAdapter:
    markers = (KIND,)

    def adapt(self, span: SpanData) -> SpanRecord:
        attrs = span.attributes
        kind = attrs.get(KIND)
        record = SpanRecord(span.trace_id, span.span_id, span.parent_id, span.name, span.start_ns, span.end_ns)
        record.error = error_text(span)
        knows = FRAMEWORKS.applies
        if kind == "TOOL" and knows and llama_index.waits_for_event(record.error):
            record.error = None  # the workflow paused the call; it runs again, under a span of its own
        elif kind == "TOOL" or (kind == "AGENT" and attrs.get("tool.name")):
            _read_tool(span, record, knows)
        elif kind == "LLM":
            record.role = Role.MODEL
            if not (knows and llama_index.prepares_a_call(span.name)):
                record.model_call = True
                record.tokens = openinference_tokens(attrs)
            read_messages(attrs, record, knows)
            if _FIRST_TOOL in attrs:  # one lookup for the many model spans that declare no tools
                tools = _count(attrs, _TOOLS, _TOOL_FIELDS)
                record.tool_definitions = tuple(attrs.get(f"{_TOOLS}{i}{_TOOL_FIELDS[0]}") for i in range(tools))
        elif kind in _GRAPH_KINDS:
            _read_graph_span(span, record, kind, _metadata(attrs), knows)
        return record


def _read_graph_span(span: SpanData, record: SpanRecord, kind: str, metadata: dict[str, Any], knows: bool) -> None:
    """An AGENT or CHAIN span: a run, a LangGraph node that dispatched a call, or neither.
    ``knows``: the framework modules apply (``knowledge``)."""
    attrs = span.attributes
    if knows and langchain_agents.is_agent_root(span.name, metadata):
        _read_run(span, record, langchain_agents.agent_name(metadata))
    elif kind == "AGENT" and "langgraph_node" not in metadata:
        name = (
            attrs.get("agent.name")
            or attrs.get("graph.node.name")
            or attrs.get("graph.node.id")
            or (smolagents.agent_name(span.name, attrs) if knows else None)
        )
        _read_run(span, record, name)
    elif kind == "CHAIN" and metadata.get("ls_integration") == "langgraph" and "langgraph_node" not in metadata:
        _read_run(span, record, None)  # a LangGraph graph's root: its span names the graph, no agent
    elif kind == "CHAIN" and knows and llama_index.is_workflow_run(attrs):
        _read_run(span, record, None)  # named by its steps (assembly: a run's first acting agent)
    elif kind == "CHAIN" and knows and langchain_agents.is_graph_node(metadata):
        record.dispatched = langchain_agents.dispatched(attrs.get("input.value"))
        record.responses = _tool_messages(attrs.get("output.value"))
    elif kind == "CHAIN":
        _read_dispatch(attrs, record)
        if knows:
            record.agent_name = llama_index.acting_agent(attrs)
            record.dispatched = record.dispatched or llama_index.dispatched(attrs)


def _read_run(span: SpanData, record: SpanRecord, agent_name: Any) -> None:
    attrs = span.attributes
    record.role = Role.AGENT_RUN
    record.agent_name = str(agent_name) if agent_name else None
    record.run_key = str_or_none(attrs.get("agno.run.id"))
    record.attributes = attrs
    output = attrs.get("output.value")
    record.output = output if isinstance(output, str) else None


def _read_tool(span: SpanData, record: SpanRecord, knows: bool) -> None:
    attrs = span.attributes
    record.role = Role.TOOL
    record.tool_name = str_or_none(attrs.get("tool.name"))
    if record.tool_name is None and span.name.startswith(_HANDOFF_PREFIX):
        # openai-agents: the span names the target; its input is the source agent, not arguments
        record.handoff_to = span.name[len(_HANDOFF_PREFIX):]
    else:
        named = record.tool_name or object_of(span.name) or span.name
        record.tool_name = crewai.tool_name(named, attrs) if knows else named
        arguments = attrs.get("input.value")
        if arguments is None:
            arguments = attrs.get("tool.parameters")
        elif knows:
            unwrapped = smolagents.unwrapped_arguments(arguments, attrs.get("tool.parameters"))
            if unwrapped is None:
                unwrapped = llama_index.unwrapped_arguments(arguments)
            arguments = unwrapped if unwrapped is not None else arguments
        record.arguments = arguments
    call_id = attrs.get("tool.id") or attrs.get("tool_call.id")
    record.call_id = str(call_id) if call_id is not None else None
    # the parameters the tool declares, kept raw: some instrumentations write the schema under
    # ``tool.parameters``, others the call's arguments (``assembly.declared`` tells them apart)
    record.parameters = attrs.get("tool.json_schema") or attrs.get("tool.parameters")


def _metadata(attrs: Any) -> dict[str, Any]:
    metadata = loads(attrs.get("metadata"))
    return metadata if isinstance(metadata, dict) else {}


def read_messages(attrs: Any, record: SpanRecord, knows: bool) -> None:
    """The calls the model asked for, and the answers its input adds: those after its last
    assistant message, since the input replays the history (``adapters.history`` says why
    that is enough). OpenInference flattens lists, so the indices of messages and of their
    tool calls run from 0 without gaps, and the input is read from its end.
    """
    requests = []
    for message in range(_count(attrs, _OUTPUT_MESSAGE)):
        prefix = f"{_OUTPUT_MESSAGE}{message}.message.tool_calls."
        for call in range(_count(attrs, prefix, _CALL_FIELDS)):
            name = attrs.get(f"{prefix}{call}.tool_call.function.name")
            if name:
                arguments = attrs.get(f"{prefix}{call}.tool_call.function.arguments")
                call_id = str_or_none(attrs.get(f"{prefix}{call}.tool_call.id"))
                requests.append(ToolRequest(str(name), arguments, call_id))
    record.requests = tuple(requests) if requests or not knows else crewai.requests_in_output(attrs)
    answers = []
    for message in range(_count(attrs, _INPUT_MESSAGE) - 1, -1, -1):
        prefix = f"{_INPUT_MESSAGE}{message}.message."
        role = attrs.get(prefix + "role")
        if role == "assistant":
            break
        call_id = attrs.get(prefix + "tool_call_id")
        if role == "tool" and call_id is not None:
            answers.append(_response(str(call_id), str(attrs.get(prefix + "content") or "")))
    answers.reverse()
    record.responses = tuple(answers)


def _count(attrs: Any, prefix: str, fields: tuple[str, ...] = _MESSAGE_FIELDS) -> int:
    """How many items ``prefix<i>`` the attributes hold, an item being an index that sets one of ``fields``.

    The search probes only the first field, which items nearly always set, then walks on
    past any item that sets only others.
    """
    probed = fields[0]
    high = 0
    if f"{prefix}0{probed}" in attrs:
        low, high = 0, 1  # items 0..low are present; high is yet to be probed
        while f"{prefix}{high}{probed}" in attrs:
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            if f"{prefix}{middle}{probed}" in attrs:
                low = middle
            else:
                high = middle
    while any(f"{prefix}{high}{field}" in attrs for field in fields):
        high += 1
    return high


def _response(call_id: str, content: str, error: bool = False) -> ToolResponse:
    # a framework that answers a call it did not run as a failure, not a refusal (agno's rejection)
    return ToolResponse(call_id, content, refusal=not frameworks.answer_says_it_ran(content), error=error)


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
    record.responses = _tool_messages(attrs.get("output.value"))


def _tool_messages(raw: Any) -> tuple[ToolResponse, ...]:
    """The answers in a LangGraph node's output: its ToolMessages, ``{"messages": [{"data": {"tool_call_id", …}}]}``."""
    if not isinstance(raw, str) or '"tool_call_id"' not in raw:
        return ()
    output = loads(raw)
    messages = output.get("messages") if isinstance(output, dict) else None
    responses = []
    for message in messages or ():
        data = message.get("data") if isinstance(message, dict) else None
        if isinstance(data, dict) and data.get("tool_call_id") is not None:
            responses.append(
                _response(str(data["tool_call_id"]), text_of(data.get("content")), error=data.get("status") == "error")
            )
    return tuple(responses)
