"""Calls the spans do not name: a model call whose recorded finish reason says it stopped to
have tools called (``SpanRecord.stopped_for_tools``), after which nothing of its run ran.

Some instrumentations keep no part of the model's output (no request names the call) and span
only the calls that ran. A call refused before it ran (a limit reached, an unknown tool) then
leaves no span at all, and the run reads as if it had made no such call. The model call's own
word that it asked for tools is the one witness left: when no tool execution, no member run and
no record that names a request starts between it and the run's next model call (or the run's
end), a call it asked for never ran, so ``fail_on`` refused and pending cannot be judged
confidently (``matcher.policies``). A model call that names its requests needs none of this:
they are attempts of their own.

A run that ended right after asking can still have handed the call over (``handed_over``):
another run of the same trace that starts after it carried it out (the agent handed over to).
A call held for a decision ends its run the same way: the doubt stands there, as it does where
the request is seen (a pending call may have been refused), until a later run resumes it.
"""

from __future__ import annotations

from operator import attrgetter

from ..model import Role, Run, SpanRecord, UnseenCall

_start = attrgetter("start_ns")


def unseen_calls(owned: list[SpanRecord], member_runs: list[SpanRecord]) -> tuple[UnseenCall, ...]:
    """The model calls among a run's own records (``owned``; ``member_runs``: its member run
    spans) that asked for tools no span shows ran; () for almost every run."""
    asked = [r for r in owned if r.stopped_for_tools and r.model_call and not r.requests]
    if not asked:
        return ()
    calls = sorted((r for r in owned if r.model_call), key=_start)
    unseen = []
    for model in sorted(asked, key=_start):  # in start order, however the spans arrived: the verdict's reason lists them
        until = next((r.start_ns for r in calls if r.start_ns > model.start_ns), None)
        if not any(_carries_out(r, model, until) for r in (*owned, *member_runs)):
            unseen.append(UnseenCall(model.name, model.span_id, model.start_ns, until))
    return tuple(unseen)


def handed_over(runs: list[Run]) -> None:
    """Forget the unseen calls of ``runs`` (top-level, in start order) that asked last in their
    run when a later run of the same trace starts after them: the agent handed the call over."""
    for index, run in enumerate(runs):
        later = [r.start_ns for r in runs[index + 1:] if r.trace_id == run.trace_id]
        if not later:
            continue
        for member in run.walk():
            if member.unseen_calls:
                member.unseen_calls = tuple(
                    u for u in member.unseen_calls if u.until_ns is not None or not any(start >= u.start_ns for start in later)
                )


def _carries_out(record: SpanRecord, model: SpanRecord, until: int | None) -> bool:
    """Whether ``record`` starts while ``model``'s calls were being carried out (from its start
    to the next model call's) and ran or named one: a tool execution, a member run, a request."""
    if record is model or record.start_ns < model.start_ns or (until is not None and record.start_ns >= until):
        return False
    return record.role in (Role.TOOL, Role.AGENT_RUN) or bool(record.requests)
