"""How today's engine reads a captured corpus: its chain per scenario beside the truth's.

For every ``<scenario>.truth.json`` in the given fixture folders, run
``otel-reliability eval <scenario>.json --format json`` and print one Markdown row:
scenario | truth chain | engine chain | right? | difference. A chain is the ordered
``agent:tool:outcome`` of every attempt (the engine's runs concatenated in the order it
reports them). The difference column is mechanical (what is missing, extra or different);
NOTES.md says why. Run with the repository's own virtual environment:

    .venv/bin/python tests/capture/google_adk/baseline.py tests/fixtures/corpus/google_adk ...
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

CLI = Path(sys.executable).with_name("otel-reliability")


def truth_chain(truth: dict) -> list[str]:
    return [f"{e['agent']}:{e['name']}:{e['outcome']}" for e in sorted(truth["tool_executions"], key=lambda e: e["seq"])]


def engine_chain(trace: Path) -> list[str]:
    done = subprocess.run([str(CLI), "eval", str(trace), "--format", "json"], capture_output=True, text=True)
    if not done.stdout.strip():
        return [f"(eval failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode})"]
    report = json.loads(done.stdout)
    return [f"{a.get('agent')}:{a.get('tool')}:{a.get('outcome')}" for run in report["results"] for a in run.get("chain", [])]


def difference(truth: list[str], engine: list[str]) -> str:
    if truth == engine:
        return ""
    if Counter(truth) == Counter(engine):
        return "same attempts, other order"
    missing = list((Counter(truth) - Counter(engine)).elements())
    extra = list((Counter(engine) - Counter(truth)).elements())
    parts = []
    if missing:
        parts.append("missing " + ", ".join(missing))
    if extra:
        parts.append("extra " + ", ".join(extra))
    return "; ".join(parts)


def main(folders: list[str]) -> None:
    for folder in map(Path, folders):
        print(f"\n#### {folder.name}\n")
        print("| scenario | truth chain | engine chain | right? | difference |")
        print("| --- | --- | --- | --- | --- |")
        for truth_file in sorted(folder.glob("*.truth.json")):
            scenario = truth_file.name.removesuffix(".truth.json")
            truth = truth_chain(json.loads(truth_file.read_text()))
            engine = engine_chain(folder / f"{scenario}.json")
            right = "yes" if truth == engine else "no"
            print(f"| {scenario} | {' → '.join(truth)} | {' → '.join(engine) or '(none)'} | {right} | {difference(truth, engine)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
