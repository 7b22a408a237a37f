"""Runs that no span marks, found from the shape of the trace.

Many instrumentations mark no agent run: a ReAct module's tools are plain tool spans under
plain chain spans, a pipeline's agent is one component among others. Their model calls and
tool executions would then belong to no run and the trace would go unjudged. An agent's
run is what encloses its loop, so:

* **smallest enclosing span** — where model calls and tool executions lie outside every
  marked run, under a root span of the trace, the smallest span that encloses them all
  becomes a run (under a parent the trace lacks, the span that enclosed them is unknown). Siblings that each
  hold both model calls and tool executions (two agents one after the other) are runs of
  their own. A span that is itself a model call or a tool execution is never made a run.
* **inside a tool execution** — a tool execution whose body holds model calls and tool
  executions of its own, outside every marked run, ran an agent (an agent used as a tool):
  the smallest span inside it that encloses them becomes a member run, named after the
  agent a span names; a sub-agent no span names is shown by the tool's name, but the tool
  names no agent (the run's ``agent_named`` is False).

* **a tool inside a tool** — a tool execution inside another tool's body, with no model call
  or run between and not a layer of it (``assembly.layers``, folded before this is asked): the
  outer tool started an agent that no span records (a coworker a delegation tool starts, under
  an instrumentation that traces no model call), or ran the inner tool itself. The spans do not say which
  agent made the inner call, so it is its own member run (``started_in_tools``), named by what
  the framework says the starting call's arguments name (``frameworks.agent_started_by``),
  else by no span (``agent_named`` False).

A span becomes a run only when both kinds are there: model calls alone are a chat, tool
spans alone (a server's) are no agent. Where an instrumentation records no tool spans at all,
model calls that asked for tools followed by another model call are the loop. The run is named by
the agent its span, or the nearest span enclosing it below any tool or run, names by attribute
(``names_agent``: the convention's agent or graph-node name); else it is shown by its span's name
(or the tool's it runs inside) and no span names its agent. The rule that found it is kept
(``inferred``) and reported on the result.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from ..model import Role, SpanRecord
from .ownership import MAX_DEPTH

_TOOL, _MODEL, _RUN = Role.TOOL, Role.MODEL, Role.AGENT_RUN
SMALLEST_ENCLOSING = "smallest span enclosing model calls and tool executions"
INSIDE_TOOL = "agent run inside the tool execution {tool}"
UNNAMED = "no span names the agent"  # how an ``inferred`` text says so, whatever the run is shown by
NAMED_BY_SPAN = f"{UNNAMED}: named after the span"
NAMED_BY_TOOL = f"{UNNAMED}: named after the tool it runs inside"


def infer_runs(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records (span id → record) with the runs found from structure made runs
    (copies of their spans' records); ``spans`` itself when there are none.

    >>> root = SpanRecord(1, 1, 0, "ReAct.forward", 0, 10)
    >>> llm = SpanRecord(1, 2, 1, "LM.__call__", 1, 2, role=Role.MODEL, model_call=True)
    >>> tool = SpanRecord(1, 3, 1, "search", 3, 4, role=Role.TOOL, tool_name="search")
    >>> found = infer_runs({1: root, 2: llm, 3: tool})
    >>> found[1].role.value, found[1].agent_name, found[1].inferred.split(";")[0]
    ('agent_run', 'ReAct.forward', 'smallest span enclosing model calls and tool executions')
    """
    below = _content_below(spans)
    if not below:
        return spans
    children: dict[int, list[SpanRecord]] = {}
    for record in spans.values():
        if record.span_id in below and record.parent_id in spans:
            children.setdefault(record.parent_id, []).append(record)
    # Only from a trace's own root: under a parent the trace lacks (a span never exported, e.g. a
    # run span its instrumentation left open when the run raised) the enclosing span is unknown.
    roots = [r for r in spans.values() if r.span_id in below and r.parent_id == 0]
    found: dict[int, tuple[str, str]] = {}
    for root in roots:
        for run in _runs_in(root, children, below):
            found[run.span_id] = (SMALLEST_ENCLOSING, "")
    for record in spans.values():
        if record.role is _TOOL and _holds_an_agent(record, children, below):
            for run in _runs_among(children.get(record.span_id, ()), children, below):
                found.setdefault(run.span_id, (INSIDE_TOOL.format(tool=record.tool_name or record.name), record.tool_name or ""))
    if not found:
        return spans
    inferred = dict(spans)
    for span_id, (rule, tool_name) in found.items():
        record = spans[span_id]
        named = _named_above(record, spans)
        if named:
            name, how = named, rule
        else:
            name, how = (tool_name, f"{rule}; {NAMED_BY_TOOL}") if tool_name else (record.name, f"{rule}; {NAMED_BY_SPAN}")
        inferred[span_id] = replace(record, role=_RUN, agent_name=name, inferred=how, attributes=record.attributes or {})
    return inferred


def _named_above(record: SpanRecord, spans: dict[int, SpanRecord]) -> str | None:
    """The agent ``record`` or the nearest span enclosing it names by attribute (``names_agent``),
    looking no further than a tool execution or a run: what lies beyond names their agent."""
    node: SpanRecord | None = record
    for _ in range(MAX_DEPTH):
        if node is None or node.role is not Role.OTHER:
            return None
        if node.names_agent:
            return node.names_agent
        node = spans.get(node.parent_id)
    return None


