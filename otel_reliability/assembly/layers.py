"""One call, one execution: the spans that several layers record of one tool call fold into one.

A framework's tool span, a toolset wrapper's, an MCP client's ``tools/call`` and the MCP
server's span of the same request (another service, the same trace through propagated
context) are nested, each a tool span of the same tool. Counted apart they would make one
call two to four attempts. A tool span is a layer of the nearest enclosing tool span when
nothing between them is a model call or a run (a tool whose body runs an agent is a
delegation, not a layer) and they name the same call: the same call id when both carry
one, else the same tool name; or when both failed with the same error and the inner one
names no call: the outer failure seen again one layer in (a framework that reports a failure
as a nested tool span of its own, named ``error``, made no second attempt). A tool span in no
run (an MCP server span whose parent the trace lacks) is a layer of the innermost run-owned
tool span of the same name whose interval holds it.

The folded record is the outermost span's (it carries the model's call id) with the
outcome of the innermost layer that records one, a failure or a result: the one nearest
the body, so an MCP server's error decides over a client span that ended OK, and where the
server's spans are not there, a client span that records neither (only that the request
came back) does not hide the failure an outer layer records. When that layer failed, the layers around it
can add what it left out: the failure's text, or that the body never ran (a refusal). ``layers`` keeps every span id, outermost first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..model import Role, SpanRecord
from .ownership import MAX_DEPTH, enclosing_run

_TOOL = Role.TOOL
_STOPS = (Role.MODEL, Role.AGENT_RUN)


def fold_layers(spans: Mapping[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records (span id → record) with each call's layers folded into its outermost
    tool span; the inner layers are left out. ``spans`` is returned as it is when no call has layers.

    >>> outer = SpanRecord(1, 2, 0, "multiply", 0, 9, role=Role.TOOL, tool_name="multiply", call_id="c1")
    >>> inner = SpanRecord(1, 3, 2, "tools/call multiply", 1, 8, role=Role.TOOL, tool_name="multiply", error="boom")
    >>> folded = fold_layers({2: outer, 3: inner})
    >>> list(folded), folded[2].error, folded[2].layers
    ([2], 'boom', (2, 3))
    """
    outer_of: dict[int, int] = {}
    tools = [r for r in spans.values() if r.role is _TOOL]
    if len(tools) < 2:
        return dict(spans) if not isinstance(spans, dict) else spans
    for record in tools:
        outer = _enclosing_layer(record, spans)
        if outer is None and enclosing_run(record, spans) is None:
            outer = _holding_layer(record, tools, spans)
        if outer is not None:
            outer_of[record.span_id] = outer.span_id
    if not outer_of:
        return spans if isinstance(spans, dict) else dict(spans)
    groups: dict[int, list[SpanRecord]] = {}
    for record in tools:
        root = record.span_id
        for _ in range(MAX_DEPTH):
            if root not in outer_of:
                break
            root = outer_of[root]
        groups.setdefault(root, []).append(record)
    folded = {span_id: record for span_id, record in spans.items() if span_id not in outer_of}
    for root, layers in groups.items():
        if len(layers) > 1:
            folded[root] = _folded(sorted(layers, key=_depth_order(outer_of)))
    return folded


def _enclosing_layer(record: SpanRecord, spans: Mapping[int, SpanRecord]) -> SpanRecord | None:
    """The nearest enclosing tool span recording the same call, if nothing but plain spans lie between."""
    parent = spans.get(record.parent_id)
    for _ in range(MAX_DEPTH):
        if parent is None or parent.role in _STOPS:
            return None
        if parent.role is _TOOL:
            return parent if _same_call(parent, record) or _same_failure(parent, record) else None
        parent = spans.get(parent.parent_id)
    return None


def _holding_layer(record: SpanRecord, tools: list[SpanRecord], spans: Mapping[int, SpanRecord]) -> SpanRecord | None:
    """For a tool span outside every run: the innermost run-owned span of the same call whose interval holds it."""
    holders = [
        other for other in tools
        if other is not record and other.contains(record) and _same_call(other, record)
        and enclosing_run(other, spans) is not None
    ]
    return max(holders, key=lambda other: other.start_ns) if holders else None


def _same_call(outer: SpanRecord, inner: SpanRecord) -> bool:
    if outer.call_id is not None and inner.call_id is not None:
        return outer.call_id == inner.call_id
    return outer.tool_name is not None and outer.tool_name == inner.tool_name


def _same_failure(outer: SpanRecord, inner: SpanRecord) -> bool:
    """Whether ``inner`` records ``outer``'s failure again: the same error text, and no call of its own."""
    return bool(inner.error) and inner.error == outer.error and inner.call_id is None


def _depth_order(outer_of: dict[int, int]):
    def depth(record: SpanRecord) -> int:
        count, span_id = 0, record.span_id
        while span_id in outer_of and count < MAX_DEPTH:
            span_id, count = outer_of[span_id], count + 1
        return count

    return depth


def _folded(layers: list[SpanRecord]) -> SpanRecord:
    """One record for a call's layers (outermost first): the outermost's, with the innermost's outcome."""
    outer = layers[0]
    # The innermost layer that says what became of the call: a failure, or a result (a client's
    # span of an MCP call that records neither only knows the request went out and came back).
    inner = next((layer for layer in reversed(layers) if layer.error is not None or layer.returned), layers[-1])
    arguments = next((layer.arguments for layer in layers if layer.arguments is not None), None)
    call_id = next((layer.call_id for layer in layers if layer.call_id is not None), None)
    error, refusal = inner.error, inner.refusal
    if error is not None:
        # That layer failed; the layers around it may say more of that failure: its text (a
        # server span that failed without one), or that the body never ran (a refusal).
        inward = layers[::-1]
        error = error or next((layer.error for layer in inward if layer.error), error)
        refusal = refusal or next((layer.refusal for layer in inward if layer.refusal), None)
    return replace(
        outer,
        error=error,
        refusal=refusal,
        arguments=arguments,
        call_id=call_id,
        layers=tuple(layer.span_id for layer in layers),
    )
