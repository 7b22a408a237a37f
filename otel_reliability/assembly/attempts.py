"""A run's attempts: requests paired with executions, each given one outcome.

Requests come only from model-call outputs (inputs replay earlier turns). A request
pairs with an execution, in this order of preference (SPEC §3, §4):

1. ``call id`` — both carry the same call id;
2. ``name+arguments`` — same tool name and equal arguments (one of them carrying no
   call id), in start order, the first unused execution winning;
3. ``relaxed`` — same tool name, one of them carrying no call id, the execution
   started within the request's window: at or after the end of the model call that
   asked for it, or wholly inside it (a streaming model call, ADK's, stays open while the
   calls it asked for run; an earlier turn's window closed when this call started), and
   before the start of the run's next model call (no bound when there is none). Requests take the first such unused execution, in request order.
   When one model call asked for the same tool more than once, which request an
   execution carried out is a guess: such an execution does not borrow the request's
   arguments (with none of its own, they count as not captured). This is what pairs a call whose execution recorded its arguments wrapped
   (smolagents' ``{"args": [], "kwargs": {...}}``) or not at all;
4. ``handoff target`` — a handoff execution that names its target agent, not a tool
   (openai-agents), with a request whose name ends with that target.

What is left:

* an execution with no request keeps its own outcome (many instrumentations record
  no requests at all);
* a request with no execution was never run: ``refused`` when a later answer says
  so or the run failed before it could run, ``error`` when the producer records the
  answer as a failed run (agno's rejected confirmation), ``pending`` when nothing
  answered it before the run ended (a run paused for a human); it comes in the chain in its
  turn's request order (``assembly.turn_order``).

Every attempt records its witnesses (request, execution, answer) and how they were joined
(``Attempt.witnesses``), and is left open where they disagree (``assembly.witnesses``). Where
the spans leave another outcome open, the attempt says which (``Attempt.could_be``):
a pending call may have been cut off by a limit, or be held for a decision that may yet be a
rejection (``refused``); a request answered as failed had no execution span; and a
failed execution whose arguments did not parse, or whose error a profile names as one a
refusal leaves too, may never have run its body (so may one whose arguments do not fit its
tool's declared parameters, ``assembly.declared``, or whose span keeps no message:
``assembly.witnesses``). The matcher judges such a run both ways.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Sequence

from ..model import ERROR, OK, PENDING, REFUSED, Attempt, Role, SpanRecord, ToolRequest, ToolResponse, Witnesses
from . import declared, turn_order, witnesses
from .arguments import is_raw, parse_arguments

_start = attrgetter("start_ns")
_NO_LATER_MODEL_CALL = 2**63

BY_CALL_ID = "call id"
BY_NAME_AND_ARGUMENTS = "name+arguments"
RELAXED = "relaxed"
BY_HANDOFF_TARGET = "handoff target"  # a handoff execution that names its target agent, not a tool
UNPAIRED = "unpaired"
PAIRED_BY = (BY_CALL_ID, BY_NAME_AND_ARGUMENTS, RELAXED, BY_HANDOFF_TARGET, UNPAIRED)
"""How an attempt was paired (``Witnesses.joined_by``, as ``inspect`` reports it): an execution with its request, or
``unpaired`` (an execution no request asked for, or a request no execution carried out)."""
_TOOL = Role.TOOL
_MODEL = Role.MODEL


@dataclass(slots=True)
class _Request:
    request: ToolRequest
    issued_ns: int  # the end of the model call that asked for it
    opened_ns: int  # its start: the request may have been streamed out before the call ended
    window_end_ns: int  # the start of the run's next model call: an execution after it answers a later request
    turn: int  # which of the run's model calls asked for it (their index in start order)
    _arguments: dict[str, Any] | None = None
    paired_by: str | None = None  # how an execution was found for it (``PAIRED_BY``); None: no execution
    # Paired relaxed while another request of the same model call named the same tool: which
    # of them this execution carried out is a guess, so its arguments are not lent to it.
    ambiguous: bool = False

    @property
    def paired(self) -> bool:
        return self.paired_by is not None

    @property
    def arguments(self) -> dict[str, Any]:
        # Parsed on first use: most requests pair by call id and never need it.
        if self._arguments is None:
            self._arguments = parse_arguments(self.request.arguments)
        return self._arguments


def attempts_of(
    owned: Sequence[SpanRecord],
    agent: str,
    path: tuple[str, ...],
    run_error: str | None,
    declared_to_run: Sequence[Any] = (),
) -> list[Attempt]:
    """The attempts of one run from the records it owns directly, in start order, each with its
    witnesses (``assembly.witnesses``). ``declared_to_run``: the raw tool definitions the run's
    own spans carry (``SpanRecord.tool_definitions``), beside its model calls'."""
    models = []
    executions = []
    for record in owned:
        role = record.role
        if role is _TOOL:
            executions.append(record)
        elif role is _MODEL:
            models.append(record)
    models.sort(key=_start)
    executions.sort(key=_start_then_id)  # the span id only makes ties independent of arrival order
    requests = _requests(models)
    arguments = [parse_arguments(e.arguments) for e in executions]
    pairs = _pair(requests, executions, arguments)
    if len(pairs) < len(executions) and len(executions) > 1:
        executions, arguments = witnesses.without_paused(executions, arguments, pairs)
    # In start order, so a start seen twice is two that started in the same instant (one set,
    # not a generator over pairs: this runs for every run).
    if len({e.start_ns for e in executions}) < len(executions):
        executions, arguments = _ties_in_request_order(executions, arguments, requests, pairs)
    answered = _answered_in(models)
    refused_by_answer = {call_id: r.names_refusal for call_id, r in answered.items() if r.names_refusal}
    returning = sum(e.returned for e in executions)
    attempts = []
    tools: dict[str, Any] | None = None  # the tools declared to the run, read for its first failed call
    for execution, parsed in zip(executions, arguments, strict=True):
        request = pairs.get(id(execution))
        attempt = _executed(execution, parsed, request, agent, path, refused_by_answer)
        joined_by = (request.paired_by if request is not None else None) or UNPAIRED
        answer = answered.get(attempt.call_id) if answered and attempt.call_id is not None else None
        unfit = None
        if attempt.outcome == ERROR and attempt.could_be is None:
            if tools is None:
                tools = declared.declared_tools([*declared_to_run, *(m.tool_definitions for m in models if m.tool_definitions is not None)])
            # the model's request is what a framework validates; its execution may record it wrapped
            asked = request.arguments if request is not None and not request.ambiguous else attempt.arguments
            unfit = declared.misfit(attempt.tool, asked, execution.parameters, tools)
        witnesses.executed(attempt, execution, request is not None, joined_by, answer, returning > execution.returned, unfit)
        attempts.append(attempt)
    unexecuted = [request for request in requests if not request.paired]
    if unexecuted:
        answers, answered_after = turn_order.answers(owned)
        failures = [r.end_ns for r in owned if r.role is Role.OTHER and r.error is not None]
        ran = {a.call_id: a.start_ns for a in attempts if a.call_id is not None}
        started = {id(request): execution.start_ns for execution in executions if (request := pairs.get(id(execution)))}
        asked_before = turn_order.ran_asked_before([(id(request), request.turn) for request in requests], started)
        # No span records an execution, but the answers say which calls ran: one they do not
        # name may have run after the run's last model call (a step limit ends the run there).
        said_ran = not executions and any(answer.ran for answer in answers.values())
        for request in unexecuted:
            call_id = request.request.call_id
            if not executions and (call_id is None or (answers[call_id].ran if call_id in answers else said_ran)):
                attempt = _unrecorded(request, agent, path)
                attempt.witnesses = Witnesses(UNPAIRED, request=True)
            else:
                attempt = _unexecuted(request, answers, agent, path, run_error, failures)
                answer = answers.get(attempt.call_id) if attempt.call_id else None
                attempt.start_ns = turn_order.in_turn_order(
                    attempt, answer is not None, answered_after, ran, asked_before.get(id(request))
                )
                witnesses.requested_only(attempt, UNPAIRED, answer)
            attempts.append(attempt)
        attempts.sort(key=_start)  # the executions' attempts are in start order already
    witnesses.ending_call(attempts)
    return attempts