def name_unnamed_runs(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records with each run span that names no agent given the agent the nearest
    span enclosing it names by attribute, below any tool execution or run (``names_agent``, which
    assembly takes when the run's own spans name no acting agent: a pipeline's component that
    wraps the run); ``spans`` itself when every run is named or none can be. A tool that starts
    an agent names none: such a run stays unnamed."""
    named: dict[int, SpanRecord] = {}
    for span_id, record in spans.items():
        if record.role is not _RUN or record.agent_name or record.inferred:
            continue
        parent = spans.get(record.parent_id)
        name = _named_above(parent, spans) if parent is not None else None
        if name:
            named[span_id] = replace(record, names_agent=name)
    return {**spans, **named} if named else spans


def _content_below(spans: dict[int, SpanRecord]) -> dict[int, tuple[int, int, int]]:
    """span id → (model calls, tool executions, model calls that asked for tools) in its subtree
    outside every marked run, for the spans that have any below them (content records included)."""
    below: dict[int, list[int]] = {}
    for record in spans.values():
        role = record.role
        if (role is not _TOOL and role is not _MODEL) or record.sent_by is not None:
            continue  # a record that names its sender is owned by that agent's run (ownership.run_of_sender)
        node: SpanRecord | None = record
        for _ in range(MAX_DEPTH):
            if node is None or node.role is _RUN:
                break
            counts = below.setdefault(node.span_id, [0, 0, 0])
            if role is _TOOL:
                counts[1] += 1
            else:
                counts[0] += 1
                counts[2] += bool(record.requests)
            node = spans.get(node.parent_id)
    return {span_id: (counts[0], counts[1], counts[2]) for span_id, counts in below.items()}


def _qualifies(record: SpanRecord, below: dict[int, tuple[int, int, int]]) -> bool:
    """An agent's loop: model calls and tool executions, or (an instrumentation that records no
    tool spans) model calls that asked for tools and a model call after them."""
    models, tools, asking = below.get(record.span_id, (0, 0, 0))
    return models > 0 and (tools > 0 or (asking > 0 and models > 1))


def _is_content(record: SpanRecord) -> bool:
    return record.role is _TOOL or record.role is _MODEL


def _runs_in(node: SpanRecord, children: dict[int, list[SpanRecord]], below: dict[int, tuple[int, int, int]]) -> Iterator[SpanRecord]:
    """The runs in ``node``'s subtree: the smallest enclosing spans of its unowned loops."""
    if not _qualifies(node, below) or node.role is _RUN:
        return
    if _is_content(node):
        yield from _runs_among(children.get(node.span_id, ()), children, below)
        return
    for _ in range(MAX_DEPTH):
        kids = children.get(node.span_id, ())
        if len(kids) == 1 and not _is_content(kids[0]) and _qualifies(kids[0], below):
            node = kids[0]
            continue
        break
    kids = children.get(node.span_id, ())
    if len(kids) >= 2 and all(not _is_content(k) and _qualifies(k, below) for k in kids):
        for kid in kids:
            yield from _runs_in(kid, children, below)
        return
    yield node


def _runs_among(kids, children, below) -> Iterator[SpanRecord]:
    """The runs below a span that cannot be one itself (a tool or model call)."""
    for kid in kids:
        yield from _runs_in(kid, children, below)


def _holds_an_agent(tool: SpanRecord, children: dict[int, list[SpanRecord]], below: dict[int, tuple[int, int, int]]) -> bool:
    """Whether model calls and tool executions of no marked run lie strictly inside ``tool``."""
    models = tools = asking = 0
    for kid in children.get(tool.span_id, ()):
        kid_models, kid_tools, kid_asking = below.get(kid.span_id, (0, 0, 0))
        models, tools, asking = models + kid_models, tools + kid_tools, asking + kid_asking
    return models > 0 and (tools > 0 or (asking > 0 and models > 1))


def started_in_tools(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records (layers folded) with each tool execution that lies inside another
    tool's body, with only plain spans between, marked with that tool's span id
    (``SpanRecord.started_by``); ``spans`` itself when there is none.

    >>> outer = SpanRecord(1, 2, 0, "delegate", 0, 9, role=_TOOL, tool_name="delegate")
    >>> inner = SpanRecord(1, 3, 2, "lookup", 1, 8, role=_TOOL, tool_name="lookup")
    >>> started_in_tools({2: outer, 3: inner})[3].started_by
    2
    """
    tools = [record for record in spans.values() if record.role is _TOOL]
    if len(tools) < 2:
        return spans
    started: dict[int, SpanRecord] = {}
    for record in tools:
        node = spans.get(record.parent_id)
        for _ in range(MAX_DEPTH):
            if node is None or node.role is not Role.OTHER:
                break
            node = spans.get(node.parent_id)
        if node is not None and node.role is _TOOL:
            started[record.span_id] = replace(record, started_by=node.span_id)
    return {**spans, **started} if started else spans
