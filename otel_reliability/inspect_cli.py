"""``otel-reliability inspect PATH…`` on the command line: the files, directories and backends
read, ``inspect``'s view of them printed as a table or JSON, damaged files named (exit 2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from rich.console import Console

from .adapters.conventions import use as use_conventions
from .backend_args import add_backend_arguments, pull_inputs, split_inputs
from .conventions_cli import add_conventions_argument
from .inspect import BackendView, inspect_spans, render
from .jsontext import encode_document
from .sources import TraceInputError, read_telemetry
from .sources.decoded import Decoded, NotATrace

TRACE_SUFFIXES = (".json", ".jsonl", ".pb", ".binpb", ".gz")  # as ``eval`` reads a directory


def register(commands: argparse._SubParsersAction) -> None:
    inspect = commands.add_parser(
        "inspect",
        help="show what the engine sees in trace files: conventions, runs, pairing, what is missing",
        description="For each span, the convention detected and what it was read as; for each agent "
        "run, its tool-call attempts and how each was paired with the model's request; and what "
        "is missing for judging, with the setting that would fix it.",
    )
    inspect.add_argument("paths", nargs="+", metavar="PATH", help="trace file or directory, or a backend URL (below)")
    add_conventions_argument(inspect)
    inspect.add_argument("--format", choices=("table", "json"), default="table",
                         help="table for a terminal (default; narrower than 120 columns, ids are cut), json for every field")
    add_backend_arguments(inspect)
    inspect.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    use_conventions(args.conventions)
    file_inputs, backend_urls = split_inputs(args.paths)
    telemetry, damaged = _read_all(*_files(file_inputs))
    pulled = [found for found, _ in pull_inputs(backend_urls, args)]
    inspection = inspect_spans(
        [s for t in telemetry for s in t.spans] + [s for found in pulled for s in found.spans],
        [log for t in telemetry for log in t.logs],
    )
    inspection.backends = [BackendView(p.source, p.traces, len(p.spans), p.limits, p.notes) for p in pulled]
    if args.format == "json":
        sys.stdout.write(encode_document(inspection.to_json()) + "\n")
    else:
        render(inspection, Console())
    if damaged:  # as eval: the rest shown, then the damaged files named, bad input
        print(f"otel-reliability: {len(damaged)} damaged trace file(s) skipped, the rest shown (exit 2): "
              f"{', '.join(map(str, damaged))}", file=sys.stderr)
        return 2
    return 0


def _read_all(files: list[Path], in_directories: set[Path]) -> tuple[list[Decoded], list[Path]]:
    """Each file read, and the damaged ones of a directory; a file of a directory that holds no
    trace is skipped with a warning, a file named on its own that cannot be read is an error."""
    telemetry, damaged = [], []
    for path in files:
        try:
            telemetry.append(read_telemetry(path))
        except TraceInputError as exc:
            if path not in in_directories:
                raise
            what = "not a trace file" if isinstance(exc, NotATrace) else "a damaged trace file"
            print(f"otel-reliability: skipped, {what}: {exc}", file=sys.stderr)
            damaged += [] if isinstance(exc, NotATrace) else [path]
    return telemetry, damaged


def _files(paths: Sequence[str]) -> tuple[list[Path], set[Path]]:
    """The files to read, and those of them found in directories."""
    files: list[Path] = []
    in_directories: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
            files.extend(found)
            in_directories.update(found)
        elif path.is_file():
            files.append(path)
        else:
            raise TraceInputError(f"{path}: no such file or directory")
    return files, in_directories
