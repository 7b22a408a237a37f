"""The OpenInference conventions (``openinference.span.kind``): its runs and graph steps.

Its model calls and tool executions are read by a convention file
(``conventions/openinference.yaml``, the flattened messages by ``flattened``); the spans left
here are ``AGENT`` and ``CHAIN``. Instrumentations differ in where the run lives: agno,
openai-agents, smolagents and CrewAI mark it ``AGENT``; LangGraph marks its graph's root
``CHAIN`` (its ``AGENT`` kind is a name heuristic that also hits graph nodes), and records the
call id of a tool only on the ``tools`` node that dispatched it; LangChain's ``create_agent``
and LlamaIndex mark no run at all. What one instrumentation alone does with these spans is read
by a module of its own (``langchain_agents``, ``llama_index``, ``smolagents``), each detected by
attributes, never by a framework's name, and left out of a cold reading (``knowledge``); what is
data (the texts that mark a refusal, a call held for approval) is in a profile (``profiles/``),
and how a framework writes its model and tool spans is in a framework convention file
(``conventions/openinference_<framework>.yaml``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import Role, SpanData, SpanRecord, ToolRequest, ToolResponse
from . import flattened, langchain_agents, llama_index, smolagents
from .common import error_text, loads, str_or_none, text_of
from .knowledge import FRAMEWORKS

KIND = "openinference.span.kind"  # marks the convention
_INPUT_MESSAGES = "llm.input_messages"
_OUTPUT_MESSAGES = "llm.output_messages"
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
        if kind in _GRAPH_KINDS:  # model calls and tools: openinference.yaml
            _read_graph_span(span, record, kind, _metadata(attrs), FRAMEWORKS.applies)
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


def _metadata(attrs: Any) -> dict[str, Any]:
    metadata = loads(attrs.get("metadata"))
    return metadata if isinstance(metadata, dict) else {}


def read_messages(attrs: Any, record: SpanRecord, knows: bool = True) -> None:
    """The calls a model span stamped by GenAI too asked for and the answers its input adds, in
    OpenInference's flattened messages (``flattened``; ``openinference.yaml`` reads its own model
    spans so). ``knows`` is not read: the flattened format holds no framework knowledge."""
    record.requests = flattened.requests(attrs, _OUTPUT_MESSAGES)
    record.responses = flattened.responses(attrs, _INPUT_MESSAGES)


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
                flattened.answer(str(data["tool_call_id"]), text_of(data.get("content")), error=data.get("status") == "error")
            )
    return tuple(responses)
