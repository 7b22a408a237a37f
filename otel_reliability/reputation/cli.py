"""``otel-reliability reputation``: every agent's standing, as a table, JSON, or the article's Markdown report.

Exit codes: 0 standings printed (possibly none), 2 bad input (no such store, bad config).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from otel_reliability.output_file import OutputError, write_output
from otel_reliability.reputation.config import ConfigError, load_config
from otel_reliability.reputation.evidence import DIMENSIONS
from otel_reliability.reputation.report import standing_markdown, standings_document, standings_markdown
from otel_reliability.reputation.standing import Standing
from otel_reliability.reputation.stores import open_standings
from otel_reliability.stores.spec import StoreSpecError, default_store, parse_store_spec

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``reputation`` command to the ``otel-reliability`` sub-commands."""
    parser = subparsers.add_parser(
        "reputation",
        help="show each agent's reputation: score, grade and dimensions over its rolling window",
        description="Show each agent's standing over its last N evaluations: the weighted score of its "
        "evidence in four dimensions (sidq, dabt, isnad, adalah) and its grade (Thiqah, Saduq, "
        "Saduq Hadith, Da'if, Matruk).",
    )
    parser.add_argument(
        "--store",
        default=default_store(),
        metavar="PATH|URL",
        help="SQLite file or postgresql:// URL holding the standings (default: $OTEL_RELIABILITY_STORE or %(default)s)",
    )
    parser.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                        help="table for a terminal (default), json for scripts, markdown for a pull request or wiki")
    parser.add_argument("--agent", action="append", default=[], metavar="NAME", help="only this agent; repeatable")
    parser.add_argument("--config", metavar="FILE", help="reputation config (weights, window, missing_dimension)")
    parser.add_argument("--evidence", type=int, default=20, metavar="N", help="evidence lines per agent in Markdown (default 20)")
    parser.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _bad(str(exc))
    try:
        spec = parse_store_spec(args.store, "standings")
    except StoreSpecError as exc:
        return _bad(str(exc))
    if spec.path is not None and not spec.path.is_file():
        return _bad(f"{args.store}: no such store (give the SQLite file or postgresql:// URL the processor or receiver writes)")
    try:
        store = open_standings(args.store, config)
    except StoreSpecError as exc:  # names the spec and the reason already
        return _bad(str(exc))
    except Exception as exc:  # a URL that does not connect, a file that is not SQLite
        return _bad(f"{args.store}: cannot open the reputation store: {exc}")
    try:
        standings = store.standings()
        if args.agent:
            wanted = set(args.agent)
            standings = [s for s in standings if s.agent in wanted]
        if args.format == "json":
            text = json.dumps(standings_document(standings), indent=2, ensure_ascii=False) + "\n"
        elif args.format == "markdown":
            text = standings_markdown(
                standing_markdown(s, store.window(s.agent), evidence_limit=args.evidence) for s in standings
            )
        else:
            console = Console(file=io.StringIO(), record=True, width=140) if args.output else Console()
            if not console.is_terminal and not args.output:
                console = Console(width=140)  # piped: do not squeeze agent names into 80 columns
            console.print(standings_table(standings))
            if args.output is None:
                return EXIT_OK
            text = console.export_text()
    finally:
        store.close()
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            write_output(args.output, text)
        except OutputError as exc:
            return _bad(str(exc))
    return EXIT_OK


def standings_table(standings: list[Standing]) -> Table:
    """A rich table, one row per agent (values as plain text: they come from spans)."""
    table = Table(title="Agent Reputation", header_style="bold magenta")
    for column in ("Agent", "Score", "Grade", *DIMENSIONS, "Window", "Evaluations"):
        table.add_column(column, justify="left" if column in ("Agent", "Grade") else "right", no_wrap=column != "Agent")
    for s in standings:
        dims = ["—" if s.dimensions[d] is None else f"{s.dimensions[d]:.1f}" for d in DIMENSIONS]
        table.add_row(
            Text(s.agent),
            "—" if s.score is None else f"{s.score:.1f}",
            Text(s.grade_label),
            *dims,
            f"{s.evaluations}/{s.window}",
            f"{s.total_evaluations} ({s.passed_evaluations} passed)",
        )
    if not standings:
        table.caption = "no standings yet"
    return table


def _bad(message: str) -> int:
    print(f"otel-reliability: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
