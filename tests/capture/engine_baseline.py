"""How ``otel-reliability eval`` reads a captured corpus today, against the ground truth.

For each ``<scenario>.json`` of a framework folder it runs ``eval --format json`` and
prints a Markdown row: scenario | truth chain | engine chain | right?. A chain is
``agent:tool:outcome`` per attempt, in order (refused calls with their kind, when the
engine reports one). The "why wrong" column is left for a person to fill in from the spans.

    .venv/bin/python tests/capture/engine_baseline.py openai_v2 [more frameworks...]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
EVAL = Path(sys.executable).with_name("otel-reliability")


def truth_chain(truth: dict) -> list[str]:
    steps = []
    for entry in sorted(truth["tool_executions"], key=lambda e: e["seq"]):
        outcome = entry["outcome"] + (f"({entry['refusal_kind']})" if entry["outcome"] == "refused" else "")
        steps.append(f"{entry['agent']}:{entry['name']}:{outcome}")
    return steps


def engine_chain(trace: Path) -> tuple[list[str], int]:
    # eval exits 1 when a run fails its checks: that is a verdict, not an error here
    done = subprocess.run([str(EVAL), "eval", str(trace), "--format", "json"], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"eval {trace.name} failed: {done.stderr}")
    report = json.loads(done.stdout)
    steps = []
    for result in report["results"]:
        for attempt in result.get("chain", []):
            outcome = attempt["outcome"] + (f"({attempt['refusal_kind']})" if attempt.get("refusal_kind") else "")
            steps.append(f"{attempt.get('agent')}:{attempt['tool']}:{outcome}")
    return steps, len(report["results"])


def main(frameworks: list[str]) -> None:
    for framework in frameworks:
        print(f"\n### {framework}\n")
        print("| scenario | truth chain | engine chain (runs) | right? |")
        print("| --- | --- | --- | --- |")
        for trace in sorted((CORPUS / framework).glob("*.json")):
            if trace.name.endswith((".truth.json", ".logs.json")):
                continue
            truth = json.loads(trace.with_suffix(".truth.json").read_text())
            expected = truth_chain(truth)
            got, runs = engine_chain(trace)
            bare = [step.split("(")[0] for step in expected]
            if got == expected:
                verdict = "yes"
            elif got == bare:
                verdict = "yes, but no refusal kind"
            elif Counter(got) in (Counter(expected), Counter(bare)):
                verdict = "order differs"
            else:
                verdict = "**no**"
            print(f"| {trace.stem} | {' → '.join(expected) or '—'} | {' → '.join(got) or '—'} ({runs}) | {verdict} |")


if __name__ == "__main__":
    main(sys.argv[1:])
