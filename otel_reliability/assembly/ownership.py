"""Who owns a span: its nearest enclosing agent run, after repairing mis-parented spans.

agno's OpenInference instrumentation leaks an ended team span as the current
context, so later spans hang under a span that had already ended. A real parent
always encloses its child in time, so an ancestor whose interval does not contain
the span is skipped and the walk goes on to that ancestor's own parent.

Clocks that record start times in whole milliseconds (the Vercel AI SDK's) record each
span's interval shifted earlier by under 1 ms, each span by its own amount, so a real
child can end up to 1 ms after its parent; such a child still started before its
parent ended, which a span hung under an already ended parent did not.

Some run spans close when the run is started, not when it ends (an asynchronous workflow's
handle, as OpenLLMetry records a LlamaIndex workflow): only a convention can say so
(``SpanRecord.outlived``), and such a run lasts until the last span under it ends.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..model import Role, SpanRecord

# A parent chain longer than this is a cycle or hostile input, not a real trace.
MAX_DEPTH = 1024
MILLISECOND_NS = 1_000_000

_AGENT_RUN = Role.AGENT_RUN


def enclosing_run(record: SpanRecord, by_id: Mapping[int, SpanRecord]) -> SpanRecord | None:
    """The nearest ancestor agent run whose [start, end] contains ``record``; ``by_id`` holds its trace's spans."""
    get = by_id.get
    start, end = record.start_ns, record.end_ns
    parent = get(record.parent_id)
    depth = MAX_DEPTH
    while parent is not None and depth:
        # SpanRecord.contains, inlined: this walk runs for every span of every judged trace
        if parent.role is _AGENT_RUN and parent.start_ns <= start and (
            end <= parent.end_ns or _within_millisecond_rounding(parent, start, end)
        ):
            return parent
        parent = get(parent.parent_id)
        depth -= 1
    return None


def stretch_outlived_runs(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """The trace's records with each run span its convention says closes when the run is started
    (``SpanRecord.outlived``: an asynchronous workflow's handle) lasting until the last span under
    it ends, so that its steps are its own; ``spans`` itself when there is none. Only a convention
    says so: a span that merely ended early (a leaked context) keeps its interval.

    >>> run = SpanRecord(1, 1, 0, "Workflow", 0, 5, role=_AGENT_RUN, outlived=True)
    >>> stretch_outlived_runs({1: run, 2: SpanRecord(1, 2, 1, "step", 6, 9)})[1].end_ns
    9
    """
    outlived = {span_id for span_id, record in spans.items() if record.outlived}
    if not outlived:
        return spans
    ends = {span_id: spans[span_id].end_ns for span_id in outlived}
    get = spans.get
    for record in spans.values():
        parent, depth = get(record.parent_id), MAX_DEPTH
        while parent is not None and depth:
            if parent.span_id in ends and record.end_ns > ends[parent.span_id]:
                ends[parent.span_id] = record.end_ns
            parent, depth = get(parent.parent_id), depth - 1
    return {**spans, **{span_id: replace(spans[span_id], end_ns=end) for span_id, end in ends.items()}}


def right_in_run_span(record: SpanRecord, parent: SpanRecord | None) -> bool:
    """Whether ``parent`` (the record's parent, None when the trace lacks it) is a run span whose
    [start, end] holds ``record``: where ``enclosing_run`` stops at its first step, as it does for
    most records of every trace (it also allows millisecond rounding: ask it when this says no)."""
    return (
        parent is not None and parent.role is _AGENT_RUN
        and parent.start_ns <= record.start_ns and record.end_ns <= parent.end_ns
    )


def run_of_sender(record: SpanRecord, by_id: Mapping[int, SpanRecord]) -> SpanRecord | None:
    """For a record outside every run that names the agent it speaks for (``sent_by``): the
    innermost run of that agent in its trace whose interval holds it; None when there is none
    (a message processed after the run ended stays unowned rather than guessed)."""
    holders = [
        run for run in by_id.values()
        if run.role is _AGENT_RUN and run.agent_name == record.sent_by and run.contains(record)
    ]
    return max(holders, key=lambda run: run.start_ns) if holders else None


def _within_millisecond_rounding(parent: SpanRecord, start: int, end: int) -> bool:
    """A child that ends under 1 ms after ``parent``, both started on whole milliseconds, started before it ended."""
    return (
        end - parent.end_ns < MILLISECOND_NS
        and start <= parent.end_ns
        and start % MILLISECOND_NS == 0
        and parent.start_ns % MILLISECOND_NS == 0
    )


def inherit_dispatched_call_id(record: SpanRecord, by_id: Mapping[int, SpanRecord]) -> None:
    """Give a tool record without a call id the one its parent dispatched, if it names the tool.

    LangGraph records a tool's call id only on the ``tools`` node that dispatched it.
    """
    parent = by_id.get(record.parent_id)
    dispatched = parent.dispatched if parent is not None else None
    if dispatched is not None and dispatched.name == record.tool_name:
        record.call_id = dispatched.call_id
