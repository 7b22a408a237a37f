"""``otel-reliability inspect PATH…``: what the engine sees in trace files (SPEC §10).

The first thing to run when a verdict surprises: for each span, the convention that
claimed it and what it was read as (agent run, tool execution, model call, other); for
each run, its attempts, how each was paired with the model's request (call id,
name+arguments, relaxed, handoff target, unpaired) and what its witnesses say (the request,
the execution, the answer handed back: ``Attempt.witnesses``); and what is missing for
judging, with the setting that would fix it.

    >>> from otel_reliability.model import SpanData
    >>> found = inspect_spans([SpanData(1, 2, 0, "work", 0, 1, {})])
    >>> found.missing
    ['no agent runs: no span was read as an agent run, so nothing can be judged']

Nothing here is on the judging path.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .adapters import conventions, to_event_record, to_record
from .assembly import as_read, assemble
from .assembly.attempts import UNPAIRED
from .assembly.ownership import enclosing_run
from .engine.buffer import TraceBuffer
from .model import ERROR, Attempt, LogData, Role, Run, SpanData, SpanRecord, Witnesses
from .results import span_hex, trace_hex
from .sources import read_telemetry

NO_CONVENTION = "none"

# How to turn message content on, by the convention file that read the spans (or the one it
# refines: a framework's file over GenAI's); other conventions get the generic advice.
CONTENT_SETTINGS = {
    "genai": "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
    "openinference": "unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS",
}
GENERIC_CONTENT_SETTING = "enable the instrumentation's message content capture"

_READ_AS = {Role.AGENT_RUN: "run", Role.TOOL: "tool", Role.MODEL: "model", Role.OTHER: "other"}


@dataclass(slots=True)
class SpanView:
    """One span as the adapters read it."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    convention: str
    read_as: str  # run / tool / model / other
    run_span_id: str | None  # the agent run that owns it (after repairing mis-parented spans)
    agent: str | None = None
    tool: str | None = None
    call_id: str | None = None
    requests: list[str] = field(default_factory=list)  # "tool (call id)" the model asked for
    responses: list[str] = field(default_factory=list)  # call ids whose results the model was given


@dataclass(slots=True)
class AttemptView:
    agent_path: list[str]
    tool: str
    outcome: str
    call_id: str | None
    span_id: str | None
    paired_by: str
    arguments: dict[str, Any] | None  # None: no span recorded them
    # every span that recorded the call (its layers folded into one attempt), outermost first
    evidence: list[str]
    outcome_from: str  # which record says what became of the call
    witnesses: list[str]  # what saw the call and what each says ("execution: OK, result '5'")


@dataclass(slots=True)
class RunView:
    trace_id: str
    span_id: str
    agent: str
    span_name: str
    inferred: str | None  # the rule that found a run no span marks; None for a marked run span
    members: list[str]
    model_calls: int
    attempts: list[AttemptView]
    missing: list[str]  # what this run lacks for judging, each with the fix


@dataclass(slots=True)
class Inspection:
    spans: list[SpanView]
    runs: list[RunView]
    missing: list[str]  # what the input as a whole lacks
    backends: list[BackendView] = field(default_factory=list)  # where pulled spans came from

    def to_json(self) -> dict[str, Any]:
        document = {"spans": [asdict(s) for s in self.spans], "runs": [asdict(r) for r in self.runs], "missing": self.missing}
        if self.backends:
            document["backends"] = [asdict(b) for b in self.backends]
        return document


@dataclass(slots=True)
class BackendView:
    """A tracing backend the spans were pulled from, and what it cannot give (docs/backends.md)."""

    source: str
    traces: int
    spans: int
    cannot: list[str]
    notes: list[str]  # where the pull stopped short


def convention_of(span: SpanData) -> str:
    """The convention file whose rule reads the span (as ``to_record`` chooses it), or ``none``."""
    found = conventions.rule_for(span)
    return NO_CONVENTION if found is None else found[1]


