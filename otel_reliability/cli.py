"""``otel-reliability``: evaluate trace files, run the demo.

Exit codes (SPEC §10): 0 every run passed, 1 a run failed, 2 bad input (and, with
``--strict-expectations``, an expectation that matched no run), 3 no run failed but some
could not be evaluated (the spans lack what a check needs), 4 no agent run came out of the
input, whatever the reason (``--allow-empty``: 0).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections import Counter
from importlib.metadata import version
from pathlib import Path
from typing import Mapping, Sequence

from rich.console import Console

from .adapters.conventions import ConventionError
from .adapters.conventions import use as use_conventions
from .backend_args import add_backend_arguments, pull_inputs, split_inputs
from .conventions_cli import add_conventions_argument
from .conventions_cli import register as register_conventions
from .emitters.markdown import results_markdown
from .emitters.table import render_results
from .engine import Engine, Judgement, judge_all_at_end
from .engine.unmatched import why_unmatched
from .expectations import Expectation, ExpectationError
from .jsontext import encode_document
from .output_file import OutputError, write_output
from .bfcl.cli import register as register_bfcl
from .case_runs import run_eval_set
from .expect_cli import register as register_expect
from .inspect_cli import register as register_inspect
from .receiver.cli import register as register_serve
from .reports.cli import register as register_report
from .reports.compare_cli import register as register_compare
from .reputation.cli import register as register_reputation
from .progress import progress_bar
from .matcher import explain
from .model import Role, SpanRecord
from .results import RunResult
from .session_results import SessionResult, results_document_with_sessions
from .sources import TraceInputError
from .sources.files import DEFAULT_MAX_DECOMPRESSED
from .sources.parallel import read_files
from .stores.opening import ready_folder
from .stores.spec import StoreSpecError, default_store, parse_store_spec

EXIT_PASSED, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_NOT_EVALUATED, EXIT_NO_RUN = 0, 1, 2, 3, 4
TRACE_SUFFIXES = (".json", ".jsonl", ".pb", ".binpb", ".gz")
PROGRESS_FROM_FILES = 20  # fewer files read in a blink: no bar


class UsageError(Exception):
    """Bad command-line input; the message is printed as it is."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, TraceInputError, ExpectationError, OutputError, StoreSpecError, ConventionError) as exc:
        print(f"otel-reliability: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="otel-reliability",
        description="Judge whether AI agents call their tools reliably, from their OpenTelemetry traces.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('otel-reliability')}")
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser(
        "eval",
        help="evaluate trace files (exit 0 all passed, 1 a run failed, 2 bad input, 3 some not evaluable)",
        description="Evaluate every agent run in trace files: OTLP/JSON, JSON Lines of export "
        "requests (the Collector's file exporter), spans as the SDK's ConsoleSpanExporter prints them "
        "(an app's stdout saved to a file), or binary OTLP protobuf. OTLP/JSON log "
        "exports (resourceLogs, e.g. <name>.logs.json beside <name>.json) are read too: GenAI "
        "event log records join their spans. A directory "
        f"stands for the trace files in it ({', '.join(TRACE_SUFFIXES)}); those that are not "
        "traces are skipped with a warning, those that are damaged are named and make the "
        "exit code 2 once the rest are judged (--skip-bad: a warning).",
    )
    evaluate.add_argument("paths", nargs="*", metavar="PATH", help="trace file or directory, or a backend URL (below)")
    evaluate.add_argument(
        "--expectations", action="append", default=[], metavar="FILE",
        help="expectation file (YAML, TOML or JSON); repeatable, the first matching rule wins",
    )
    evaluate.add_argument(
        "--cases", metavar="FILE",
        help="an eval set (docs/written-expectations.md): judge each case's runs (its trace files, its trace id among "
        "the PATHs, the runs whose span names it) against its expectation; a case with none is missing (exit 2)",
    )
    add_conventions_argument(evaluate)
    evaluate.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                          help="table for a terminal (default), json for scripts (the results contract), markdown for a pull request")
    evaluate.add_argument("--output", metavar="FILE", help="write the report here instead of standard output")
    evaluate.add_argument(
        "--max-decompressed-mib", type=int, default=DEFAULT_MAX_DECOMPRESSED >> 20, metavar="MIB",
        help="largest a gzip trace file may inflate to (default %(default)s): past it, exit 2",
    )
    evaluate.add_argument(
        "--allow-empty", action="store_true",
        help="exit 0, not 4, when the input yields no agent run (no spans, an empty pull, or spans of no run)",
    )
    evaluate.add_argument(
        "--skip-bad", action="store_true",
        help="a damaged trace file in a directory is skipped with a warning, not bad input (exit 2)",
    )
    add_backend_arguments(evaluate)
    evaluate.add_argument(
        "--strict-expectations", action="store_true",
        help="exit 2, not just warn, when a loaded expectation matched none of the input's runs",
    )
    evaluate.epilog = (
        "exit codes: 0 every run passed; 1 a run (or session) failed; 2 bad input (a file that "
        "cannot be read, in a directory too unless --skip-bad; with --strict-expectations: an "
        "expectation matched no run); 3 none failed but some were not evaluated; 4 no agent "
        "run came out of the input, whatever the reason (--allow-empty: 0): no spans, an empty pull, or spans of no recognised run"
    )
    evaluate.set_defaults(run=_eval)

    demo = commands.add_parser(
        "demo",
        help="run scripted agents through the span processor and show their verdicts (no API key, no network)",
        description="Run four scripted pydantic-ai agents (no API key, no network) through ReliabilitySpanProcessor, "
        "as an instrumented app would, print their verdicts and keep them, with the agents' standings, in the "
        "store that report and reputation read by default. One agent fails on purpose.",
    )
    demo.add_argument(
        "--store", default=default_store(), metavar="PATH|URL",
        help="store for the verdicts and standings (default: $OTEL_RELIABILITY_STORE or %(default)s; "
        ".jsonl keeps verdicts only; sqlite:///…, postgresql://…)",
    )
    demo.add_argument("--mkdir", action="store_true", help="create the store's missing folders")
    demo.add_argument(
        "--degrade", action="store_true",
        help="a worse version of the agents: the calculator adds instead of multiplying, the divider keeps "
        "dividing by zero (to try 'compare' against a normal run)",
    )
    demo.set_defaults(run=_demo)
    register_serve(commands)
    register_reputation(commands)
    register_bfcl(commands)
    register_report(commands)
    register_compare(commands)
    register_inspect(commands)
    register_conventions(commands)
    register_expect(commands, _trace_files)
    return parser


