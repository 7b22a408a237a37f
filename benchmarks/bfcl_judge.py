"""Judged cases per second: otel-reliability's BFCL judge against the official ``bfcl-eval`` checker.

Run: ``python benchmarks/bfcl_judge.py [--mutations N] [--rounds R] [--seed S]``

Cases come from the installed ``bfcl-eval`` dataset: every entry of every supported
single-turn category, with two valid answers and ``--mutations`` mutated ones each
(``otel_reliability.bfcl.cases``). Both judges get the same pre-built, already-decoded
cases in the same process: ours is ``judge(case, "official")``; theirs is what
``bfcl evaluate`` runs per decoded entry — the relevance rule, the output-shape check
and ``ast_checker`` (``otel_reliability.bfcl.official``). Rounds alternate which judge
goes first; the median round is reported. Every verdict (valid, error_type) must be
identical — the script fails otherwise — and the target is ours ≥ 2× theirs.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from typing import Callable, Sequence

from otel_reliability.bfcl.cases import dataset_cases
from otel_reliability.bfcl.dataset import CATEGORIES, load_category
from otel_reliability.matcher.bfcl.judge import Case, Judgement, judge
from otel_reliability.bfcl.official import official_judge

TARGET = 2.0


def timed(check: Callable[[Case], Judgement], cases: Sequence[Case]) -> float:
    start = time.perf_counter()
    for case in cases:
        check(case)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=6, help="mutated candidates per dataset entry")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    official = official_judge()
    imported = time.perf_counter() - start
    cases = [case for category in CATEGORIES for _, case in dataset_cases(load_category(category), args.seed, args.mutations)]
    ast_cases = [case for case in cases if "relevance" not in case.category]

    ours = [judge(case) for case in cases]
    theirs = [official(case) for case in cases]
    differing = [(c.id, a.error_type, b.error_type) for c, a, b in zip(cases, ours, theirs)
                 if (a.valid, a.error_type) != (b.valid, b.error_type)]
    valid = sum(j.valid for j in theirs)
    print(f"Python {platform.python_version()} on {platform.machine()}; official checker import {imported:.1f} s")
    print(f"{len(cases)} cases from {len(CATEGORIES)} categories ({valid} valid, {len(cases) - valid} invalid); "
          f"{len(ast_cases)} of them in AST categories")
    print(f"identical verdicts: {len(cases) - len(differing)}/{len(cases)}")
    if differing:
        for row in differing[:20]:
            print("  differs:", row)
        return 1

    ok = True
    for label, subset in (("all cases", cases), ("AST categories only", ast_cases)):
        rounds: dict[str, list[float]] = {"ours": [], "official": []}
        for number in range(args.rounds):
            order = [("ours", judge), ("official", official)]
            for name, check in order if number % 2 == 0 else order[::-1]:
                rounds[name].append(timed(check, subset))
        rate = {name: len(subset) / statistics.median(times) for name, times in rounds.items()}
        ratio = rate["ours"] / rate["official"]
        print(f"{label}: ours {rate['ours']:,.0f} cases/s, official {rate['official']:,.0f} cases/s, "
              f"ratio {ratio:.2f}x (target >= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'})")
        ok &= ratio >= TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
