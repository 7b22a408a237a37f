"""Each call's witnesses, and the doubt where they do not agree (issue 31, SPEC §4).

A call can be seen as a *request* (a tool call in a model output), an *execution* (the tool
span that ran the body) and an *answer* (the tool message handed to the model next). Every
attempt records which it has, what each says and the rule that joined request and execution
(``Attempt.witnesses``). Its outcome is confident only when they agree; it is left open
(``Attempt.could_be``: the matcher judges it both ways) when

* the execution ended OK with no recorded result, while the run's other executions record
  theirs (a call held for an approval and denied leaves such a span): it may have been refused;
* its result, its error or the answer handed back reads as a refusal or a failure
  (``adapters.lexicon``: a small list of texts, which only opens an outcome, never decides it),
  or its result is not written as its convention writes a returned value (``failure_possible``);
* the execution failed with an error that says a check of what the body returned failed (an
  output guardrail, ``lexicon.after_return``): the body ran and returned, so it may count as ok;
* the answer handed back is not the result the execution recorded: it may have failed after
  the body returned (a check of its output withheld the result);
* the execution failed as a refusal before the body ran would have left it: its arguments do
  not fit its tool's declared parameters (``assembly.declared``), or its span keeps no message
  (only an error type, nothing, or a message the lexicon reads as withheld): it may have been
  refused;
* a request has no execution and its answer gives no reason: in a trace whose tool spans carry
  out none of its requests it may have run (the answer is then its result), else have failed;
  answered as a failure, it may have failed.

A run's last call, of a tool the lexicon names as one frameworks call themselves to end a run (a
final-answer or finish tool), may be no call of the agent's (``ending_call``): it is read both
with and without that call (``could_be`` ``NOT_A_CALL``).

A span that ended OK with no result, then a later span of the same call that ran, are one call
paused for a decision and resumed (``without_paused``): one attempt, with its final outcome.

Span status alone never decides ``ok``. Nothing here reads a span: it compares what the
adapters kept (the start of a result, an answer's text).
"""

from __future__ import annotations

import re
from typing import Any

from ..adapters.lexicon import FAILURE, REFUSAL, after_return, ends_runs, reads_as, withholds
from ..model import ERROR, NOT_A_CALL, OK, REFUSED, Attempt, Run, SpanRecord, ToolResponse, Witnesses

_OTHER_OUTCOME = {REFUSAL: REFUSED, FAILURE: ERROR}
_STATUS = {True: ERROR, False: OK}


def executed(
    attempt: Attempt,
    execution: SpanRecord,
    requested: bool,
    joined_by: str,
    answer: ToolResponse | None,
    others_return: bool,
    unfit: str | None = None,
) -> None:
    """Record the witnesses of an attempt that has an execution, and open its outcome where they disagree.

    ``others_return``: another execution of the run records its result; ``unfit``: how the call's
    arguments do not fit its tool's declared parameters (``assembly.declared``), for a failed call."""
    result = execution.error if execution.error is not None else execution.output
    said = answer.content if answer is not None else None
    witnesses = attempt.witnesses = Witnesses(
        joined_by, requested, _STATUS[execution.error is not None], result, said, spans_every_call=not execution.spans_some_calls
    )
    if attempt.could_be is not None or attempt.outcome not in (OK, ERROR):
        return  # already open, or refused on a witness's own word
    doubt = _doubt(attempt.outcome, execution, result, answer, others_return, unfit)
    if doubt is not None:
        attempt.could_be, witnesses.doubt = doubt


def requested_only(attempt: Attempt, joined_by: str, answer: ToolResponse | None) -> None:
    """Record the witnesses of a request no execution carried out. A refusal whose answer gives
    no reason may have run with no span of its own (the answer would be its result: but see
    ``unexplained_in_traced``); one whose answer reads as a failure may have failed."""
    said = answer.content if answer is not None else None
    witnesses = attempt.witnesses = Witnesses(joined_by, True, None, None, said)
    if attempt.outcome != REFUSED or attempt.could_be is not None or answer is None:
        return
    reading = reads_as(said)
    if reading is None:
        attempt.could_be, witnesses.doubt = OK, f"no execution span, and the answer gives no reason: {_quoted(said)}"
    elif reading == FAILURE:
        attempt.could_be, witnesses.doubt = ERROR, f"no execution span, and the answer reads as a failure: {_quoted(said)}"


def ending_call(attempts: list[Attempt]) -> None:
    """Open the last of a run's ``attempts`` (in start order) as possibly no call of the agent's
    when its tool is one frameworks call themselves to end a run (``lexicon.ends_runs``): without
    the framework's knowledge, nothing tells the agent's own tool of that name from it."""
    last = attempts[-1] if attempts else None
    if last is None or last.could_be is not None or not ends_runs(last.tool):
        return
    last.could_be = NOT_A_CALL
    if last.witnesses is not None:
        last.witnesses.doubt = f"{last.tool} is a tool frameworks call themselves to end a run, called last"


def unexplained_in_traced(runs: list[Run]) -> None:
    """A refusal answered with no reason, in a trace whose tool spans carried out other requests
    (the instrumentation traces the calls it runs, unless its convention says it spans only some):
    not run, so it may have failed, not have returned (``could_be`` ``error`` instead of ``ok``)."""
    traced = set()
    unexplained = []
    for run in runs:
        for member in run.walk():
            for attempt in member.own_attempts:
                witnesses = attempt.witnesses
                if witnesses is None or not witnesses.request:
                    continue
                if witnesses.execution is not None:
                    if witnesses.spans_every_call:
                        traced.add(member.trace_id)
                elif attempt.outcome == REFUSED and attempt.could_be == OK:
                    unexplained.append((member.trace_id, attempt))
    for trace_id, attempt in unexplained:
        if trace_id in traced:
            attempt.could_be = ERROR