def _what_was_seen(records: Sequence[SpanRecord], paths: Sequence[str]) -> str:
    """One line on an input that yielded no run: that it held no span, or what its spans were
    read as and what to run next."""
    if not records:
        return (
            f"otel-reliability: no span read from {' '.join(paths)}: nothing was judged "
            "(exit 4; --allow-empty for inputs that may hold none)"
        )
    roles = Counter(record.role for record in records)
    seen = ", ".join(f"{roles[role]} {label}" for role, label in _ROLE_LABELS if roles[role])
    return (
        f"otel-reliability: {len(records)} span(s) read ({seen or 'none of a known convention'}), no agent run "
        f"recognised: see how each span was read with `otel-reliability inspect {' '.join(paths)}` "
        "(exit 4; --allow-empty for inputs that may hold none)"
    )


_ROLE_LABELS = ((Role.TOOL, "tool executions"), (Role.MODEL, "model calls"), (Role.OTHER, "other spans"))


def _first_files(files: list, runs: set[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """(trace id, span id) of each run → the first file that holds its span (a run span, or the
    span a run no span marks was found from)."""
    found: dict[tuple[int, int], str] = {}
    for file in files:
        for record in file.records:
            key = (record.trace_id, record.span_id)
            if key in runs and key not in found:
                found[key] = str(file.path)
    return found


def _trace_files(paths: Sequence[str]) -> tuple[list[Path], set[Path]]:
    """The files to read, and those of them found in directories (skipped if not traces)."""
    files: list[Path] = []
    found_in_directories: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
            if not found:
                raise UsageError(f"{path}: directory holds no trace files ({', '.join(TRACE_SUFFIXES)})")
            files.extend(found)
            found_in_directories.update(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise UsageError(f"{path}: not a trace file: a device, pipe or socket (give a file, a directory or a backend URL)")
        else:
            raise UsageError(f"{path}: no such file or directory")
    return files, found_in_directories


def _eval(args: argparse.Namespace) -> int:
    use_conventions(args.conventions)
    if args.cases:
        return run_eval_set(args, _trace_files, _write_report)
    if not args.paths:
        raise UsageError("eval: give a trace file, a directory or a backend URL (or --cases FILE)")
    engine = Engine(args.expectations)
    if args.max_decompressed_mib < 1:
        raise UsageError(f"--max-decompressed-mib must be at least 1, got {args.max_decompressed_mib}")
    file_inputs, backend_urls = split_inputs(args.paths)
    paths, skippable = _trace_files(file_inputs)
    with progress_bar("Reading trace files", len(paths), minimum=PROGRESS_FROM_FILES) as advance:
        files = read_files(
            paths, skippable=skippable, progress=advance, max_decompressed_bytes=args.max_decompressed_mib << 20
        )
    files += [records for _, records in pull_inputs(backend_urls, args)]  # the same records a file gives
    for file in files:
        if file.skipped is not None:
            what = "a damaged trace file" if file.damaged else "not a trace file"
            print(f"otel-reliability: skipped, {what}: {file.skipped}", file=sys.stderr)
    # GenAI event records from log exports join their spans, whichever file holds them.
    records = [record for file in files for record in file.records]
    events = [event for file in files for event in file.events]
    judgements, sessions = judge_all_at_end(engine, records, events)
    results = [j.result for j in judgements]
    sources = _first_files(files, {(r.trace_id, r.run_span_id) for r in results})
    for result in results:
        result.source = sources.get((result.trace_id, result.run_span_id))
    if not results:
        print("otel-reliability: no agent runs found in the input", file=sys.stderr)
        if not args.allow_empty:
            print(_what_was_seen(records, args.paths), file=sys.stderr)
    if any(e.scope == "session" for e in engine.expectations):
        _say_unsessioned(judgements, sessions)
    if judgements and _unmatched_said(engine, judgements, strict=args.strict_expectations):
        return EXIT_BAD_INPUT
    skipped = {
        "damaged": [str(file.path) for file in files if file.damaged],
        "not_traces": [str(file.path) for file in files if file.skipped is not None and not file.damaged],
    }
    _write_report(results, args.format, args.output, sessions, {e.name: e for e in engine.expectations}, skipped)
    # A session judged FAILED fails the input as a failed run does.
    verdicts: list[RunResult | SessionResult] = [*results, *sessions]
    damaged = skipped["damaged"]
    if damaged and not args.skip_bad:
        print(
            f"otel-reliability: {len(damaged)} damaged trace file(s) skipped, the rest judged "
            f"(exit 2; --skip-bad to judge without them): {', '.join(damaged)}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if not results and not args.allow_empty:
        return EXIT_NO_RUN  # broken instrumentation or an empty pull must not pass a CI gate as "nothing failed"
    if any(v.failed for v in verdicts):
        return EXIT_FAILED
    return EXIT_PASSED if all(v.passed for v in verdicts) else EXIT_NOT_EVALUATED


def _unmatched_said(engine: Engine, judgements: Sequence[Judgement], strict: bool) -> bool:
    """Warn of each loaded expectation that judged none of the runs (a typo in its ``match``
    must not let the runs it meant pass under ``default``); True when that is an error."""
    by_name = {e.name: e for e in engine.expectations}
    runs = [j.run for j in judgements]
    judged_by = [j.result.expectation for j in judgements]
    unmatched = engine.use.unmatched()
    for name in unmatched:
        print(
            f"otel-reliability: {'error' if strict else 'warning'}: {why_unmatched(by_name[name], runs, judged_by)}",
            file=sys.stderr,
        )
    return strict and bool(unmatched)


def _say_unsessioned(judgements: Sequence[Judgement], sessions: Sequence[SessionResult]) -> None:
    """Session expectations are loaded: say which runs no session judged, and why, on stderr."""
    without = sum(1 for j in judgements if j.run.session_id is None)
    if without:
        print(
            f"otel-reliability: {without} run(s) name no conversation (gen_ai.conversation.id or session.id): "
            "judged alone, in no session",
            file=sys.stderr,
        )
    for session in sessions:
        print(
            f"otel-reliability: session {session.session_id}: {session.verdict.eval_status} "
            f"({session.expectation}, {len(session.runs)} run(s)): {explain(session.verdict)}",
            file=sys.stderr,
        )


def _write_report(
    results: list[RunResult], fmt: str, output: str | None, sessions: Sequence[SessionResult] = (),
    expectations: Mapping[str, Expectation] | None = None,
    skipped_files: Mapping[str, list[str]] | None = None,
) -> None:
    if fmt == "json":
        document = results_document_with_sessions(results, sessions)
        if skipped_files and any(skipped_files.values()):  # only then: a clean read's summary is as it always was
            document["summary"]["skipped_files"] = dict(skipped_files)
        text = encode_document(document) + "\n"
    elif fmt == "markdown":
        text = results_markdown(results)
    else:
        console = Console(file=io.StringIO(), record=True, width=140) if output else Console()
        render_results(results, console, expectations)
        if output is None:
            return
        text = console.export_text()
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)


def _demo(args: argparse.Namespace) -> int:
    try:
        from .demo import run_demo
    except ImportError as exc:
        raise UsageError(f"the demo needs pydantic-ai: pip install 'otel-reliability[demo]' ({exc})") from exc
    ready_folder(args.store, parse_store_spec(args.store), "results", args.mkdir)
    return run_demo(args.store, degrade=args.degrade)


if __name__ == "__main__":
    sys.exit(main())
