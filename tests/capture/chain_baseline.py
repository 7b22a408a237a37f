"""How the engine reads a captured corpus today: its chains beside the truth, one row per scenario.

For every ``<scenario>.json`` in ``tests/fixtures/corpus/<framework>/`` this runs
``otel-reliability eval <file> --format json`` and prints a Markdown table row:

    scenario | truth chain | engine chain | right?

A chain is ``agent:tool:outcome`` per attempt, in order. The truth's comes from its
``tool_executions``; the engine's from every result's ``chain``, results in report order.
"Right" means the same attempts in the same order; "order only" means the same attempts
in another order (parallel calls). Why a wrong row is wrong is for the reader to say.

Run:  .venv/bin/python tests/capture/chain_baseline.py <framework> [--eval PATH-TO-otel-reliability]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"


def truth_chain(truth: dict) -> list[str]:
    return [f"{entry['agent']}:{entry['name']}:{entry['outcome']}" for entry in truth["tool_executions"]]


def engine_chain(trace: Path, eval_command: str) -> list[str]:
    # eval exits 1 when a run fails its expectation; the report is on stdout all the same
    report = subprocess.run([eval_command, "eval", str(trace), "--format", "json"], capture_output=True, text=True)
    if not report.stdout:
        raise SystemExit(f"eval gave no report for {trace}: {report.stderr}")
    results = json.loads(report.stdout)["results"]
    return [f"{step['agent']}:{step['tool']}:{step['outcome']}" for result in results for step in result["chain"]]


def verdict(truth: list[str], engine: list[str]) -> str:
    if truth == engine:
        return "yes"
    if sorted(truth) == sorted(engine):
        return "order only"
    return "no"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework")
    parser.add_argument("--eval", default=str(Path(sys.executable).parent / "otel-reliability"))
    args = parser.parse_args()
    print("| scenario | truth chain | engine chain | right? |")
    print("| --- | --- | --- | --- |")
    for truth_file in sorted((FIXTURES / args.framework).glob("*.truth.json")):
        scenario = truth_file.name.removesuffix(".truth.json")
        truth = truth_chain(json.loads(truth_file.read_text(encoding="utf-8")))
        engine = engine_chain(truth_file.with_name(f"{scenario}.json"), args.eval)
        print(f"| {scenario} | {', '.join(truth)} | {', '.join(engine)} | {verdict(truth, engine)} |")


if __name__ == "__main__":
    main()