def inspect_spans(spans: Iterable[SpanData], logs: Iterable[LogData] = ()) -> Inspection:
    """Read the spans (and the GenAI event log records that join them) as ``eval`` does, and
    say what was seen and what is missing."""
    conventions: dict[tuple[int, int], str] = {}
    buffer = TraceBuffer()
    for span in spans:
        conventions[span.trace_id, span.span_id] = convention_of(span)
        buffer.add([to_record(span)], 0.0)
    buffer.add_events([e for e in map(to_event_record, logs) if e is not None], 0.0)
    records = [r for trace_id in dict.fromkeys(t for t, _ in conventions) for r in buffer.joined_records(trace_id)]
    runs = assemble(records)  # before the owners below: assembly completes some call ids
    by_trace: dict[int, dict[int, SpanRecord]] = defaultdict(dict)
    for record in records:
        by_trace[record.trace_id][record.span_id] = record
    for trace_id, held in by_trace.items():  # as assembly read them: runs found from structure, layers folded
        by_trace[trace_id] = as_read(held)
    read = [record for held in by_trace.values() for record in held.values()]
    run_ids = {(r.trace_id, r.span_id) for r in read if r.role is Role.AGENT_RUN}
    # every span is shown; its owner is found among the records as read (a pseudo-tool or a folded
    # layer is not judged on its own, but still sits in its run)
    owners = {
        (r.trace_id, r.span_id): enclosing_run(r, by_trace[r.trace_id])
        for r in records if (r.trace_id, r.span_id) not in run_ids
    }
    views = [
        _span_view(r, conventions[r.trace_id, r.span_id], owners.get((r.trace_id, r.span_id)))
        for r in sorted(records, key=lambda r: (r.trace_id, r.start_ns))
    ]
    owned: dict[tuple[int, int], list[SpanRecord]] = defaultdict(list)
    for key, owner in owners.items():
        kept = by_trace[key[0]].get(key[1])  # None: a pseudo-tool or a folded layer, not judged on its own
        if owner is not None and kept is not None:
            owned[owner.trace_id, owner.span_id].append(kept)
    run_views = [_run_view(run, owned, conventions) for run in runs]
    return Inspection(views, run_views, _input_missing(read, owners, runs))


def inspect_files(paths: Sequence[str | Path]) -> Inspection:
    """``inspect_spans`` over every span and log record of the files, in file order."""
    telemetry = [read_telemetry(path) for path in paths]
    return inspect_spans([s for t in telemetry for s in t.spans], [log for t in telemetry for log in t.logs])


def _span_view(record: SpanRecord, convention: str, owner: SpanRecord | None) -> SpanView:
    return SpanView(
        trace_id=trace_hex(record.trace_id),
        span_id=span_hex(record.span_id),
        parent_id=span_hex(record.parent_id) if record.parent_id else None,
        name=record.name,
        convention=convention,
        read_as=_READ_AS[record.role],
        run_span_id=span_hex(owner.span_id) if owner is not None else None,
        agent=record.agent_name,
        tool=record.tool_name or record.handoff_to,
        call_id=record.call_id,
        requests=[f"{r.name} ({r.call_id})" if r.call_id else r.name for r in record.requests],
        responses=[r.call_id for r in record.responses],
    )


