"""Two sets of verdicts side by side: what changed between a baseline and a candidate.

Per expectation, per agent and overall: runs, pass rate, mean score and mean trajectory
F1 before and after; which runs newly fail (and why), which newly pass, which can no
longer be evaluated (and why), which are on one side only; whether the two sides judged an expectation of the same content (the
``evaluator.expectation_digest`` of each result, when results carry one).

**Pairing runs.** Results carry no case id and no user input, so a run is known across
sides by its expectation (the ``reliability.expect.case`` a run span names is that
expectation), its agent, and its place: the n-th run, by start time, of that expectation
and agent on one side is paired with the n-th on the other. When both sides are ``eval``
documents whose runs all name their file and the sides share file names (``eval
baseline/`` and ``eval candidate/`` over case files of the same names), the file's path
below the side's common directory is part of the key too, so a case missing from one
side shifts no other case's pairing.

**A drop** is the baseline's pass rate minus the candidate's, in rate points (0.75 → 0.70
drops 0.05). A comparison ``regressed`` when, overall or for an expectation both sides
judged, the drop exceeds ``max_drop``; the default 0.0 lets no drop through. Agents'
pass rates are shown, not gated: an agent's runs are the sum of its expectations'.

>>> from otel_reliability.model import Verdict
>>> from otel_reliability.results import RunResult
>>> before = [RunResult(1, 1, "calc", "math", Verdict("PASSED", "math"), 0.0)]
>>> after = [RunResult(2, 1, "calc", "math", Verdict("FAILED", "math", missing_tool_calls=["multiply"], score=0.0), 0.0)]
>>> change = compare_results(before, after)
>>> change.regressed, change.overall.drop, change.newly_failing[0].reasons
(True, 1.0, ['missing: multiply'])
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from otel_reliability.reports.inputs import LoadedResult
from otel_reliability.results import PROBLEM_LISTS, RunResult

__all__ = ["Comparison", "GroupChange", "RunChange", "SideStats", "compare", "compare_results", "reasons"]

DROP_TOLERANCE = 1e-9  # a pass rate of 2/3 on both sides is not a drop of 1e-17


@dataclass(slots=True)
class SideStats:
    """One side's figures for a group of runs; the means are ``None`` when nothing gives one."""

    runs: int = 0
    passed: int = 0
    failed: int = 0
    score_total: float = 0.0
    f1_total: float = 0.0
    f1_runs: int = 0  # runs whose result carries a trajectory F1
    digests: set[str] = field(default_factory=set)  # evaluator.expectation_digest values seen

    def add(self, loaded: LoadedResult) -> None:
        result = loaded.result
        self.runs += 1
        self.passed += result.passed
        self.failed += result.failed
        self.score_total += result.verdict.score
        f1 = trajectory_f1(loaded.record)
        if f1 is not None:
            self.f1_total += f1
            self.f1_runs += 1
        digest = expectation_digest(loaded.record)
        if digest is not None:
            self.digests.add(digest)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    @property
    def mean_score(self) -> float | None:
        return self.score_total / self.runs if self.runs else None

    @property
    def mean_trajectory_f1(self) -> float | None:
        return self.f1_total / self.f1_runs if self.f1_runs else None


@dataclass(slots=True)
class GroupChange:
    """An expectation's, an agent's or all runs' figures before and after."""

    name: str
    before: SideStats
    after: SideStats
    regressed: bool = False  # gated (overall and expectations) and dropped by more than max_drop

    @property
    def drop(self) -> float | None:
        """Baseline pass rate minus candidate pass rate; ``None`` when a side has no runs."""
        before, after = self.before.pass_rate, self.after.pass_rate
        return None if before is None or after is None else before - after

    @property
    def expectation_changed(self) -> bool:
        """Whether both sides carry expectation digests and they differ: the sides judged
        different expectations under one name."""
        return bool(self.before.digests and self.after.digests and self.before.digests != self.after.digests)


@dataclass(slots=True)
class RunChange:
    """A run paired across the sides (or found on one side only) whose verdict matters here."""

    expectation: str
    agent: str
    case: str  # how the pairing knows it: "run 2", or "case_7.json" / "case_7.json run 2"
    baseline: RunResult | None
    candidate: RunResult | None
    reasons: list[str] = field(default_factory=list)  # why the candidate's run did not pass


