"""Expectations written from observed runs (``otel-reliability expect``, ``pytest --reliability-update``).
Pure: runs in, ``Expectation`` models out, each with the notes that say what was left out and why.

Per agent, from every run chosen for it:

- ``expected_tool_calls``: the tools with a clean call in *every* run. A tool called cleanly in
  only some runs, and a tool whose calls all errored, were refused, stayed pending or may have
  been refused or failed (``Attempt.could_be``), is never
  expected: it is allowed (``allowed_tools`` with ``allow_additional_tool_calls``) when the
  runs attempted it, so the runs written from still pass, and said in a note.
- arguments (``exact`` or ``subset``: every argument as observed; ``names``: none): for each
  expected tool, the argument sets of its clean calls that every run made. A tool with a
  clean call whose arguments the spans did not carry gets no argument check.
- ``fail_on``: each of error, refused and pending that no run showed.
- budgets: the largest observed model calls, tokens, duration and repeats, times
  ``1 + margin``, rounded up — each only when every run measured it (a budget the spans
  cannot measure would leave the run not evaluated).
- ``ordered``: ``expected_chain`` (``order: in_order``) of the clean calls, calls asked for in
  one model turn (no model call started between them) as one parallel group; from several
  runs, the steps all of them took in that order.

>>> from otel_reliability.model import OK, Attempt, Usage
>>> run = ObservedRun("t1", "calc", [Attempt("multiply", {"a": 10}, OK, "calc", ("calc",))], Usage(model_calls=2))
>>> [written] = write_expectations([run], margin=0.5)
>>> written.expectation.expected_tool_calls, written.expectation.max_model_calls
(['multiply'], 3)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from otel_reliability.expectations import ChainStep, Expectation, FailOn, Match
from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Usage

ArgumentsWritten = Literal["exact", "subset", "names"]
ARGUMENT_CHOICES: tuple[ArgumentsWritten, ...] = ("exact", "subset", "names")
_NOT_CLEAN: tuple[FailOn, ...] = (ERROR, REFUSED, PENDING)  # type: ignore[assignment]


@dataclass(slots=True)
class ObservedRun:
    """One run to write from: its id (for the notes), agent, attempts in start order and usage.

    ``turn_starts``: the start times of the model calls of its trace, when known; calls with
    none started between them were asked for in one turn (a parallel group).
    """

    run_id: str
    agent: str
    chain: list[Attempt]
    usage: Usage | None
    turn_starts: tuple[int, ...] | None = None


@dataclass(slots=True)
class WrittenExpectation:
    expectation: Expectation
    runs: list[str]  # the ids of the runs it was written from
    notes: list[str] = field(default_factory=list)  # what was left out or loosened, and why


def write_expectations(
    runs: Sequence[ObservedRun],
    arguments: ArgumentsWritten = "subset",
    ordered: bool = False,
    margin: float = 0.5,
    duration: bool = True,
) -> list[WrittenExpectation]:
    """One expectation per agent (in the order the agents first appear), from all its runs.
    ``duration=False`` writes no ``max_duration_ms`` (a snapshot in a test suite must not fail on a slow machine)."""
    if margin < 0:
        raise ValueError(f"margin must be 0 or more, got {margin}")
    by_agent: dict[str, list[ObservedRun]] = {}
    for run in runs:
        by_agent.setdefault(run.agent, []).append(run)
    return [_write(agent, group, arguments, ordered, margin, duration) for agent, group in by_agent.items()]


def _write(
    agent: str, runs: list[ObservedRun], arguments: ArgumentsWritten, ordered: bool, margin: float, duration: bool
) -> WrittenExpectation:
    notes: list[str] = []
    fields: dict[str, Any] = {"name": agent, "match": Match(agent=agent)}
    clean_by_run = [_first_seen(a.tool for a in run.chain if _clean(a)) for run in runs]
    shared = [tool for tool in clean_by_run[0] if all(tool in clean for clean in clean_by_run[1:])]
    fields["expected_tool_calls"] = shared
    attempted = _first_seen(a.tool for run in runs for a in run.chain if a.tool)
    others = [tool for tool in attempted if tool not in shared]
    if others:
        fields["allow_additional_tool_calls"] = True
        fields["allowed_tools"] = attempted
        for tool in others:
            notes.append(f"{tool}: {_why_not_expected(tool, runs, clean_by_run)}; allowed, not expected")
    if arguments != "names":
        specs = _argument_specs(shared, runs, notes)
        if specs:
            fields["expected_tool_call_arguments"] = specs
        if arguments == "exact":
            fields["argument_match"] = "exact"
    # an outcome the spans cannot rule out counts as seen: failing on it would leave the runs undecided
    seen_outcomes = {o for run in runs for a in run.chain if a.tool for o in (a.outcome, a.could_be) if o}
    fields["fail_on"] = [outcome for outcome in _NOT_CLEAN if outcome not in seen_outcomes]
    for outcome in _NOT_CLEAN:
        if outcome in seen_outcomes:
            notes.append(f"not failing on {outcome} calls: the runs written from had some")
    unknown = _first_seen(a.tool for run in runs for a in run.chain if a.tool and not a.outcome_known)
    if unknown:
        notes.append(f"the spans do not record whether {', '.join(unknown)} ran: the checks on them will not be evaluated")
    fields.update(_budgets([run.usage for run in runs], [run.chain for run in runs], margin, notes, duration))
    if ordered:
        chain = _common_chain(runs, notes)
        if chain:
            fields["expected_chain"] = chain
            fields["order"] = "in_order"
    return WrittenExpectation(Expectation(**fields), [run.run_id for run in runs], notes)


def _clean(attempt: Attempt) -> bool:
    """A call the spans say ran cleanly: ``ok``, with no other outcome left open (one that may have
    been refused cannot be expected without leaving the run it came from undecided)."""
    return bool(attempt.tool) and attempt.outcome == OK and attempt.could_be is None


def _outcome(attempt: Attempt) -> str:
    return attempt.outcome if attempt.could_be is None else f"{attempt.outcome} or {attempt.could_be}"


def _first_seen(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


def _why_not_expected(tool: str, runs: list[ObservedRun], clean_by_run: list[list[str]]) -> str:
    without = [run.run_id for run, clean in zip(runs, clean_by_run, strict=True) if tool not in clean]
    outcomes = sorted({_outcome(a) for run in runs for a in run.chain if a.tool == tool and not _clean(a)})
    if len(without) == len(runs):
        return f"no clean call in any run (only {', '.join(outcomes)})"
    return f"no clean call in {len(without)} of {len(runs)} runs ({', '.join(without)})"


def _canonical(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _argument_specs(tools: list[str], runs: list[ObservedRun], notes: list[str]) -> dict[str, Any]:
    specs: dict[str, Any] = {}
    for tool in tools:
        calls = [[a for a in run.chain if a.tool == tool and a.outcome == OK] for run in runs]
        if any(not a.arguments_captured for per_run in calls for a in per_run):
            notes.append(f"{tool}: no argument check, a clean call's arguments were not captured")
            continue
        per_run = [{_canonical(a.arguments): a.arguments for a in run_calls} for run_calls in calls]
        common = [arguments for key, arguments in per_run[0].items() if all(key in other for other in per_run[1:])]
        left_out = sum(len(seen) for seen in per_run) - len(common) * len(per_run)
        if left_out:
            notes.append(f"{tool}: {left_out} argument set(s) not made in every run left out")
        if common:
            specs[tool] = common[0] if len(common) == 1 else common
    return specs


def _budgets(
    usages: list[Usage | None], chains: list[list[Attempt]], margin: float, notes: list[str], duration: bool
) -> dict[str, Any]:
    if any(usage is None for usage in usages):
        notes.append("no budgets: a run's usage is unknown")
        return {}
    measured = [usage for usage in usages if usage is not None]
    out: dict[str, Any] = {}

    def widen(value: float) -> int:
        return math.ceil(value * (1 + margin))

    if all(usage.model_calls > 0 for usage in measured):
        out["max_model_calls"] = widen(max(usage.model_calls for usage in measured))
    else:
        notes.append("no max_model_calls: a run's spans record no model call")
    if all(usage.total_tokens is not None and usage.untokened_model_calls == 0 for usage in measured):
        out["max_total_tokens"] = widen(max(usage.total_tokens or 0 for usage in measured))
    else:
        notes.append("no max_total_tokens: a model call's span carries no token usage")
    durations = [usage.duration_ms for usage in measured]
    if not duration:
        pass
    elif all(measured_ms is not None for measured_ms in durations):
        out["max_duration_ms"] = widen(max(measured_ms or 0.0 for measured_ms in durations))
    else:
        notes.append("no max_duration_ms: a run's span has no times")
    repeats = [usage.max_repeated_calls for usage in measured]
    captured = all(a.arguments_captured for chain in chains for a in chain if a.tool)
    if captured and all(repeat is not None for repeat in repeats):
        out["max_repeated_calls"] = max(1, widen(max(repeat or 0 for repeat in repeats)))
    else:
        notes.append("no max_repeated_calls: a call's arguments were not captured")
    return out


Step = tuple[str, ...]  # one step as written: a name alone, or a parallel group (sorted)


def _steps(run: ObservedRun) -> list[Step]:
    """The run's clean calls in start order, those asked for in one model turn as one step."""
    steps: list[list[str]] = []
    previous: int | None = None
    for attempt in sorted((a for a in run.chain if _clean(a)), key=lambda a: a.start_ns):
        same_turn = (
            previous is not None
            and run.turn_starts is not None
            and not any(previous < start <= attempt.start_ns for start in run.turn_starts)
        )
        if same_turn:
            steps[-1].append(attempt.tool)
        else:
            steps.append([attempt.tool])
        previous = attempt.start_ns
    return [tuple(sorted(step)) for step in steps]


