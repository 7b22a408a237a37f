"""Refresh each capture's NOTES.md table of how the engine reads its corpus now.

For every scenario of every corpus folder this judges ``<scenario>.json`` as ``eval`` does
(with ``<scenario>.logs.json`` when the capture wrote one) and writes, per folder, a table

    scenario | truth chain | engine chain | right?

between ``<!-- engine-now: <folder> -->`` markers in the NOTES.md of the capture that made the
folder (``tests/capture/<framework>/``, a mode's folder under its framework's), replacing the
previous table. A chain is ``agent:tool:outcome`` per attempt in order; "right" means the
truth's attempts in the truth's order; a scenario in ``tests/corpus.py`` LIMITS says so, with
its reason. Prints each folder's count of right scenarios.

Run:  .venv/bin/python tests/capture/notes_baseline.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from otel_reliability.engine import Engine  # noqa: E402
from otel_reliability.engine import judge_spans  # noqa: E402
from otel_reliability.sources import read_telemetry  # noqa: E402
from tests.corpus import LIMITS, companion, logs_of, scenario_id, trace_files  # noqa: E402

CAPTURES = ROOT / "tests" / "capture"


def truth_chain(truth: dict) -> list[str]:
    in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
    return [f"{t['agent']}:{t['name']}:{t['outcome']}" for t in in_order]


def engine_chain(trace: Path, truth: dict) -> list[str]:
    """Every run's attempts in order; a resumed run's view of a call it resolves (same call id)
    supersedes the paused run's, as tests/test_corpus_truth.py reads them."""
    logs = logs_of(trace)
    results = judge_spans(Engine(), read_telemetry(trace).spans, read_telemetry(logs).logs if logs else ())
    known = {t.get("tool_call_id") for t in truth["tool_executions"]} - {None}
    steps: dict[object, str] = {}
    for index, attempt in enumerate(a for r in results for a in r.verdict.chain):
        key = attempt.call_id if attempt.call_id in known else index
        steps[key] = f"{attempt.agent}:{attempt.tool}:{attempt.outcome}"
    return list(steps.values())


def capture_of(folder: str) -> Path | None:
    names = [p.name for p in CAPTURES.iterdir() if (p / "NOTES.md").exists()
             and (folder == p.name or folder.startswith(p.name + "_"))]
    return CAPTURES / max(names, key=len) / "NOTES.md" if names else None


def table(folder: str) -> tuple[str, int, int]:
    rows = ["| scenario | truth chain | engine chain | right? |", "| --- | --- | --- | --- |"]
    right = total = 0
    for trace in trace_files(folder):
        if not trace.with_name(trace.stem + ".truth.json").exists():
            continue
        recorded = companion(trace, "truth")
        truth, engine = truth_chain(recorded), engine_chain(trace, recorded)
        total += 1
        right += truth == engine
        limit = LIMITS.get(scenario_id(trace))
        mark = "yes" if truth == engine else (f"no — limit: {limit}" if limit else "**no**")
        rows.append(f"| {trace.stem} | {' → '.join(truth) or '—'} | {' → '.join(engine) or '—'} | {mark} |")
    rows.append(f"\nRight: {right} of {total}.")
    return "\n".join(rows), right, total


def refresh(notes: Path, folder: str, body: str) -> None:
    start, end = f"<!-- engine-now: {folder} -->", f"<!-- /engine-now: {folder} -->"
    block = f"{start}\n#### `{folder}`: the engine now (`tests/capture/notes_baseline.py`)\n\n{body}\n{end}"
    text = notes.read_text()
    if start in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        heading = "\n## How the engine reads them now\n"
        text = text.rstrip("\n") + ("\n" if heading in text else "\n" + heading) + "\n" + block + "\n"
    notes.write_text(text)


if __name__ == "__main__":
    folders = sorted({p.parent.name for p in trace_files()})
    for folder in folders:
        body, right, total = table(folder)
        notes = capture_of(folder)
        if notes is not None:
            refresh(notes, folder, body)
        print(f"{folder}: {right} of {total} right" + ("" if notes else " (no capture NOTES.md)"))