@dataclass(slots=True)
class Comparison:
    """What ``compare`` found; ``regressed`` decides its exit code."""

    baseline_source: str
    candidate_source: str
    max_drop: float
    pairing: str  # "position" or "file"
    overall: GroupChange
    expectations: list[GroupChange]
    agents: list[GroupChange]
    newly_failing: list[RunChange]
    newly_passing: list[RunChange]
    newly_not_evaluated: list[RunChange]  # judged before, NOT_EVALUATED now: a pass rate can fall without a failure
    only_in_baseline: list[RunChange]
    only_in_candidate: list[RunChange]
    baseline_evaluators: list[str] = field(default_factory=list)  # "name version" of each evaluator seen
    candidate_evaluators: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return self.overall.regressed or any(g.regressed for g in self.expectations)

    @property
    def changed(self) -> bool:
        """Whether anything differs: a figure, a verdict, a run on one side only, an expectation's content."""
        groups = [self.overall, *self.expectations, *self.agents]
        return bool(
            self.newly_failing or self.newly_passing or self.newly_not_evaluated
            or self.only_in_baseline or self.only_in_candidate
            or any(_figures(g.before) != _figures(g.after) or g.expectation_changed for g in groups)
        )


def compare(
    baseline: Sequence[LoadedResult],
    candidate: Sequence[LoadedResult],
    *,
    max_drop: float = 0.0,
    baseline_source: str = "baseline",
    candidate_source: str = "candidate",
) -> Comparison:
    """Compare two loaded result sets (``load_result_set``); see the module for the rules."""
    if not 0.0 <= max_drop <= 1.0:
        raise ValueError(f"max_drop is a pass-rate difference between 0 and 1, got {max_drop}")
    overall = GroupChange("overall", _stats(baseline), _stats(candidate))
    expectations = _groups(baseline, candidate, lambda r: r.expectation)
    agents = _groups(baseline, candidate, lambda r: r.agent)
    for group in [overall, *expectations]:
        group.regressed = group.drop is not None and group.drop > max_drop + DROP_TOLERANCE
    names = _file_names(baseline), _file_names(candidate)
    by_file = names[0] is not None and names[1] is not None and bool(set(names[0].values()) & set(names[1].values()))
    before = _keyed(baseline, names[0] if by_file else None)
    after = _keyed(candidate, names[1] if by_file else None)
    newly_failing, newly_passing, newly_not_evaluated = [], [], []
    for key, old in before.items():
        new = after.get(key)
        if new is None or new.result.verdict.eval_status == old.result.verdict.eval_status:
            continue
        if new.result.failed:
            newly_failing.append(_change(key, old, new))
        elif new.result.passed:
            newly_passing.append(_change(key, old, new))
        else:
            newly_not_evaluated.append(_change(key, old, new))
    return Comparison(
        baseline_source=baseline_source,
        candidate_source=candidate_source,
        max_drop=max_drop,
        pairing="file" if by_file else "position",
        overall=overall,
        expectations=expectations,
        agents=agents,
        newly_failing=newly_failing,
        newly_passing=newly_passing,
        newly_not_evaluated=newly_not_evaluated,
        only_in_baseline=[_change(k, v, None) for k, v in before.items() if k not in after],
        only_in_candidate=[_change(k, None, v) for k, v in after.items() if k not in before],
        baseline_evaluators=_evaluators(baseline),
        candidate_evaluators=_evaluators(candidate),
    )


def compare_results(baseline: Iterable[RunResult], candidate: Iterable[RunResult], **options: Any) -> Comparison:
    """``compare`` for ``RunResult`` objects in hand (their ``to_record()`` as what was read)."""
    return compare(
        [LoadedResult(r, r.to_record()) for r in baseline], [LoadedResult(r, r.to_record()) for r in candidate], **options
    )


def reasons(result: RunResult, record: Mapping[str, Any]) -> list[str]:
    """Why a run failed or was not evaluated, one line per problem as the tables print them;
    the explanation sentence when the result lists none (a document written before the lists were).

    >>> from otel_reliability.model import Verdict
    >>> reasons(RunResult(1, 2, "a", "e", Verdict("FAILED", "e", policy_violations=["2 errors; at most 1"]), 0.0), {})
    ['policy: 2 errors; at most 1']
    """
    lines = [f"{label}: {entry}" for label, name in PROBLEM_LISTS for entry in getattr(result.verdict, name)]
    lines += [f"not evaluated: {reason}" for reason in result.verdict.unevaluated_checks]
    if lines:
        return lines
    explanation = record.get("explanation")
    return [explanation] if isinstance(explanation, str) and explanation else ["reason not recorded"]