def _held_one_of(request: ToolRequest, earlier: list[_Request]) -> _Request | None:
    """The earlier request that a held span with no call id records (same tool, equal arguments):
    the span says that call waits for a decision, it is no call of its own."""
    if not request.held:
        return None
    arguments = parse_arguments(request.arguments)
    for asked in reversed(earlier):
        if asked.request.name == request.name and asked.arguments == arguments:
            return asked
    return None


def _start_then_id(record: SpanRecord) -> tuple[int, int]:
    return record.start_ns, record.span_id


def _ties_in_request_order(
    executions: list[SpanRecord], arguments: list[dict[str, Any]], requests: list[_Request], pairs: dict[int, _Request]
) -> tuple[list[SpanRecord], list[dict[str, Any]]]:
    """Executions that started in the same instant (parallel calls on a millisecond clock) in the
    order the model asked for them; unpaired ones after the paired."""
    rank = {id(request): index for index, request in enumerate(requests)}
    unpaired = len(rank)

    def key(index: int) -> tuple[int, int]:
        execution = executions[index]
        return execution.start_ns, rank.get(id(pairs.get(id(execution))), unpaired)

    order = sorted(range(len(executions)), key=key)
    return [executions[i] for i in order], [arguments[i] for i in order]


def _requests(models: list[SpanRecord]) -> list[_Request]:
    """The requests of the model calls (in start order), each call id once."""
    seen: dict[str, _Request] = {}
    out: list[_Request] = []
    starts = [m.start_ns for m in models]
    for index, record in enumerate(models):
        if not record.requests:
            continue
        # The first model call that started after this one ended: the model's next turn.
        following = bisect_left(starts, record.end_ns, index + 1)
        window_end = starts[following] if following < len(starts) else _NO_LATER_MODEL_CALL
        for request in record.requests:
            first = seen.get(request.call_id) if request.call_id is not None else _held_one_of(request, out)
            if first is not None:
                continue  # the model asked for it, then a span held it: one call
            read = _Request(request, record.end_ns, record.start_ns, window_end, index)
            if request.call_id is not None:
                seen[request.call_id] = read
            out.append(read)
    return out


