"""Trace assembly: normalised records → top-level runs, their member runs and attempts.

Pure: no I/O, no OpenTelemetry imports. Records of several traces may be assembled
together; a run span that carries the run identity (``run_key``) of an earlier top
level run continues it (agno's ``continue_run`` starts a new trace), so their
records are merged into one run reported under the latest run span.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from operator import attrgetter
from typing import Iterable

from ..model import ERROR, OK, PENDING, Attempt, Role, Run, SpanRecord
from . import transcript, witnesses
from .attempts import attempts_of
from .inferred import UNNAMED, infer_runs, name_unnamed_runs, started_in_tools
from .layers import fold_layers
from .profiled import apply_profiles
from .started import started_members
from .ownership import enclosing_run, inherit_dispatched_call_id, right_in_run_span, run_of_sender, stretch_outlived_runs
from .unseen import handed_over, unseen_calls
from .usage import model_usage

_Key = tuple[int, int]
_start = attrgetter("start_ns")
_ROLE = attrgetter("role")
_AGENT_RUN = Role.AGENT_RUN
_TOOL = Role.TOOL
_OTHER = Role.OTHER
_MODEL = Role.MODEL
_CONTENT = (Role.TOOL, Role.MODEL)  # what a run does itself, as opposed to what it only wraps


def _key(record: SpanRecord) -> _Key:
    return record.trace_id, record.span_id


def as_read(spans: dict[int, SpanRecord]) -> dict[int, SpanRecord]:
    """One trace's records (span id → record) as assembly reads them: with what its profiles
    say, the runs found from structure, the runs no span names named from what encloses them,
    each call's layers folded into one record, and each call made inside another tool's body
    marked (``SpanRecord.started_by``).

    >>> as_read({})
    {}
    """
    spans = apply_profiles(spans)
    if _calls_right_in_run_spans(spans):
        # Most traces, and this runs for every one: structure finds no run where every call
        # is a marked run's own (``infer_runs``), and a call right in a run span is no layer
        # of another (``fold_layers``), so both would return ``spans`` as they are.
        return name_unnamed_runs(spans)
    return started_in_tools(fold_layers(name_unnamed_runs(infer_runs(stretch_outlived_runs(spans)))))


def _calls_right_in_run_spans(spans: dict[int, SpanRecord]) -> bool:
    """Whether every model call and tool execution is a child of a run span that holds it."""
    get = spans.get
    for record in spans.values():
        if record.role in _CONTENT and not right_in_run_span(record, get(record.parent_id)):
            return False
    return True


def assemble(records: Iterable[SpanRecord]) -> list[Run]:
    """Every top-level run in the records, in start order (each attempt with its witnesses and
    how they were joined, ``Attempt.witnesses``).

    >>> assemble([])
    []
    """
    traces: dict[int, dict[int, SpanRecord]] = defaultdict(dict)  # span ids are unique only within a trace
    for record in records:
        traces[record.trace_id][record.span_id] = record
    # What the trace's profiles say, then what structure tells beyond the conventions: the runs no
    # span marks, and one record per call however many layers recorded it. Each copies what it
    # changes: the buffer keeps the originals.
    for trace_id, spans in traces.items():
        traces[trace_id] = as_read(spans)
    owned: dict[_Key, list[SpanRecord]] = defaultdict(list)
    members: dict[_Key, list[SpanRecord]] = defaultdict(list)
    top_level: list[SpanRecord] = []
    for spans in traces.values():
        get = spans.get
        for record in spans.values():
            role = record.role
            if role is _TOOL and record.call_id is None:
                inherit_dispatched_call_id(record, spans)
            owner = get(record.parent_id)
            if not right_in_run_span(record, owner):
                owner = enclosing_run(record, spans)
            if owner is None and record.sent_by is not None and role is not _AGENT_RUN:
                owner = run_of_sender(record, spans)
            if role is _AGENT_RUN:
                if owner is None and record.session_id is None:
                    record.session_id = _ancestor_session(record, spans)
                (members[owner.trace_id, owner.span_id] if owner is not None else top_level).append(record)
            elif owner is not None:
                owned[owner.trace_id, owner.span_id].append(record)
    runs = _runs_with_continuations(top_level, owned, members)
    if len(runs) > 1:
        _handed_over_between(runs)
    witnesses.unexplained_in_traced(runs)
    handed_over(runs)
    return runs


def _handed_over_between(runs: list[Run]) -> None:
    """A handoff no tool span records, whose target agent runs next as a run of its own in the
    same trace (a workflow that runs its agents one after another, each a top-level run): the
    handoff was carried out, by that run. As ``_delegated`` does within a run."""
    for index, run in enumerate(runs):
        later = [r for r in runs[index + 1:] if r.trace_id == run.trace_id and r.agent != run.agent]
        for attempt in run.own_attempts:
            if attempt.outcome != PENDING or not later:
                continue
            target = _carrier(attempt, later)
            if target is not None and target.agent != attempt.tool:  # a handoff's name, not an agent called as a tool
                later.remove(target)
                _carried_out_by(attempt, target)


def _runs_with_continuations(
    top_level: list[SpanRecord],
    owned: dict[_Key, list[SpanRecord]],
    members: dict[_Key, list[SpanRecord]],
) -> list[Run]:
    """One run per top-level run span; a continuation carries its predecessors' evidence.

    A run continues an earlier one when it has the same run identity, or when it
    answers a call an earlier run of the same agent left pending (a resumed
    human-in-the-loop run in a framework that gives the resumed run a new identity;
    call ids are not unique across agents, e.g. a model's ``call_1``).
    """
    runs = []
    by_key: dict[str, list[SpanRecord]] = {}
    by_pending_call: dict[tuple[str | None, str], list[SpanRecord]] = {}
    for record in sorted(top_level, key=_start):
        chain = by_key.get(record.run_key) if record.run_key is not None else None
        if chain is None and by_pending_call:
            chain = next((by_pending_call[c] for c in _resumed_calls(record, owned) if c in by_pending_call), None)
        chain = chain + [record] if chain else [record]
        # A continuation's model calls are its own span's: the earlier ones are in the earlier
        # run's result, and usage summed over results counts each call once. A run that
        # continues none is its own group: its calls are the group's, gathered once.
        run = _build(chain, owned, members, (), usage_from=[record] if len(chain) > 1 else None)
        runs.append(run)
        if record.run_key is not None:
            by_key[record.run_key] = chain
        for attempt in run.own_attempts:
            if (call_id := _resumable_call(attempt)) is not None:
                by_pending_call[record.agent_name, call_id] = chain
    return runs


def _build(
    group: list[SpanRecord],
    owned: dict[_Key, list[SpanRecord]],
    members: dict[_Key, list[SpanRecord]],
    parent_path: tuple[str, ...],
    usage_from: list[SpanRecord] | None = None,
) -> Run:
    """The run of ``group`` (a run span and those it continues); its model calls are those of
    ``usage_from``'s spans, by default the whole group's (a member run that continues another
    replaces it)."""
    latest = group[-1]
    member_records = sorted(_gathered(group, members), key=_start)
    owned_records = _gathered(group, owned)
    # spans that name the agent acting from then on, for a run that names none (LlamaIndex's steps)
    acting = [] if latest.agent_name else sorted((r for r in owned_records if r.agent_name), key=_start)
    name, named = _agent_name(latest, acting, member_records, owned_records)
    path = parent_path + (name,)
    run_error = None
    for record in reversed(group):
        if record.error is not None:
            run_error = record.error
            break
    read = owned_records + transcript.turns(latest, owned_records)  # a transcript's turns, where no span records them
    run = Run(
        trace_id=latest.trace_id,
        span_id=latest.span_id,
        agent=name,
        span_name=latest.name,
        start_ns=group[0].start_ns,
        end_ns=latest.end_ns,
        attributes=latest.attributes or {},
        run_key=latest.run_key,
        output=latest.output,
        error=run_error,
        session_id=_session_of(group, owned_records, member_records),
        inferred=latest.inferred,
        agent_named=named,
        continues=tuple(map(_key, group[:-1])),
        agent_version=latest.agent_version,
        own_attempts=attempts_of(read, name, path, run_error, [r.tool_definitions for r in group if r.tool_definitions is not None]),
        requests_unseen=_MODEL not in map(_ROLE, read),  # no model turn: no request can be seen
    )
    counted = group if usage_from is None else usage_from
    calls_of = owned_records if counted is group else _gathered(counted, owned)
    run.model_calls, run.tokens, run.untokened_model_calls = model_usage(calls_of, counted)
    run.failed_steps = tuple(f"{r.name}: {r.error}" for r in owned_records if r.error is not None and r.role is _OTHER)
    run.unseen_calls = unseen_calls(owned_records, member_records)
    if len({r.agent_name for r in acting}) > 1:
        _hand_over(run.own_attempts, acting, parent_path)
    if member_records:
        run.members = _member_runs(member_records, owned, members, path)
        _delegated(run)
    started_members(run, owned_records, path)  # agents a tool started that no span records
    return run


def _hand_over(attempts: list[Attempt], acting: list[SpanRecord], parent_path: tuple[str, ...]) -> None:
    """Give each attempt the agent acting when it started: a handoff inside one run (LlamaIndex's
    ``AgentWorkflow`` hands over between agents within one workflow run span)."""
    starts = [r.start_ns for r in acting]
    for attempt in attempts:
        index = bisect_right(starts, attempt.start_ns) - 1
        if index >= 0:
            agent = acting[index].agent_name or attempt.agent
            attempt.agent, attempt.agent_path = agent, parent_path + (agent,)


def _delegated(run: Run) -> None:
    """A call no tool span records, carried out by a member run of the agent it names (an agent
    called like a tool, or handed over to, whose own run span alone records the call)."""
    unused = list(run.members)
    for attempt in run.own_attempts:
        if attempt.outcome != PENDING:
            continue
        member = _carrier(attempt, unused)
        if member is not None:
            unused.remove(member)
            _carried_out_by(attempt, member)
            attempt.span_id = member.span_id


def _carrier(attempt: Attempt, runs: list[Run]) -> Run | None:
    """The first of ``runs`` that started after ``attempt`` and whose agent the call names."""
    return next((r for r in runs if _names(attempt.tool, r.agent) and r.start_ns >= attempt.start_ns), None)


def _carried_out_by(attempt: Attempt, run: Run) -> None:
    """A call no tool span records, carried out by ``run``: its outcome is the run's, no longer open."""
    attempt.outcome, attempt.error = (OK, None) if run.error is None else (ERROR, run.error)
    attempt.could_be = None


def _names(tool: str, agent: str) -> bool:
    """Whether a call of ``tool`` names ``agent``: the agent's own name (an agent called as a
    tool), or a handoff's (``transfer_to_<agent>``, ``handoff_to_<agent>``: any name ending in
    ``_<agent>``)."""
    return tool == agent or tool.endswith("_" + agent)


def _member_runs(
    member_records: list[SpanRecord],
    owned: dict[_Key, list[SpanRecord]],
    members: dict[_Key, list[SpanRecord]],
    path: tuple[str, ...],
) -> list[Run]:
    """The member runs in start order; a member that answers a call an earlier member of the same
    agent left pending continues it and takes its place (openai-agents resumes an approved or
    rejected call as a new agent span under the same outer trace)."""
    runs: list[Run] = []
    groups: list[list[SpanRecord]] = []
    by_pending_call: dict[tuple[str | None, str], int] = {}
    for record in member_records:
        index = next((by_pending_call[c] for c in _resumed_calls(record, owned) if c in by_pending_call), None)
        if index is None:
            index = len(runs)
            groups.append([record])
            runs.append(_build(groups[index], owned, members, path))
        else:
            groups[index] = groups[index] + [record]
            runs[index] = _build(groups[index], owned, members, path)
        for attempt in runs[index].own_attempts:
            if (call_id := _resumable_call(attempt)) is not None:
                by_pending_call[record.agent_name, call_id] = index
    return runs


def _resumable_call(attempt: Attempt) -> str | None:
    """The call id by which a later run that answers this call without asking for it resumes its
    run, None when none can: the call was left pending, or its execution span ended OK with no
    result (a span some instrumentations leave for a call held for a decision: the decision, and
    the call's run once approved, are in the later run)."""
    if attempt.call_id is None or attempt.outcome not in (PENDING, OK):
        return None
    seen = attempt.witnesses
    if attempt.outcome == OK and (seen is None or seen.execution != OK or seen.result is not None):
        return None
    return attempt.call_id


def _resumed_calls(record: SpanRecord, owned: dict[_Key, list[SpanRecord]]) -> list[tuple[str | None, str]]:
    """(agent, call id) of each call the run answers without having asked for it: only those can
    resume an earlier run. A run that answers its own request (a guard refusing it) resumes
    nothing, though an earlier run of its agent may have left the same call id (``call_delete_1``)
    pending."""
    own = owned.get(_key(record), ())
    answers = [response.call_id for r in own for response in r.responses]
    if not answers:
        return []
    requested = {request.call_id for r in own for request in r.requests}
    return [(record.agent_name, call_id) for call_id in answers if call_id not in requested]


def _gathered(group: list[SpanRecord], index: dict[_Key, list[SpanRecord]]) -> list[SpanRecord]:
    """What ``index`` holds for the group's records, in group order (read only: it may be the index's own list)."""
    if len(group) == 1:
        record = group[0]
        return index.get((record.trace_id, record.span_id)) or []
    return [item for record in group for item in index.get(_key(record), ())]


def _ancestor_session(record: SpanRecord, spans: dict[int, SpanRecord]) -> str | None:
    """The conversation an enclosing span names (traceloop's LangGraph run sits under an
    ``invoke_agent`` span that carries it and is no run itself)."""
    node = spans.get(record.parent_id)
    for _ in range(1024):  # a parent cycle in bad input must not hang assembly
        if node is None:
            return None
        if node.session_id is not None:
            return node.session_id
        node = spans.get(node.parent_id)
    return None


def _session_of(group: list[SpanRecord], owned: list[SpanRecord], member_records: list[SpanRecord]) -> str | None:
    """The conversation the run is a turn of: its latest run span's, else the first any of its
    spans names (ADK and openai-v2 put it on the run span, some only on model-call spans)."""
    for records in (reversed(group), owned, member_records):
        for record in records:
            if record.session_id is not None:
                return record.session_id
    return None


def _agent_name(
    record: SpanRecord, acting: list[SpanRecord], member_records: list[SpanRecord], owned_records: list[SpanRecord]
) -> tuple[str, bool]:
    """The run's agent, and whether a span names it; a run with no identity of its own takes the
    first agent its spans name as acting (``acting``, in start order), else, when it only wraps
    its members (no model call or tool execution of its own among ``owned_records``), its first
    member's, else what encloses it names, else its span's name, which names no agent."""
    if record.agent_name:
        return record.agent_name, not (record.inferred and UNNAMED in record.inferred)
    if acting:
        return str(acting[0].agent_name), True
    if member_records and not any(r.role in _CONTENT for r in owned_records):
        for member in member_records:
            if member.agent_name:
                return member.agent_name, True
    if record.names_agent:  # what encloses the run names it (``inferred.name_unnamed_runs``)
        return record.names_agent, True
    return record.name, False
