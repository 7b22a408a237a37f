"""``otel-reliability conventions``: every tracing convention the reader uses now, what a span
must carry for each to read it, and where each came from; and the ``--conventions`` option
that ``eval``, ``inspect`` and this command share.

Two kinds: convention files (a user's first, in the order given, then the shipped ones), and
the profiles, which add what one instrumentation's or framework's spans mean beyond what they say.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from .adapters import profiles
from .adapters.conventions import ENVIRONMENT_VARIABLE, SHIPPED, in_force, paths_from, use
from .jsontext import encode_document

__all__ = ["add_conventions_argument", "register", "listing"]


def add_conventions_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--conventions", action="append", default=paths_from(os.environ), metavar="FILE",
        help="a convention file of your own tracing SDK (docs/conventions.md), tried before the shipped ones; "
        f"repeatable (default: ${ENVIRONMENT_VARIABLE}, comma-separated)",
    )


def register(commands: Any) -> None:
    command = commands.add_parser(
        "conventions",
        help="list the tracing conventions the reader uses, what marks each, and where each came from",
        description="Every tracing convention in force, in the order they are tried: convention files "
        "(yours, given with --conventions, then those shipped); and the profiles that add what an "
        "instrumentation's spans mean. A convention "
        "file that is not valid exits 2 naming the file and the field.",
    )
    add_conventions_argument(command)
    command.add_argument("--format", choices=("table", "json"), default="table",
                         help="table for a terminal (default), json for scripts")
    command.set_defaults(run=_run)


def listing() -> list[dict[str, Any]]:
    """The conventions and profiles in force, each with its kind, selector and source."""
    rows: list[dict[str, Any]] = [
        {"name": origin.convention.name, "kind": "convention file", "found by": origin.found_by, "source": origin.source}
        for origin in in_force()
    ]
    rows += [
        {"name": profile.name, "kind": "profile",
         "found by": [*(f"attribute {k}" for k in profile.select.any_attribute), *(f"span name {n}" for n in profile.select.any_span_name)],
         "source": SHIPPED}
        for profile in profiles.load()
    ]
    return rows


def _run(args: argparse.Namespace) -> int:
    use(args.conventions)
    rows = listing()
    if args.format == "json":
        sys.stdout.write(encode_document({"conventions": rows}) + "\n")
        return 0
    table = Table(title="Conventions in force, in the order they are tried")
    table.add_column("Name", no_wrap=True)
    table.add_column("Kind", no_wrap=True)
    table.add_column("Found by", overflow="fold", ratio=3)
    table.add_column("Source", overflow="fold", ratio=1)
    for row in rows:
        table.add_row(row["name"], row["kind"], "\n".join(row["found by"]), row["source"])
    Console().print(table)
    return 0
