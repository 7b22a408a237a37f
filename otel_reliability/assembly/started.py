"""Agents a tool started that no span records: the calls inside a tool's body are their own run.

A tool execution inside another tool's body, with nothing but plain spans between
(``inferred.started_in_tools`` marks it), was made by an agent the outer tool started, or by
the outer tool's body itself; no span says which. The run that owns both spans is not the one
that made the inner call (a delegation under an instrumentation that traces no model call: the
coworker's call hangs right under the delegating tool, inside the delegating agent's run
span; docs/frameworks/ says where). So the inner calls become a member run of the run that made
the outer call, recorded by the outer tool's span:

* named by the agent the framework says the outer call's arguments name (a framework's own
  delegation tool: ``frameworks.agent_started_by``, data in ``adapters/frameworks/``);
* else named after the tool, and no span names its agent (``Run.agent_named`` False): the
  checks that ask whose call it was are not judged on it.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Sequence

from ..adapters import frameworks
from ..model import Run, SpanRecord
from .inferred import INSIDE_TOOL, NAMED_BY_TOOL

_STARTED_BY = attrgetter("started_by")


def started_members(run: Run, owned: Sequence[SpanRecord], path: tuple[str, ...]) -> None:
    """Move the run's attempts made inside another of its calls' tool bodies (``path``: the
    agent path of its calls) into member runs of the run that made that call, in start order
    (a member may start another)."""
    if not any(map(_STARTED_BY, owned)):  # nearly every run: checked without a Python loop
        return
    starters = {record.span_id: record for record in owned if record.started_by}
    spans = {record.span_id: record for record in owned}
    # span id of each call → the run that made it, and that run's agent path
    made_by: dict[int, tuple[Run, tuple[str, ...]]] = {a.span_id: (run, path) for a in run.own_attempts if a.span_id}
    members: dict[int, tuple[Run, tuple[str, ...]]] = {}
    for attempt in sorted(run.own_attempts, key=lambda a: a.start_ns):
        record = starters.get(attempt.span_id or 0)
        outer = spans.get(record.started_by) if record is not None else None
        if outer is None or outer.span_id not in made_by:
            continue  # the starting span is no call of this run's: the run keeps the call
        if outer.span_id not in members:
            holder, holder_path = made_by[outer.span_id]
            member = _member(holder, outer)
            members[outer.span_id] = member, holder_path + (member.agent,)
            holder.members.append(member)
            holder.members.sort(key=lambda m: m.start_ns)
        member, member_path = members[outer.span_id]
        run.own_attempts.remove(attempt)
        attempt.agent, attempt.agent_path = member.agent, member_path
        member.own_attempts.append(attempt)
        made_by[attempt.span_id or 0] = member, member_path


def _member(holder: Run, outer: SpanRecord) -> Run:
    """The run of the agent ``outer`` (a call of ``holder``'s) started: recorded by that call's span."""
    tool = outer.tool_name or outer.name
    call = next((a for a in holder.own_attempts if a.span_id == outer.span_id), None)
    named = frameworks.agent_started_by(tool, call.arguments) if call is not None else None
    rule = INSIDE_TOOL.format(tool=tool)
    return Run(
        trace_id=outer.trace_id,
        span_id=outer.span_id,
        agent=named or tool,
        span_name=outer.name,
        start_ns=outer.start_ns,
        end_ns=outer.end_ns,
        output=outer.output,
        error=outer.error,
        session_id=holder.session_id,
        inferred=rule if named else f"{rule}; {NAMED_BY_TOOL}",
        agent_named=named is not None,
        requests_unseen=holder.requests_unseen,  # its calls are read from the holder's records
    )