def _run_view(run: Run, owned: dict[tuple[int, int], list[SpanRecord]], conventions: dict) -> RunView:
    tree = list(run.walk())
    records = [r for member in tree for r in owned.get((member.trace_id, member.span_id), ())]
    models = [r for r in records if r.role is Role.MODEL]
    attempts = [a for member in tree for a in member.own_attempts]
    missing = []
    setting = _content_setting(models or records, conventions)
    if all(member.requests_unseen for member in tree):  # no model span, nor a transcript standing for one
        missing.append("no model spans: requested calls cannot be seen, so refused and pending calls are invisible "
                       "and fail_on refused and pending are not evaluated (instrument the model client as well)")
    elif models and attempts and not any(r.requests for r in models):
        missing.append(
            "message content not captured: the model calls show no requested tool calls, so refused and pending "
            f"calls are invisible: {setting} (where content goes to log records, export those too)"
        )
    uncaptured = dict.fromkeys(a.tool for a in attempts if not a.arguments_captured)
    missing.extend(f"arguments of {tool} not captured: {setting}" for tool in uncaptured)
    if sum(1 for a in attempts if a.start_ns == 0) >= 2:
        missing.append("tool calls without start times: order checks cannot be evaluated")
    return RunView(
        trace_id=trace_hex(run.trace_id),
        span_id=span_hex(run.span_id),
        agent=run.agent,
        span_name=run.span_name,
        inferred=run.inferred,
        members=[m.agent for m in tree[1:]],
        model_calls=len(models),
        attempts=[
            AttemptView(
                list(a.agent_path), a.tool, a.outcome, a.call_id,
                span_hex(a.span_id) if a.span_id is not None else None,
                a.witnesses.joined_by if a.witnesses is not None else UNPAIRED, a.arguments if a.arguments_captured else None,
                [span_hex(span_id) for span_id in a.evidence], _outcome_from(a), _witnessed(a.witnesses),
            )
            for a in sorted(attempts, key=lambda a: a.start_ns)
        ],
        missing=missing,
    )


def _outcome_from(attempt: Attempt) -> str:
    """Which record decided the attempt's outcome, and the other outcome it leaves open, as ``inspect`` says it."""
    if not attempt.outcome_known:
        return "no span: the run records no tool executions (read as run, not evaluated)"
    if attempt.span_id is None:
        source = "the request, and what answered it" if attempt.outcome != "pending" else "the request, unanswered"
    elif len(attempt.evidence) > 1:
        source = f"the innermost of {len(attempt.evidence)} layers"
    else:
        source = "its execution span"
    if attempt.could_be is None:
        return source
    doubt = attempt.witnesses.doubt if attempt.witnesses is not None else None
    return f"{source}; may be {attempt.could_be}: {doubt or 'the spans cannot tell'}"


def _witnessed(witnesses: Witnesses | None) -> list[str]:
    """What each witness of a call says, one line each; [] when none was recorded (a call
    assembly derived, such as one carried out by a sub-agent's run)."""
    if witnesses is None:
        return []
    seen = []
    if witnesses.request:
        seen.append("request: in a model output")
    if witnesses.execution is not None:
        what = "error" if witnesses.execution == ERROR else "result"
        said = f", {what} {_cut(witnesses.result)}" if witnesses.result else ", no result recorded"
        seen.append(f"execution: {witnesses.execution.upper()}{said}")
    if witnesses.answer is not None:
        seen.append(f"answer: {_cut(witnesses.answer)}")
    return seen