def without_paused(
    executions: list[SpanRecord], arguments: list[dict[str, Any]], pairs: dict[int, Any]
) -> tuple[list[SpanRecord], list[dict[str, Any]]]:
    """``executions`` (in start order, with their parsed ``arguments``) without the spans of calls
    paused for a decision and run once it came. A span that ended OK with no result, and a later
    span of the same tool that ran (it records a result or an error), are one call held and then
    resumed when both carry the same call id, or when the first carried out a request and the
    later one, with the same arguments, none. The later span takes the request (``pairs``:
    id(execution) → request); the pause is no attempt of its own."""
    paused = []
    for index, held in enumerate(executions):
        if held.error is not None or held.returned:
            continue
        for later, parsed in zip(executions[index + 1:], arguments[index + 1:], strict=True):
            if later.tool_name != held.tool_name or later.start_ns < held.end_ns or not (later.returned or later.error is not None):
                continue
            same_call = held.call_id is not None and later.call_id == held.call_id
            if same_call or (
                id(held) in pairs and id(later) not in pairs and later.call_id in (None, held.call_id) and parsed == arguments[index]
            ):
                if id(held) in pairs and id(later) not in pairs:
                    pairs[id(later)] = pairs.pop(id(held))
                paused.append(index)
                break
    if not paused:
        return executions, arguments
    kept = [i for i in range(len(executions)) if i not in paused]
    return [executions[i] for i in kept], [arguments[i] for i in kept]


def _doubt(
    outcome: str, execution: SpanRecord, result: str | None, answer: ToolResponse | None, others_return: bool, unfit: str | None
) -> tuple[str, str] | None:
    """The other outcome and why, when the witnesses of an executed call disagree; None when they agree."""
    status = "OK" if outcome == OK else "ERROR"
    if outcome == ERROR and after_return(result):
        return OK, f"the execution span says ERROR, its error reads as a check of what the body returned: {_quoted(result)}"
    reading = reads_as(result)
    if reading is not None and _OTHER_OUTCOME[reading] != outcome:
        what = "result" if outcome == OK else "error"
        return _OTHER_OUTCOME[reading], f"the execution span says {status}, its {what} reads as a {reading}: {_quoted(result)}"
    said = answer.content if answer is not None else None
    reading = reads_as(said) if said != result else None  # the same text reads the same
    if reading is not None and _OTHER_OUTCOME[reading] != outcome:
        return _OTHER_OUTCOME[reading], f"the execution span says {status}, the answer reads as a {reading}: {_quoted(said)}"
    if outcome != OK:
        return _refused_alike(result, unfit)
    if execution.failure_possible:
        return ERROR, f"the execution span says OK, but its result is not what its convention writes for a returned value: {_quoted(result)}"
    if not execution.returned and others_return:
        return REFUSED, "the execution span says OK with no recorded result, while the run's other executions record theirs"
    if said and result and not _same(result, said):
        return ERROR, f"the answer handed back ({_quoted(said)}) is not the execution's result ({_quoted(result)})"
    return None


def _refused_alike(error: str | None, unfit: str | None) -> tuple[str, str] | None:
    """``REFUSED`` and why, for a failed call that a refusal before the body ran would have left
    looking the same: its arguments do not fit its tool's declared parameters (a framework that
    validates them refuses the call, and many record that as a failed span), or the span keeps
    no message, only an error type, or says its message was withheld (a validation error and a
    body's exception then look alike)."""
    if unfit is not None:
        return REFUSED, f"the execution span says ERROR, and the arguments do not fit the tool's declared parameters: {unfit}"
    if not error:
        return REFUSED, "the execution span says ERROR with no message"
    if _ERROR_TYPE.fullmatch(error):
        return REFUSED, f"the execution span says ERROR and keeps only an error type, no message: {_quoted(error)}"
    if withholds(error):
        return REFUSED, f"the execution span says ERROR and its message is withheld: {_quoted(error)}"
    return None


# an error type alone (``ValueError``, ``TOOL_ERROR``, ``pkg.errors.ToolError``): a name, no message
_ERROR_TYPE = re.compile(r"[A-Za-z_][\w.]*")


def _compact(text: str) -> str:
    """A result or answer reduced to what survives the ways producers wrap and print it: no
    whitespace, quotes or escapes (a result may be recorded as a JSON document around the text
    the model was handed, ``{"content": "50", …}``, or spaced differently)."""
    return text.translate(_DROPPED)


_DROPPED = str.maketrans("", "", " \t\n\r\"'\\")
_COMPARED = 64  # the answer's start: enough to tell texts apart, short of where a kept result may be cut


def _same(result: str, answer: str) -> bool:
    """Whether an answer is the recorded result, or holds it, or is held in it (either may be
    wrapped in the other, and the kept result may be cut short)."""
    kept, said = _compact(result), _compact(answer)[:_COMPARED]
    return not said or not kept or said in kept or kept[:_COMPARED] in said


def _quoted(text: str | None, limit: int = 60) -> str:
    text = " ".join((text or "").split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
