"""The command line's backend inputs: ``jaeger://…`` and ``phoenix://…`` beside trace files.

One helper for every command that reads traces (``eval``, ``inspect``, and ``report`` and
``compare``, which judge what they pull with their ``--expectations``): it adds the
options that shape a pull (``--since``/``--until``, ``--service``, ``--operation``,
``--attribute``, ``--trace-id``, ``--limit``, …), tells backend URLs from file paths, and
pulls each URL into the same ``FileRecords`` a trace file gives (its ``path`` the URL),
so what follows does not know where the spans came from.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Sequence

from .adapters import to_record
from .sources.backend_http import (
    DEFAULT_LIMIT,
    DEFAULT_MAX_BYTES,
    DEFAULT_PAGE_SIZE,
    DEFAULT_TIMEOUT_S,
    BackendError,
    BackendQuery,
    Pulled,
)
from .engine import Engine, judge_all_at_end
from .moments import moment_ns
from .results import RunResult
from .sources.backends import names_a_scheme, pull
from .sources.parallel import FileRecords

DEFAULT_LOOKBACK = "24h"


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "tracing backends",
        "an input may be jaeger://HOST:PORT (Jaeger's query API v3) or phoenix://HOST:PORT/PROJECT "
        "(a Phoenix project); these shape what is pulled from it (docs/backends.md)",
    )
    group.add_argument("--since", metavar="WHEN", default=DEFAULT_LOOKBACK,
                       help="traces with a span starting at or after: RFC 3339 time or date, or an age "
                       "such as 90m, 24h, 7d (default %(default)s)")
    group.add_argument("--until", metavar="WHEN", help="and at or before (default: now)")
    group.add_argument("--service", metavar="NAME", help="Jaeger: this service only (default: every service)")
    group.add_argument("--operation", metavar="NAME", help="a span of the trace has this name")
    group.add_argument("--attribute", action="append", default=[], metavar="KEY=VALUE",
                       help="a span of the trace has this attribute (compared as text); repeatable")
    group.add_argument("--trace-id", action="append", default=[], metavar="HEX",
                       help="these traces, instead of a search; repeatable")
    group.add_argument("--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
                       help="at most N traces per backend, the newest (default %(default)s)")
    group.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE, metavar="N",
                       help="traces (Jaeger) or spans (Phoenix) per request (default %(default)s)")
    group.add_argument("--backend-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help="for each request (default %(default)s)")
    group.add_argument("--max-pulled-mib", type=int, default=DEFAULT_MAX_BYTES >> 20, metavar="MIB",
                       help="the answers of one backend, in all (default %(default)s)")


def split_inputs(inputs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(file paths, backend URLs), each in the order given."""
    urls = [text for text in inputs if names_a_scheme(text)]
    return [text for text in inputs if not names_a_scheme(text)], urls


def query_from(args: argparse.Namespace, now_ns: int | None = None) -> BackendQuery:
    """The pull the options ask for; ``BackendError`` naming the option that is wrong."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    until = now_ns if args.until is None else parse_when(args.until, "--until", now_ns)
    since = parse_when(args.since, "--since", now_ns)
    if since > until:
        raise BackendError(f"--since {args.since} is after --until {args.until or 'now'}")
    for option, value in (("--limit", args.limit), ("--page-size", args.page_size), ("--max-pulled-mib", args.max_pulled_mib)):
        if value < 1:
            raise BackendError(f"{option} must be at least 1, got {value}")
    if not args.backend_timeout > 0:
        raise BackendError(f"--backend-timeout must be more than 0 seconds, got {args.backend_timeout}")
    attributes = []
    for item in args.attribute:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise BackendError(f"--attribute {item!r}: expected KEY=VALUE")
        attributes.append((key, value))
    trace_ids = []
    for text in args.trace_id:
        if not re.fullmatch(r"[0-9a-fA-F]{1,32}", text) or int(text, 16) == 0:
            raise BackendError(f"--trace-id {text!r}: expected a trace id of up to 32 hex digits, not all zero")
        trace_ids.append(int(text, 16))
    return BackendQuery(
        since_ns=since, until_ns=until, service=args.service, operation=args.operation,
        attributes=tuple(attributes), trace_ids=tuple(trace_ids), limit=args.limit, page_size=args.page_size,
        timeout_s=args.backend_timeout, max_bytes=args.max_pulled_mib << 20,
    )


def parse_when(text: str, option: str, now_ns: int) -> int:
    """``moments.moment_ns`` for an option: an error names the option.

    >>> parse_when("yesterday", "--since", 0)
    Traceback (most recent call last):
    ...
    otel_reliability.sources.backend_http.BackendError: --since 'yesterday': expected an RFC 3339 time (2026-12-01T10:00:00Z), a date, or an age such as 90m, 24h, 7d
    """
    try:
        return moment_ns(text, now_ns)
    except ValueError as exc:
        raise BackendError(f"{option} {exc}") from None


def pull_inputs(urls: Sequence[str], args: argparse.Namespace) -> list[tuple[Pulled, FileRecords]]:
    """Each backend's pull and its records, as a trace file's would be; what a pull stopped
    short of is said on stderr."""
    if not urls:
        return []
    query = query_from(args)
    pulled = []
    for url in urls:
        found = pull(url, query)
        for note in found.notes:
            print(f"otel-reliability: {url}: {note}", file=sys.stderr)
        pulled.append((found, FileRecords(url, list(map(to_record, found.spans)))))
    return pulled


def judged_pull(url: str, args: argparse.Namespace, expectation_files: Sequence[str]) -> list[RunResult]:
    """The verdicts on the traces pulled from ``url``, judged as ``eval`` judges them (for the
    commands that read verdicts: ``report``, ``compare``); each names ``url`` as its source."""
    [(_, records)] = pull_inputs([url], args)
    judgements, _ = judge_all_at_end(Engine(list(expectation_files)), records.records, records.events)
    results = [judgement.result for judgement in judgements]
    for result in results:
        result.source = url
    return results
