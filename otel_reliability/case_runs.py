"""Judging an eval set (``eval_sets``): each case's runs against its expectation, for
``eval --cases`` and the pytest plugin's ``reliability_case``.

A case's runs are those of its ``trace`` files, of the trace its ``trace_id`` names and of
the traces whose run span names it (``reliability.expect.case``), among the other inputs.
A case with none is *missing*, with the reason, never skipped.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from .backend_args import pull_inputs, split_inputs
from .engine import Engine, judge_all_at_end
from .eval_sets import CASE_ATTRIBUTE, EvalCase, load_eval_set
from .results import RunResult, trace_hex
from .sources.parallel import FileRecords, read_files

TraceFiles = Callable[[Sequence[str]], tuple[list[Path], set[Path]]]
WriteReport = Callable[[list[RunResult], str, "str | None"], None]


@dataclass(slots=True)
class CaseOutcome:
    case: EvalCase
    results: list[RunResult] = field(default_factory=list)
    missing: str | None = None  # why no run of the case was found

    @property
    def status(self) -> str:
        if self.missing is not None:
            return "MISSING"
        if any(result.verdict.failed for result in self.results):
            return "FAILED"
        return "PASSED" if all(result.passed for result in self.results) else "NOT_EVALUATED"


def judge_cases(cases: Sequence[EvalCase], base: Path, inputs: Sequence[FileRecords] = ()) -> list[CaseOutcome]:
    """Each case judged over its runs; ``base`` is the folder its ``trace`` paths are relative to."""
    named: dict[str, set[int]] = {}
    for file in inputs:
        for record in file.records:
            case_id = record.attributes.get(CASE_ATTRIBUTE) if record.attributes else None
            if isinstance(case_id, str):
                named.setdefault(case_id, set()).add(record.trace_id)
    return [_judge(case, base, inputs, named.get(case.id, set())) for case in cases]


def _judge(case: EvalCase, base: Path, inputs: Sequence[FileRecords], named: set[int]) -> CaseOutcome:
    paths = [base / trace for trace in case.trace]
    absent = [path for path in paths if not path.is_file()]
    if absent:
        return CaseOutcome(case, missing=f"trace file {absent[0]} not found")
    own = read_files(paths) if paths else []
    held = {record.trace_id for file in own for record in file.records}
    wanted = set(named) | ({case.trace_number} if case.trace_number is not None else set())
    chosen = [*own, *(_only(file, wanted - held) for file in inputs)]
    source_of: dict[int, str] = {}
    for file in chosen:
        for record in file.records:
            source_of.setdefault(record.trace_id, str(file.path))
    records = [record for file in chosen for record in file.records]
    judgements, _ = judge_all_at_end(Engine([case.expectation]), records, [event for file in chosen for event in file.events])
    results = [judgement.result for judgement in judgements]
    for result in results:
        result.source = source_of.get(result.trace_id)
    if results:
        return CaseOutcome(case, results)
    if case.trace_number is not None and case.trace_number not in source_of:
        return CaseOutcome(case, missing=f"trace {trace_hex(case.trace_number)} is not among the inputs")
    if records:
        return CaseOutcome(case, missing=f"no agent run in its trace ({', '.join(map(str, paths)) or 'the inputs'})")
    return CaseOutcome(case, missing=f"no trace: it names no trace file or trace id, and no run span names it with {CASE_ATTRIBUTE}")


def _only(file: FileRecords, trace_ids: set[int]) -> FileRecords:
    return FileRecords(
        file.path,
        [record for record in file.records if record.trace_id in trace_ids],
        [event for event in file.events if event.trace_id in trace_ids],
    )


def run_eval_set(args: argparse.Namespace, trace_files: TraceFiles, write_report: WriteReport) -> int:
    """``eval --cases FILE [PATH…]``: every case judged, the runs reported as ``eval`` reports them,
    each missing case said on stderr. Exit 2 when a case is missing, else as ``eval``."""
    cases, base = load_eval_set(args.cases)
    file_inputs, urls = split_inputs(args.paths)
    inputs: list[FileRecords] = []
    if file_inputs:
        paths, skippable = trace_files(file_inputs)
        inputs = read_files(paths, skippable=skippable, max_decompressed_bytes=args.max_decompressed_mib << 20)
    inputs += [records for _, records in pull_inputs(urls, args)]
    outcomes = judge_cases(cases, base, inputs)
    write_report([result for outcome in outcomes for result in outcome.results], args.format, args.output)
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if outcome.missing is not None:
            print(f"otel-reliability: case {outcome.case.id}: missing: {outcome.missing}", file=sys.stderr)
    summary = ", ".join(f"{counts.get(status, 0)} {status.lower().replace('_', ' ')}"
                        for status in ("PASSED", "FAILED", "NOT_EVALUATED", "MISSING"))
    print(f"otel-reliability: {len(outcomes)} case(s) of {args.cases}: {summary}", file=sys.stderr)
    if counts.get("MISSING"):
        return 2
    if counts.get("FAILED"):
        return 1
    return 0 if counts.get("PASSED", 0) == len(outcomes) else 3