def _cut(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _content_setting(records: list[SpanRecord], read_by: dict) -> str:
    refined = {o.convention.name: o.convention.refines for o in conventions.in_force()}
    for record in records:
        name = read_by.get((record.trace_id, record.span_id), "")
        for convention in (name, *refined.get(name, ())):
            if setting := CONTENT_SETTINGS.get(convention):
                return setting
    return GENERIC_CONTENT_SETTING


def _input_missing(records: list[SpanRecord], owners: dict, runs: list[Run]) -> list[str]:
    missing = []
    if not runs:
        missing.append("no agent runs: no span was read as an agent run, so nothing can be judged")
    orphans = [r for r in records if r.role in (Role.TOOL, Role.MODEL) and owners.get((r.trace_id, r.span_id)) is None]
    if orphans:
        names = ", ".join(dict.fromkeys(r.name for r in orphans))
        missing.append(
            f"spans with no run: {len(orphans)} tool or model span(s) no agent-run span encloses ({names}); "
            "their calls are not judged (was the run span exported? is its convention read?)"
        )
    return missing


def render(inspection: Inspection, console: Console) -> None:
    """The inspection as three parts: spans, runs with their attempts, what is missing. Below
    ``WIDE`` columns (an ordinary terminal) ids are cut to 8 hex digits and the columns that
    repeat what another says (a span's parent, beside its run; an attempt's span, pairing and
    witnesses, whose doubt "Outcome from" says, and which ``--format json`` keeps) are left out, so
    that no header breaks mid-word."""
    narrow = console.width < WIDE
    ids = (lambda value: value[:8]) if narrow else (lambda value: value)
    span_columns = ("Trace", "Span", "Name", "Convention", "Read as", "Run") if narrow else SPAN_COLUMNS
    spans = _table("Spans", "bold magenta", span_columns)
    for s in inspection.spans:
        row = {"Trace": s.trace_id[:8], "Span": ids(s.span_id), "Parent": ids(s.parent_id or ""), "Name": Text(s.name),
               "Convention": s.convention, "Read as": Text(_reading(s)), "Run": ids(s.run_span_id or "-")}
        spans.add_row(*(row[column] for column in span_columns))
    console.print(spans)
    attempt_columns = tuple(c for c in ATTEMPT_COLUMNS if c not in ("Span", "Paired by", "Witnesses")) if narrow else ATTEMPT_COLUMNS
    for run in inspection.runs:
        title = f"Run {run.agent} ({run.span_name}, span {run.span_id}, trace {run.trace_id[:8]})"
        if run.inferred:
            title += f", inferred: {run.inferred}"
        if run.members:
            title += f", members: {', '.join(run.members)}"
        table = _table(title, "bold cyan", attempt_columns)
        for a in run.attempts:
            arguments = "not captured" if a.arguments is None else json.dumps(a.arguments, ensure_ascii=False, default=str)
            row = {"Agent": Text(" > ".join(a.agent_path)), "Tool": Text(a.tool), "Outcome": a.outcome,
                   "Outcome from": Text(a.outcome_from), "Call id": Text(a.call_id or ""),
                   "Span": " ".join(a.evidence) or a.span_id or "", "Paired by": a.paired_by,
                   "Witnesses": Text("\n".join(a.witnesses)), "Arguments": Text(arguments)}
            table.add_row(*(row[column] for column in attempt_columns))
        console.print(table)
        for line in run.missing:
            console.print(Text(f"  missing: {line}"))
    for line in inspection.missing:
        console.print(Text(f"missing: {line}"))
    for backend in inspection.backends:
        console.print(Text(f"read from {backend.source}: {backend.traces} trace(s), {backend.spans} span(s)"))
        for line in backend.cannot:
            console.print(Text(f"  cannot: {line}"))
        for line in backend.notes:
            console.print(Text(f"  note: {line}"))
    if not inspection.missing and not any(r.missing for r in inspection.runs):
        console.print("nothing missing for judging")


WIDE = 120  # columns from which every column of both tables is shown, with whole ids
SPAN_COLUMNS = ("Trace", "Span", "Parent", "Name", "Convention", "Read as", "Run")
ATTEMPT_COLUMNS = ("Agent", "Tool", "Outcome", "Outcome from", "Call id", "Span", "Paired by", "Witnesses", "Arguments")


def _table(title: str, header_style: str, columns: Sequence[str]) -> Table:
    """A table whose headers never break: each column is at least as wide as its header's longest word."""
    table = Table(title=title, header_style=header_style)
    for column in columns:
        table.add_column(column, overflow="fold", min_width=max(map(len, column.split())))
    return table


def _reading(span: SpanView) -> str:
    """What the span was read as, in a few words: "tool multiply (call id call_1)"."""
    parts = [span.read_as]
    if span.agent:
        parts.append(f"agent {span.agent}")
    if span.tool:
        parts.append(span.tool)
    if span.call_id:
        parts.append(f"(call id {span.call_id})")
    if span.requests:
        parts.append(f"requests {', '.join(span.requests)}")
    if span.responses:
        parts.append(f"answers {', '.join(span.responses)}")
    return " ".join(parts)


def render_text(inspection: Inspection, width: int = 200) -> str:
    """The table output as plain text (for files and tests)."""
    console = Console(file=io.StringIO(), record=True, width=width)
    render(inspection, console)
    return console.export_text()