def _pair(requests: list[_Request], executions: list[SpanRecord], arguments: list[dict[str, Any]]) -> dict[int, _Request]:
    """Map id(execution) → the request it carried out (marked paired); ``arguments`` are the executions' parsed arguments."""
    pairs: dict[int, _Request] = {}
    by_call_id = {e.call_id: e for e in executions if e.call_id is not None}
    pending = []
    for request in requests:
        execution = by_call_id.get(request.request.call_id) if request.request.call_id is not None else None
        if execution is not None and id(execution) not in pairs:
            pairs[id(execution)] = request
            request.paired_by = BY_CALL_ID
        else:
            pending.append(request)
    if not pending:
        return pairs
    unmatched = []
    for request in pending:
        for execution, parsed in zip(executions, arguments, strict=True):
            if (
                id(execution) not in pairs
                and execution.tool_name == request.request.name
                and (execution.call_id is None or request.request.call_id is None)
                and parsed == request.arguments
            ):
                pairs[id(execution)] = request
                request.paired_by = BY_NAME_AND_ARGUMENTS
                break
        else:
            unmatched.append(request)
    if unmatched:
        unmatched = _pair_relaxed(unmatched, executions, pairs)
    for execution in executions:
        if execution.tool_name is None and execution.handoff_to and id(execution) not in pairs:
            for request in unmatched:
                if request.request.name.endswith(execution.handoff_to):
                    pairs[id(execution)] = request
                    unmatched.remove(request)
                    request.paired_by = BY_HANDOFF_TARGET
                    break
    return pairs