def trajectory_f1(record: Mapping[str, Any]) -> float | None:
    """``trajectory.f1`` of a result, when it has one."""
    trajectory = record.get("trajectory")
    f1 = trajectory.get("f1") if isinstance(trajectory, Mapping) else None
    return float(f1) if isinstance(f1, (int, float)) and not isinstance(f1, bool) else None


def expectation_digest(record: Mapping[str, Any]) -> str | None:
    """``evaluator.expectation_digest`` of a result, when it has one."""
    evaluator = record.get("evaluator")
    digest = evaluator.get("expectation_digest") if isinstance(evaluator, Mapping) else None
    return digest if isinstance(digest, str) and digest else None


def _figures(stats: SideStats) -> tuple[Any, ...]:
    return stats.runs, stats.passed, stats.failed, round(stats.score_total, 9), round(stats.f1_total, 9), stats.f1_runs


def _stats(results: Iterable[LoadedResult]) -> SideStats:
    stats = SideStats()
    for loaded in results:
        stats.add(loaded)
    return stats


def _groups(
    baseline: Sequence[LoadedResult], candidate: Sequence[LoadedResult], name_of: Callable[[RunResult], str]
) -> list[GroupChange]:
    """One ``GroupChange`` per name either side has, baseline's names first in order of appearance."""
    groups: dict[str, GroupChange] = {}
    for side, results in (("before", baseline), ("after", candidate)):
        for loaded in results:
            name = name_of(loaded.result)
            group = groups.get(name) or groups.setdefault(name, GroupChange(name, SideStats(), SideStats()))
            getattr(group, side).add(loaded)
    return list(groups.values())


Key = tuple[str, str, str | None, int]  # expectation, agent, file name (file pairing) or None, ordinal


def _file_names(results: Sequence[LoadedResult]) -> dict[str, str] | None:
    """Each run's file as a path below the side's common directory (its name, for a side of
    one file); ``None`` when some run names no file (a store's runs never do)."""
    sources = {loaded.result.source for loaded in results}
    if None in sources or not sources:
        return None
    files = sorted(str(source) for source in sources)
    if len(files) == 1:
        return {files[0]: Path(files[0]).name}
    root = os.path.commonpath(files)
    return {file: os.path.relpath(file, root) for file in files}


def _keyed(results: Sequence[LoadedResult], file_names: dict[str, str] | None) -> dict[Key, LoadedResult]:
    """Each run under its pairing key; runs of one expectation and agent (and file) numbered by start time."""
    ordered = sorted(enumerate(results), key=lambda item: (item[1].result.start_ns, item[0]))
    counts: dict[tuple[str, str, str | None], int] = defaultdict(int)
    keyed: dict[Key, LoadedResult] = {}
    for _, loaded in ordered:
        result = loaded.result
        file_name = None if file_names is None else file_names[str(result.source)]
        group = (result.expectation, result.agent, file_name)
        counts[group] += 1
        keyed[(*group, counts[group])] = loaded
    return keyed


def _case(key: Key) -> str:
    _, _, file_name, ordinal = key
    if file_name is None:
        return f"run {ordinal}"
    return file_name if ordinal == 1 else f"{file_name} run {ordinal}"


def _change(key: Key, old: LoadedResult | None, new: LoadedResult | None) -> RunChange:
    return RunChange(
        expectation=key[0],
        agent=key[1],
        case=_case(key),
        baseline=None if old is None else old.result,
        candidate=None if new is None else new.result,
        reasons=[] if new is None or new.result.passed else reasons(new.result, new.record),
    )


def _evaluators(results: Iterable[LoadedResult]) -> list[str]:
    seen: dict[str, None] = {}
    for loaded in results:
        evaluator = loaded.record.get("evaluator")
        if isinstance(evaluator, Mapping) and evaluator.get("name"):
            seen[f"{evaluator['name']} {evaluator.get('version') or ''}".strip()] = None
    return list(seen)
