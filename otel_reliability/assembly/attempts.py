"""A run's attempts: requests paired with executions, each given one outcome.

Requests come only from model-call outputs (inputs replay earlier turns). A request
pairs with an execution by call id when both carry one, otherwise by tool name and
equal arguments in start order, the first unused execution winning. What is left:

* an execution with no request keeps its own outcome (many instrumentations record
  no requests at all);
* a request with no execution was never run: ``refused`` when a later answer says
  so or the run failed before it could run, ``error`` when the producer records the
  answer as a failed run (agno's rejected confirmation), ``pending`` when nothing
  answered it before the run ended (a run paused for a human).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Sequence

from ..model import ERROR, OK, PENDING, REFUSED, Attempt, Role, SpanRecord, ToolRequest, ToolResponse
from .arguments import is_raw, parse_arguments

_start = attrgetter("start_ns")
_TOOL = Role.TOOL
_MODEL = Role.MODEL


@dataclass(slots=True)
class _Request:
    request: ToolRequest
    issued_ns: int  # the end of the model call that asked for it
    _arguments: dict[str, Any] | None = None
    paired: bool = False  # an execution carried it out

    @property
    def arguments(self) -> dict[str, Any]:
        # Parsed on first use: most requests pair by call id and never need it.
        if self._arguments is None:
            self._arguments = parse_arguments(self.request.arguments)
        return self._arguments


def attempts_of(owned: Sequence[SpanRecord], agent: str, path: tuple[str, ...], run_error: str | None) -> list[Attempt]:
    """The attempts of one run from the records it owns directly, in start order."""
    models = []
    executions = []
    for record in owned:
        role = record.role
        if role is _TOOL:
            executions.append(record)
        elif role is _MODEL:
            models.append(record)
    models.sort(key=_start)
    executions.sort(key=_start)
    requests = _requests(models)
    arguments = [parse_arguments(e.arguments) for e in executions]
    pairs = _pair(requests, executions, arguments)
    attempts = [
        _executed(execution, parsed, pairs.get(id(execution)), agent, path)
        for execution, parsed in _tied_in_request_order(executions, arguments, pairs, requests)
    ]
    unexecuted = [request for request in requests if not request.paired]
    if unexecuted:
        answers = _answers(owned)
        failures = [r.end_ns for r in owned if r.role is Role.OTHER and r.error is not None]
        attempts.extend(_unexecuted(request, answers, agent, path, run_error, failures) for request in unexecuted)
        attempts.sort(key=_start)  # the executions' attempts are in start order already
    return attempts


def _requests(models: list[SpanRecord]) -> list[_Request]:
    """The requests of the model calls (in start order), each call id once."""
    seen_ids: set[str] = set()
    out = []
    for record in models:
        for request in record.requests:
            if request.call_id is not None:
                if request.call_id in seen_ids:
                    continue
                seen_ids.add(request.call_id)
            out.append(_Request(request, record.end_ns))
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
            request.paired = True
        else:
            pending.append(request)
    if not pending:
        return pairs
    unmatched = []
    for request in pending:
        for execution, parsed in zip(executions, arguments):
            if (
                id(execution) not in pairs
                and execution.tool_name == request.request.name
                and (execution.call_id is None or request.request.call_id is None)
                and parsed == request.arguments
            ):
                pairs[id(execution)] = request
                request.paired = True
                break
        else:
            unmatched.append(request)
    for execution in executions:
        if execution.tool_name is None and execution.handoff_to and id(execution) not in pairs:
            for request in unmatched:
                if request.request.name.endswith(execution.handoff_to):
                    pairs[id(execution)] = request
                    unmatched.remove(request)
                    request.paired = True
                    break
    return pairs


def _tied_in_request_order(
    executions: list[SpanRecord], arguments: list[dict[str, Any]], pairs: dict[int, _Request], requests: list[_Request]
) -> list[tuple[SpanRecord, dict[str, Any]]]:
    """The executions with their arguments in start order, those that started at the same instant
    in the order they were requested (a producer with millisecond start times, the Vercel AI SDK,
    gives parallel calls one start time; without this their order would be their arrival order)."""
    rank = {id(request): index for index, request in enumerate(requests)}
    unrequested = len(requests)

    def key(pair: tuple[SpanRecord, dict[str, Any]]) -> tuple[int, int]:
        request = pairs.get(id(pair[0]))
        return pair[0].start_ns, rank[id(request)] if request is not None else unrequested

    return sorted(zip(executions, arguments), key=key)


def _executed(
    execution: SpanRecord, arguments: dict[str, Any], request: _Request | None, agent: str, path: tuple[str, ...]
) -> Attempt:
    if request is not None and (execution.arguments is None or is_raw(arguments)) and request.arguments:
        arguments = request.arguments
    if execution.refusal is not None:
        outcome, error = REFUSED, execution.error or execution.refusal
    elif execution.error is not None:
        outcome, error = ERROR, execution.error
    else:
        outcome, error = OK, None
    name = execution.tool_name or (request.request.name if request is not None else execution.name)
    call_id = execution.call_id or (request.request.call_id if request is not None else None)
    return Attempt(name, arguments, outcome, agent, path, call_id, execution.span_id, error, execution.start_ns)


def _answers(owned: Sequence[SpanRecord]) -> dict[str, ToolResponse]:
    answers: dict[str, ToolResponse] = {}
    for record in sorted(owned, key=_start):
        for response in record.responses:
            answers.setdefault(response.call_id, response)
    return answers


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
    return Attempt(request.request.name, request.arguments, outcome, agent, path, call_id, None, error, request.issued_ns)
