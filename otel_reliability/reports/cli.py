"""``otel-reliability report``: a five-part report of stored or exported verdicts.

``register(subparsers)`` adds the command to the main parser (it sets ``run`` to a
function ``(args) -> exit code``, the main CLI's convention). Sources, any mix:

- a results store the processor or the receiver wrote (SQLite, ``.jsonl``, or a
  ``postgresql://`` URL);
- a JSON document from ``eval --format json`` or ``GET /api/v1/results``.

``--baseline SOURCE`` adds a sixth part: these verdicts compared with earlier ones (as
``compare`` shows them; the exit code stays the report's).

Exit codes: 0 every run passed, 1 some run failed or was not evaluated (the report is
written all the same; one line on standard error says so), 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from otel_reliability.backend_args import add_backend_arguments, judged_pull
from otel_reliability.expectations import ExpectationError, load_expectations
from otel_reliability.output_file import OutputError, write_output
from otel_reliability.progress import progress_bar
from otel_reliability.reports import format_for, render, verdict_report
from otel_reliability.reports.compare import compare
from otel_reliability.reports.inputs import LoadedResult, load_pulled, load_result_set, source_label
from otel_reliability.sources.backends import is_backend_url
from otel_reliability.stores.spec import default_store
from otel_reliability.results import RunResult

__all__ = ["register", "load_results"]

PROGRESS_FROM_BYTES = 8 * 1024 * 1024  # smaller stores are read and reported in a blink: no bar


def register(subparsers: Any) -> argparse.ArgumentParser:
    report = subparsers.add_parser(
        "report",
        help="five-part report (Markdown or HTML) of verdicts from a results store or an eval JSON document",
        description="Render verdicts as the BFCL article's five-part report, one group per expectation.",
        epilog="exit codes: 0 every run passed; 1 a run failed or was not evaluated (the report is "
        "written all the same, and one line on standard error says how many); 2 bad input",
    )
    report.add_argument("sources", nargs="*", metavar="SOURCE",
                        help="results store (SQLite, .jsonl or postgresql:// URL) or JSON from 'eval --format json' / GET /api/v1/results, "
                        "or a tracing backend (jaeger://, phoenix://) whose traces are judged with --expectations "
                        "(none given, nor --store: $OTEL_RELIABILITY_STORE or otel-reliability.db)")
    report.add_argument("--store", action="append", default=[], metavar="PATH|URL",
                        help="a results store to report on, as the other commands take it; repeatable, beside any SOURCE")
    report.add_argument("--output", metavar="FILE", help="write here (.html/.htm for HTML) instead of standard output")
    report.add_argument("--format", choices=("markdown", "html"), help="default: from --output's name, else markdown")
    report.add_argument("--expectations", action="append", default=[], metavar="FILE",
                        help="the expectation files that judged the runs (and judge a backend's traces), to show what was expected")
    report.add_argument("--agent", metavar="NAME", help="agent name for the overview (default: the agents in the runs)")
    report.add_argument("--threshold", type=float, default=0.8, help="pass rate below which an expectation is called out")
    report.add_argument("--baseline", metavar="SOURCE",
                        help="earlier verdicts (a store or eval JSON) to compare with: adds the comparison as a sixth part")
    add_backend_arguments(report)
    report.set_defaults(run=_report)
    return report


def load_results(source: str | Path) -> list[RunResult]:
    """Every verdict in a results store or an ``eval --format json`` document (``ValueError``
    naming the source when it holds none this project can read)."""
    return [loaded.result for loaded in load_result_set(source)]


def _size(sources: list[str]) -> int:
    """Bytes in the source files (a PostgreSQL URL or a missing file counts none)."""
    return sum(Path(source).stat().st_size for source in sources if Path(source).is_file())


def _result_set(source: str, args: argparse.Namespace) -> list[LoadedResult]:
    """A source's verdicts: read from a store or document, or judged from a backend's traces."""
    if is_backend_url(source):
        return load_pulled(source, lambda url: judged_pull(url, args, args.expectations))
    return load_result_set(source)


def _report(args: argparse.Namespace) -> int:
    args.sources = [*args.sources, *args.store] or [default_store()]
    fmt = args.format or (format_for(args.output) if args.output else "markdown")
    steps = len(args.sources) + 1  # each source read, then the report built
    baseline: list[LoadedResult] = []
    with progress_bar("Reading verdicts", steps, minimum=1 if _size(args.sources) >= PROGRESS_FROM_BYTES else steps + 1) as advance:
        try:
            loaded: list[LoadedResult] = []
            for source in args.sources:
                loaded += _result_set(source, args)
                advance(1)
            if args.baseline is not None:
                baseline = _result_set(args.baseline, args)
            expectations = load_expectations(args.expectations)
        except (ValueError, ExpectationError) as exc:
            print(f"otel-reliability: {exc}", file=sys.stderr)
            return 2
        results = [item.result for item in loaded]
        report = verdict_report(results, agent=args.agent, expectations=expectations, threshold=args.threshold)
        if args.baseline is not None:
            report.comparison = compare(
                baseline, loaded, baseline_source=source_label(args.baseline),
                candidate_source=", ".join(source_label(source) for source in args.sources),
            )
        text = render(report, fmt)
        advance(1)
    if args.output:
        try:
            write_output(args.output, text)
        except OutputError as exc:
            print(f"otel-reliability: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    unpassed = [r for r in results if not r.passed]
    if not unpassed:
        return 0
    failed = sum(1 for r in unpassed if r.failed)
    # A CI log shows why the step failed even when the report went to a file nobody opened yet.
    print(
        f"otel-reliability: exit 1: {len(unpassed)} of {len(results)} run(s) did not pass "
        f"({failed} failed, {len(unpassed) - failed} not evaluated); the report was written "
        f"{'to ' + args.output if args.output else 'above'}",
        file=sys.stderr,
    )
    return 1
