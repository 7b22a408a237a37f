"""``otel-reliability compare BASELINE CANDIDATE``: what changed between two sets of verdicts.

Each side is a results store (a SQLite file, ``.jsonl``, ``sqlite:///…``,
``postgresql://…``) or a JSON document from ``eval --format json``; which one is read from
the file itself. ``compare --store X --version-a A --version-b B`` takes the two sides from
one store instead: its verdicts of agent version A (the baseline) and of version B.
``register(subparsers)`` adds the command (``run`` returns the exit code).

Exit codes: 0 no pass rate fell more than ``--max-drop``, 1 one did (overall or for an
expectation both sides judged), 2 bad input (a side that cannot be read or holds no
verdicts, a ``--max-drop`` outside 0..1, an ``--output`` that cannot be written).
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any

from rich.console import Console

from otel_reliability.backend_args import add_backend_arguments, judged_pull
from otel_reliability.jsontext import encode_document
from otel_reliability.output_file import OutputError, write_output
from otel_reliability.reports.compare import Comparison, compare
from otel_reliability.reports.compare_render import comparison_document, comparison_markdown, render_comparison
from otel_reliability.reports.inputs import ResultSourceError, load_pulled, load_result_set, source_label
from otel_reliability.sources.backends import is_backend_url

__all__ = ["register"]

EXIT_SAME, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: Any) -> argparse.ArgumentParser:
    command = subparsers.add_parser(
        "compare",
        help="compare two sets of verdicts (exit 1 when a pass rate fell more than --max-drop, 2 bad input)",
        description="Per expectation, per agent and overall: runs, pass rate, mean score and trajectory F1 "
        "before → after, and the runs that newly fail with their reasons. Runs are paired by expectation, "
        "agent and position (by trace file as well when both sides are eval documents of same-named files).",
        epilog="exit codes: 0 no pass rate fell more than --max-drop; 1 one did (one line on standard error "
        "names each pass rate that fell, before → after); 2 bad input",
    )
    source_help = (
        "results store (SQLite, .jsonl, sqlite:///…, postgresql://…) or JSON from 'eval --format json', "
        "or a tracing backend (jaeger://, phoenix://) whose traces are judged with --expectations"
    )
    command.add_argument("baseline", metavar="BASELINE", nargs="?", help=source_help)
    command.add_argument("candidate", metavar="CANDIDATE", nargs="?", help=source_help)
    command.add_argument("--store", metavar="STORE",
                         help="one results store (or eval document) whose verdicts of --version-a and --version-b "
                         "are the two sides, instead of BASELINE and CANDIDATE")
    command.add_argument("--version-a", metavar="VERSION", help="the baseline: the agent version (agent_version) of --store's verdicts")
    command.add_argument("--version-b", metavar="VERSION", help="the candidate: the agent version of --store's verdicts")
    command.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                         help="table for a terminal (default), json for scripts, markdown for a pull request")
    command.add_argument(
        "--max-drop", type=float, default=0.0, metavar="RATE",
        help="largest pass-rate fall tolerated, overall and per expectation, as a fraction "
        "(0.05 = 5 points; default %(default)s: any fall exits 1)",
    )
    command.add_argument("--output", metavar="FILE", help="write the comparison here instead of standard output")
    command.add_argument("--expectations", action="append", default=[], metavar="FILE",
                         help="expectation file that judges the traces of a backend side (as eval's); repeatable")
    add_backend_arguments(command)
    command.set_defaults(run=_compare)
    return command


def _sides(args: argparse.Namespace) -> list[tuple[str, str, str | None, str]] | str:
    """Each side as (role, source, agent version or None, label), or what is wrong with the arguments."""
    versions = (args.version_a, args.version_b)
    if args.store is None:
        if any(v is not None for v in versions):
            return "--version-a and --version-b compare the verdicts of one --store; give --store"
        if args.baseline is None or args.candidate is None:
            return "give BASELINE and CANDIDATE, or --store STORE --version-a A --version-b B"
        return [(role, source, None, source_label(source)) for role, source in (("BASELINE", args.baseline), ("CANDIDATE", args.candidate))]
    if args.baseline is not None:
        return "--store takes the place of BASELINE and CANDIDATE; give one or the other"
    if any(v is None or not v.strip() for v in versions):
        return "--store compares two agent versions of its verdicts; give both --version-a and --version-b"
    if is_backend_url(args.store):
        return f"--store {args.store}: a tracing backend holds no verdicts; give a results store"
    label = source_label(args.store)
    return [(f"--version-{side}", args.store, version, f"{label} @ {version}") for side, version in zip("ab", versions, strict=True)]


def _compare(args: argparse.Namespace) -> int:
    if not 0.0 <= args.max_drop <= 1.0:
        return _bad(f"--max-drop is a pass-rate fall between 0 and 1 (0.05 = 5 points), got {args.max_drop}")
    chosen = _sides(args)
    if isinstance(chosen, str):
        return _bad(chosen)
    sides = []
    for role, source, version, _label in chosen:
        try:
            if is_backend_url(source):
                loaded = load_pulled(source, lambda url: judged_pull(url, args, args.expectations))
            else:
                loaded = load_result_set(source, version)
        except ResultSourceError as exc:
            return _bad(f"{role} {exc}" if version is None else f"--store {exc}")  # a missing store is --store's fault
        if not loaded and version is None:
            return _bad(f"{role} {source_label(source)}: holds no verdicts; nothing to compare")
        if not loaded:
            return _bad(f"{role} {version}: {source_label(source)} holds no verdicts of that agent version; {_versions_held(source)}")
        sides.append(loaded)
    comparison = compare(sides[0], sides[1], max_drop=args.max_drop, baseline_source=chosen[0][3], candidate_source=chosen[1][3])
    text: str | None
    if args.format == "json":
        text = encode_document(comparison_document(comparison)) + "\n"
    elif args.format == "markdown":
        text = comparison_markdown(comparison)
    else:
        console = Console(file=io.StringIO(), record=True, width=100) if args.output else None
        render_comparison(comparison, console)
        text = console.export_text() if console is not None else None
    try:
        if args.output:
            write_output(args.output, text or "")
        elif text is not None:
            sys.stdout.write(text)
    except OutputError as exc:
        return _bad(str(exc))
    if not comparison.regressed:
        return EXIT_SAME
    print(f"otel-reliability: exit 1: {_fall(comparison)}", file=sys.stderr)
    return EXIT_REGRESSED


def _fall(comparison: Comparison) -> str:
    """Why ``compare`` exits 1, in one line: each pass rate that fell past --max-drop."""
    fell = [g for g in (comparison.overall, *comparison.expectations) if g.regressed]
    parts = [
        f"{'overall' if g is comparison.overall else repr(g.name)} "
        f"{g.before.pass_rate:.0%} → {g.after.pass_rate:.0%}"
        for g in fell
        if g.before.pass_rate is not None and g.after.pass_rate is not None
    ]
    return (
        f"pass rate fell by more than --max-drop {comparison.max_drop:g}: {'; '.join(parts)} "
        f"({len(comparison.newly_failing)} run(s) newly failing)"
    )


def _versions_held(source: str) -> str:
    """Which agent versions a store's verdicts carry, for the user who named one it lacks."""
    versions = sorted({version for item in load_result_set(source) if (version := item.result.agent_version) is not None})
    if not versions:
        return "it records no agent version (service.version or gen_ai.agent.version on the spans names one)"
    return f"it holds {', '.join(map(repr, versions))}"


def _bad(message: str) -> int:
    print(f"otel-reliability: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
