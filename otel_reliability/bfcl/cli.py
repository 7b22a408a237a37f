"""``otel-reliability bfcl judge`` and ``bfcl score`` (SPEC §10).

``register(subparsers)`` adds the ``bfcl`` command to the main parser; each
subcommand sets ``run`` to a function ``(args) -> exit code``, the main CLI's
convention. Exit codes: 0 every case/sample valid, 1 some invalid, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO, Any, Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from otel_reliability.bfcl.dataset import DatasetError
from otel_reliability.bfcl.report import scored_what
from otel_reliability.bfcl.score import BfclScore, agent_of, read_results, score_results
from otel_reliability.matcher.bfcl.judge import COMPAT_MODES, Case, judge
from otel_reliability.progress import progress_bar

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT = 0, 1, 2
PROGRESS_FROM_SAMPLES = 100  # fewer samples are judged in a blink: no bar

__all__ = ["register", "main"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``bfcl judge`` and ``bfcl score`` to an ``add_subparsers()`` object; returns the ``bfcl`` parser."""
    bfcl = subparsers.add_parser(
        "bfcl",
        help="judge function calls the way the Berkeley Function Calling Leaderboard does",
        description="BFCL-style judging: the AST checker's rules (official or strict), "
        "and scoring of bfcl-eval result files with a five-part report.",
    )
    commands = bfcl.add_subparsers(dest="bfcl_command", required=True)

    judge_parser = commands.add_parser(
        "judge",
        help="judge decoded calls read as JSON Lines (exit 0 all valid, 1 some invalid, 2 bad input)",
        description="Each input line is {id, category, language, function, possible_answer, candidate, "
        "underscore_to_dot?}; each output line is {id, valid, error_type}.",
    )
    judge_parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="input (default: standard input)")
    judge_parser.add_argument(
        "--compat", choices=COMPAT_MODES, default="official",
        help="official: the official checker's verdicts and error types, quirks included (default); "
        "strict: quirks fixed, each documented in otel_reliability.matcher.bfcl.judge",
    )
    judge_parser.add_argument("--output", metavar="FILE", help="write the verdicts here instead of standard output")
    judge_parser.set_defaults(run=_judge)

    score_parser = commands.add_parser(
        "score",
        help="score bfcl-eval result files against the dataset and write the report",
        description="Judge every entry of BFCL result files (BFCL_v4_<category>_result.json: JSON Lines "
        "of {id, result}) against bfcl-eval's dataset, print per-category accuracy, write reports.",
    )
    score_parser.add_argument("results", nargs="+", metavar="RESULT_FILE", help="result file (JSON Lines)")
    score_parser.add_argument(
        "--data", metavar="DIR",
        help="dataset directory (default: the data of the installed bfcl-eval package)",
    )
    score_parser.add_argument("--compat", choices=COMPAT_MODES, default="official",
                              help="how each case is judged, as for 'bfcl judge' (default %(default)s)")
    score_parser.add_argument(
        "--underscore-to-dot", action="store_true",
        help="the model wrote dotted function names with underscores (as BFCL expects of e.g. OpenAI models)",
    )
    score_parser.add_argument("--agent", metavar="NAME", help="agent or model name for the report (default: from the path)")
    score_parser.add_argument(
        "--report", action="append", default=[], metavar="FILE",
        help="write the five-part report here: .html/.htm for HTML, anything else Markdown; repeatable",
    )
    score_parser.add_argument("--scores", metavar="FILE", help="also write every verdict as JSON")
    score_parser.add_argument("--threshold", type=float, default=0.8, help="accuracy below which a category is called out")
    score_parser.set_defaults(run=_score)
    return bfcl


def main(argv: list[str] | None = None) -> int:
    """Run ``bfcl …`` on its own (the main CLI wires ``register`` instead)."""
    parser = argparse.ArgumentParser(prog="otel-reliability")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.run(args)


def _fail(message: str) -> int:
    print(f"otel-reliability: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _judge(args: argparse.Namespace) -> int:
    try:
        source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    except OSError as exc:
        return _fail(f"{args.file}: cannot read: {exc.strerror or exc}")
    name = "standard input" if args.file == "-" else args.file
    try:
        lines = _judged_lines(source, name, args.compat)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as out:
                all_valid = _write(lines, out)
        else:
            all_valid = _write(lines, sys.stdout)
    except _BadLine as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{args.output}: cannot write: {exc.strerror or exc}")
    finally:
        if source is not sys.stdin:
            source.close()
    return EXIT_VALID if all_valid else EXIT_INVALID


class _BadLine(ValueError):
    pass


def _judged_lines(source: IO[str], name: str, compat: str) -> Iterable[tuple[bool, str]]:
    for number, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            case = Case.from_json(json.loads(line))
        except json.JSONDecodeError as exc:
            raise _BadLine(f"{name}:{number}: not JSON: {exc.msg}") from exc
        except (ValueError, TypeError) as exc:
            raise _BadLine(f"{name}:{number}: {exc}") from exc
        judgement = judge(case, compat)  # type: ignore[arg-type]
        yield judgement.valid, json.dumps(judgement.to_json(case.id), ensure_ascii=False)


def _write(lines: Iterable[tuple[bool, str]], out: IO[str]) -> bool:
    all_valid = True
    for valid, text in lines:
        all_valid &= valid
        out.write(text + "\n")
    return all_valid


def _score(args: argparse.Namespace) -> int:
    from otel_reliability.bfcl.report import bfcl_report
    from otel_reliability.reports import format_for, render

    try:
        results = [item for path in args.results for item in read_results(path)]
        with progress_bar("Judging BFCL samples", len(results), minimum=PROGRESS_FROM_SAMPLES) as advance:
            score = score_results(
                results, data=args.data, compat=args.compat, underscore_to_dot=args.underscore_to_dot,
                agent=args.agent or agent_of(args.results), progress=advance,
            )
    except DatasetError as exc:
        return _fail(str(exc))
    Console().print(score_table(score))
    report = bfcl_report(score, threshold=args.threshold)
    try:
        for path in args.report:
            Path(path).write_text(render(report, format_for(path)), encoding="utf-8")
            print(f"report written to {path}")
        if args.scores:
            Path(args.scores).write_text(json.dumps(score.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        return _fail(f"cannot write: {exc.strerror or exc} ({exc.filename})")
    return EXIT_VALID if score.correct == score.total else EXIT_INVALID


def score_table(score: BfclScore) -> Table:
    """Accuracy per category, then overall, titled by what was scored.

    >>> score_table(BfclScore("gpt-x", "official", [])).title
    'BFCL score: gpt-x (compat official)'
    """
    table = Table(title=f"BFCL score: {scored_what(score)} (compat {score.compat})", header_style="bold magenta")
    table.add_column("Category")
    table.add_column("Accuracy", justify="right")
    table.add_column("Correct", justify="right")
    for category in score.categories:
        table.add_row(Text(category.category), f"{category.accuracy:.2%}", f"{category.correct}/{category.total}")
    table.add_section()
    table.add_row("overall", f"{score.accuracy:.2%}" if score.total else "-", f"{score.correct}/{score.total}")
    return table


if __name__ == "__main__":
    sys.exit(main())