def _common_chain(runs: list[ObservedRun], notes: list[str]) -> list[ChainStep]:
    if any(sum(1 for a in run.chain if a.tool and a.start_ns == 0) >= 2 for run in runs):
        notes.append("no expected_chain: the calls carry no start times to order them by")
        return []
    common = _steps(runs[0])
    differing = []
    for run in runs[1:]:
        steps = _steps(run)
        if steps != common:
            common = _longest_common(common, steps)
            differing.append(run.run_id)
    if differing:
        notes.append(f"expected_chain: only the steps every run took in this order ({len(differing)} run(s) took others)")
    if not common:
        notes.append("no expected_chain: the runs share no clean call in one order")
    return [step[0] if len(step) == 1 else list(step) for step in common]


def _longest_common(first: list[Step], second: list[Step]) -> list[Step]:
    """The longest common subsequence of two step lists.

    >>> _longest_common([("a",), ("b",), ("c",)], [("a",), ("c",)])
    [('a',), ('c',)]
    """
    lengths = [[0] * (len(second) + 1) for _ in range(len(first) + 1)]
    for i in range(len(first) - 1, -1, -1):
        for j in range(len(second) - 1, -1, -1):
            lengths[i][j] = lengths[i + 1][j + 1] + 1 if first[i] == second[j] else max(lengths[i + 1][j], lengths[i][j + 1])
    out: list[Step] = []
    i = j = 0
    while i < len(first) and j < len(second):
        if first[i] == second[j]:
            out.append(first[i])
            i, j = i + 1, j + 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    return out
