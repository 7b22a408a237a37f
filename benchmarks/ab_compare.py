"""Interleaved A/B of one benchmark in two checkouts: which stages got faster or slower.

Run: ``python benchmarks/ab_compare.py --base DIR [--rounds N] [--wall] SCRIPT [ARGS...]``
e.g. ``python benchmarks/ab_compare.py --base ../base receiver_stages.py --requests 20 --rounds 3``

``SCRIPT`` (a file of ``benchmarks/``) runs alternately from ``--base`` and from this
checkout, each run a fresh process importing its own checkout's package, the order
swapped every round so that both see the same drifts of a shared machine's load. Every
line of its output that ends in a number (``  to_record   3.57``) is a figure; the table
gives each figure's median over rounds for both, and ours / base.

On a loaded machine wall time counts the time other processes ran. By default each run's
``time.perf_counter`` is replaced by ``time.thread_time`` before the script starts, so a
single-threaded stage timer (``receiver_stages.py``) measures the CPU its own thread spent
(``--wall`` keeps wall time; do not replace the clock of a script whose timed region
waits for other threads or processes).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
_FIGURE = re.compile(r"^\s*(\S.*?)\s+(-?\d+(?:\.\d+)?)\s*$")
_RUNNER = (
    "import runpy, sys, time\n"
    "if sys.argv[1] == 'cpu': time.perf_counter = time.thread_time\n"
    "script = sys.argv[2]; sys.argv = sys.argv[2:]\n"
    "runpy.run_path(script, run_name='__main__')\n"
)


def run_once(checkout: Path, script: str, args: list[str], clock: str) -> dict[str, float]:
    """The figures one run of ``script`` from ``checkout`` prints, by label."""
    path = checkout / "benchmarks" / script
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, clock, str(path), *args],
        cwd=checkout, env=env, capture_output=True, text=True, check=True,
    )
    figures = {}
    for line in done.stdout.splitlines():
        match = _FIGURE.match(line)
        if match:
            figures[match.group(1)] = float(match.group(2))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", required=True, type=Path, help="the other checkout (its benchmarks/SCRIPT runs)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wall", action="store_true", help="keep the scripts' wall clock")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    clock = "wall" if options.wall else "cpu"
    sides = {"base": options.base.resolve(), "ours": HERE}
    runs: dict[str, list[dict[str, float]]] = {"base": [], "ours": []}
    for round_no in range(options.rounds):
        order = ("base", "ours") if round_no % 2 == 0 else ("ours", "base")
        for side in order:
            runs[side].append(run_once(sides[side], options.script, options.args, clock))
    labels = [label for label in runs["ours"][0] if all(label in r for r in runs["base"] + runs["ours"])]
    print(f"{options.script} {' '.join(options.args)}: median of {options.rounds} interleaved runs each "
          f"({'CPU time of the timing thread' if clock == 'cpu' else 'wall time'})")
    print(f"  {'figure':<24} {'base':>9} {'ours':>9} {'ours/base':>10}")
    for label in labels:
        base = statistics.median(r[label] for r in runs["base"])
        ours = statistics.median(r[label] for r in runs["ours"])
        ratio = f"{ours / base:10.3f}" if base else f"{'-':>10}"
        print(f"  {label:<24} {base:9.2f} {ours:9.2f} {ratio}")


if __name__ == "__main__":
    main()
