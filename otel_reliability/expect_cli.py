"""``otel-reliability expect``: an expectation file written from chosen runs.

The runs come from what ``eval`` reads (trace files and directories, ``jaeger://``,
``phoenix://``), read by the same code, or from a results store (a SQLite file,
``sqlite:///…``, ``postgresql://…``). The writing itself is ``expectation_writer``'s;
the file, with its comments, is ``emitters.expectation_yaml``'s.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from .adapters.conventions import use as use_conventions
from .backend_args import add_backend_arguments, pull_inputs, split_inputs
from .conventions_cli import add_conventions_argument
from .emitters.expectation_yaml import expectation_yaml
from .engine.observed import observed_run, observed_runs
from .expectation_writer import ARGUMENT_CHOICES, ObservedRun, write_expectations
from .output_file import write_output
from .reports.inputs import SQLITE_HEADER, ResultSourceError, load_result_set
from .results import rfc3339, trace_hex
from .sources.parallel import FileRecords, read_files
from .version import VERSION

TraceFiles = Callable[[Sequence[str]], tuple[list[Path], set[Path]]]
"""``eval``'s reading of its paths: (the trace files, those found in directories)."""

_STORE_URLS = ("sqlite://", "postgresql://", "postgres://")
_RUNS_LISTED = 100  # the header names this many runs, and counts the rest


class ExpectInputError(ValueError):
    """Nothing to write from; the message says what was read and what to try."""


class NoRunFound(ExpectInputError):
    """The sources hold no agent run at all (``eval``'s exit 4)."""


EXIT_NO_RUN = 4  # as eval: spans, but no agent run recognised in them


def register(commands: argparse._SubParsersAction, trace_files: TraceFiles) -> None:
    expect = commands.add_parser(
        "expect",
        help="write an expectation file from chosen runs (the runs it came from then pass 'eval')",
        description="Write an expectation file from runs that show what right looks like: per agent, the "
        "tool calls every chosen run made cleanly, their arguments, and the budgets observed with a margin. "
        "Errored, refused and pending calls are never expected; a call only some runs made is allowed, not "
        "expected, and a comment says so. Sources are what 'eval' reads, or a results store.",
    )
    expect.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="trace file or directory, jaeger:// or phoenix:// URL, or a results store "
                        "(SQLite file, sqlite:///…, postgresql://…)")
    expect.add_argument("--agent", action="append", default=[], metavar="NAME",
                        help="only the runs of this agent; repeatable (default: every agent, one expectation each)")
    expect.add_argument("--run-id", action="append", default=[], metavar="HEX",
                        help="only this run: its trace id or its run span id, in hex; repeatable")
    expect.add_argument("--ordered", action="store_true",
                        help="also expect the order of the clean calls (in_order), calls of one model turn as a parallel group")
    expect.add_argument("--arguments", choices=ARGUMENT_CHOICES, default="subset",
                        help="exact: every argument, no others; subset: every argument, others allowed; "
                        "names: tool names only (default %(default)s)")
    expect.add_argument("--margin", type=float, default=0.5, metavar="FRACTION",
                        help="budgets are the largest observed value times 1 + FRACTION, rounded up (default %(default)s)")
    expect.add_argument("--output", metavar="FILE", help="write the file here instead of standard output")
    add_conventions_argument(expect)
    add_backend_arguments(expect)
    expect.set_defaults(run=lambda args: _expect(args, trace_files))


def _expect(args: argparse.Namespace, trace_files: TraceFiles) -> int:
    if args.margin < 0:
        print(f"otel-reliability: --margin must be 0 or more, got {args.margin}", file=sys.stderr)
        return 2
    use_conventions(args.conventions)
    try:
        observed, sources = _observed(args.sources, args, trace_files)
        chosen = _chosen(observed, args.agent, args.run_id)
    except (ExpectInputError, ResultSourceError) as exc:
        print(f"otel-reliability: {exc}", file=sys.stderr)
        return EXIT_NO_RUN if isinstance(exc, NoRunFound) else 2
    written = write_expectations([run for run, _ in chosen], args.arguments, args.ordered, args.margin)
    header = [
        f"Written by otel-reliability expect {VERSION} on {rfc3339(time.time_ns() // 10**9 * 10**9)}",
        f"from {len(chosen)} run{'s' if len(chosen) != 1 else ''} of {', '.join(sources)}:",
        *(f"  run {run.run_id} ({run.agent}) in trace {trace} of {source}" for run, (trace, source) in chosen[:_RUNS_LISTED]),
        *([f"  and {len(chosen) - _RUNS_LISTED} more"] if len(chosen) > _RUNS_LISTED else []),
        "Check it before committing it: it expects what these runs did, right or wrong.",
    ]
    text = expectation_yaml(written, header)
    if args.output:
        write_output(args.output, text)
        print(f"otel-reliability: wrote {len(written)} expectation(s) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


Located = tuple[str, str]  # (trace id in hex, source)


def _observed(
    sources: Sequence[str], args: argparse.Namespace, trace_files: TraceFiles
) -> tuple[list[tuple[ObservedRun, Located]], list[str]]:
    stores = [source for source in sources if _is_store(source)]
    file_inputs, urls = split_inputs([source for source in sources if source not in stores])
    observed: list[tuple[ObservedRun, Located]] = []
    for store in stores:
        observed += [(observed_run(loaded.result), (trace_hex(loaded.result.trace_id), store))
                     for loaded in load_result_set(store)]
    files: list[FileRecords] = []
    if file_inputs:
        paths, skippable = trace_files(file_inputs)
        files = read_files(paths, skippable=skippable)
    files += [records for _, records in pull_inputs(urls, args)]
    for file in files:
        if file.skipped is not None:
            print(f"otel-reliability: skipped, not a trace file: {file.skipped}", file=sys.stderr)
    observed += _judged(files)
    return observed, list(sources)


def _is_store(source: str) -> bool:
    if source.startswith(_STORE_URLS):
        return True
    path = Path(source)
    if not path.is_file():
        return False
    with open(path, "rb") as file:
        return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def _judged(files: Sequence[FileRecords]) -> list[tuple[ObservedRun, Located]]:
    """Every run in the files, as ``eval`` finds it, and the file that holds its trace."""
    source_of: dict[int, str] = {}
    for file in files:
        for record in file.records:
            source_of.setdefault(record.trace_id, str(file.path))
    records = [record for file in files for record in file.records]
    found = observed_runs(records, [event for file in files for event in file.events])
    return [(run, (trace_hex(result.trace_id), source_of.get(result.trace_id, "?"))) for run, result in found]


def _chosen(observed: list[tuple[ObservedRun, Located]], agents: Sequence[str], run_ids: Sequence[str]) -> list[tuple[ObservedRun, Located]]:
    if not observed:
        raise NoRunFound("no agent run found in the sources, nothing to write from: see how their spans were read "
                         "with 'otel-reliability inspect SOURCE'")
    for text in run_ids:
        if not re.fullmatch(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}", text):
            raise ExpectInputError(f"--run-id {text!r}: expected a trace id (32 hex digits) or a run span id (16)")
    wanted_ids = {text.lower() for text in run_ids}
    chosen = [
        (run, located) for run, located in observed
        if (not agents or run.agent in agents) and (not wanted_ids or run.run_id in wanted_ids or located[0] in wanted_ids)
    ]
    if not chosen:
        seen = sorted({run.agent for run, _ in observed})
        raise ExpectInputError(
            f"none of the {len(observed)} run(s) found is of the agent(s) and run id(s) asked for; "
            f"agents found: {', '.join(seen)}"
        )
    return chosen