def _pair_relaxed(requests: list[_Request], executions: list[SpanRecord], pairs: dict[int, _Request]) -> list[_Request]:
    """Pair what is left by tool name within each request's window (module docstring); return the rest."""
    left = []
    starts = [e.start_ns for e in executions]
    asked = Counter((r.request.name, r.issued_ns) for r in requests)
    for request in requests:
        wanted = request.request
        for index in range(bisect_left(starts, request.opened_ns), len(executions)):
            execution = executions[index]
            start = execution.start_ns
            if start >= request.window_end_ns:
                break  # executions are in start order: none later can fall in the window
            if (
                id(execution) not in pairs
                and execution.tool_name == wanted.name
                and (execution.call_id is None or wanted.call_id is None)
                and (start >= request.issued_ns or execution.end_ns <= request.issued_ns)
            ):
                pairs[id(execution)] = request
                request.paired_by = RELAXED
                request.ambiguous = asked[wanted.name, request.issued_ns] > 1
                break
        else:
            left.append(request)
    return left


def _executed(
    execution: SpanRecord,
    arguments: dict[str, Any],
    request: _Request | None,
    agent: str,
    path: tuple[str, ...],
    refused_by_answer: dict[str, str],
) -> Attempt:
    lending = request if request is not None and not request.ambiguous else None
    unparsed = is_raw(arguments)
    if lending is not None and (execution.arguments is None or unparsed) and lending.arguments:
        arguments = lending.arguments
    # a failed span whose call the framework answered with its own refusal (the span itself
    # records no result: ADK's content only in log records) never ran
    answer_refusal = (
        refused_by_answer.get(execution.call_id) if execution.error is not None and execution.call_id is not None else None
    )
    if execution.refusal is not None:
        outcome, error = REFUSED, execution.error or execution.refusal
    elif answer_refusal is not None:
        outcome, error = REFUSED, execution.error or answer_refusal
    elif execution.error is not None:
        outcome, error = ERROR, execution.error
    else:
        outcome, error = OK, None
    name = execution.tool_name or (request.request.name if request is not None else execution.name)
    call_id = execution.call_id or (request.request.call_id if request is not None else None)
    captured = execution.arguments is not None or (lending is not None and lending.request.arguments is not None)
    # a failed call whose arguments did not parse may never have reached its body
    could_be = REFUSED if outcome == ERROR and (unparsed or execution.refusal_possible) else None
    return Attempt(
        name, arguments, outcome, agent, path, call_id, execution.span_id, error, execution.start_ns, captured,
        execution.layers, could_be=could_be,
    )


def _answered_in(models: list[SpanRecord]) -> dict[str, ToolResponse]:
    """Each call id's first answer in the model inputs (``models`` in start order)."""
    answered: dict[str, ToolResponse] = {}
    for record in models:
        for response in record.responses:
            answered.setdefault(response.call_id, response)
    return answered


def _unexecuted(
    request: _Request,
    answers: dict[str, ToolResponse],
    agent: str,
    path: tuple[str, ...],
    run_error: str | None,
    failures: list[int],
) -> Attempt:
    call_id = request.request.call_id
    answer = answers.get(call_id) if call_id is not None else None
    if answer is not None:
        outcome, error = (REFUSED if answer.refusal else ERROR), answer.content
    elif run_error is not None or any(end >= request.issued_ns for end in failures):
        outcome, error = REFUSED, run_error or "the run failed before the call could run"
    else:
        outcome, error = PENDING, None
    captured = request.request.arguments is not None
    # Nothing answered it: cut off by a limit, or held for a decision that may yet be a rejection
    # (a span that says it is held tells which, not how it ends). Answered as failed with no
    # execution span, its body may never have run (SPEC §4 reads agno's rejected confirmation
    # so): a refusal says no less.
    could_be = REFUSED if outcome == PENDING or (outcome == ERROR and answer is not None) else None
    return Attempt(
        request.request.name, request.arguments, outcome, agent, path, call_id, None, error, request.issued_ns, captured,
        could_be=could_be,
    )


def _unrecorded(request: _Request, agent: str, path: tuple[str, ...]) -> Attempt:
    """A request in a run whose spans record no tool execution at all, with no call id (no
    answer can name it) or answered as having run (``ToolResponse.ran``): the instrumentation
    traces no tools, so nothing says what the call did. Read as run, and marked as read
    (``outcome_known``): never a refusal or a pending call, which the spans do not say either."""
    captured = request.request.arguments is not None
    return Attempt(
        request.request.name, request.arguments, OK, agent, path, request.request.call_id, None, None, request.issued_ns,
        captured, outcome_known=False,
    )
