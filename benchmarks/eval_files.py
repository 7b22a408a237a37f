"""``otel-reliability eval`` on a folder of many trace files: spans per second and CPU / wall.

Run: ``python benchmarks/eval_files.py [--files N] [--rounds R] [--against CHECKOUT]``

The folder holds ``--files`` files (5,000 by default), each one agent trace of
``receiver_throughput.py``'s shape (11 GenAI spans), alternately binary OTLP protobuf
and OTLP/JSON, plus the two traces of the corpus's pydantic-ai run that pauses for an
approval, split into a file that sorts first and one that sorts last: the resumed run
is joined to the paused one (and its pending call resolved) only if the files are
assembled together.

``eval --format json`` runs on the folder in a child process, as a user runs it; its wall
time and the CPU time of it and its own children (``RUSAGE_CHILDREN``) are measured,
best of ``--rounds`` (by wall time). With ``--against`` the same is measured with the package of
another checkout (e.g. the main branch, for a before/after), and the two reports are
compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.protobuf.json_format import MessageToDict

sys.path.insert(0, str(Path(__file__).resolve().parent))

from receiver_throughput import SPANS_PER_TRACE, build_requests  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PAUSED_RUN = REPO / "tests" / "fixtures" / "corpus" / "pydantic_ai" / "refused_approval_denied.json"


def write_folder(folder: Path, files: int) -> int:
    """Write the trace files; returns how many spans they hold."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    for number, payload in enumerate(build_requests(1, files, 1)):
        if number % 2:
            request = ExportTraceServiceRequest.FromString(payload)
            (folder / f"trace-{number:05d}.json").write_text(json.dumps(MessageToDict(request)))
        else:
            (folder / f"trace-{number:05d}.binpb").write_bytes(payload)
    return files * SPANS_PER_TRACE + _split_paused_run(folder)


def _traces_of_paused_run() -> list[list[dict]]:
    """The spans of the paused trace, then those of the resuming one."""
    document = json.loads(PAUSED_RUN.read_text())
    traces: dict[str, list] = {}
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                traces.setdefault(span["traceId"], []).append(span)
    return sorted(traces.values(), key=lambda spans: min(int(s["startTimeUnixNano"]) for s in spans))


def _split_paused_run(folder: Path) -> int:
    """The corpus's paused-and-resumed run, one trace a file, the paused one sorting first."""
    paused, resumed = _traces_of_paused_run()
    for name, spans in (("0-paused.json", paused), ("z-resumed.json", resumed)):
        (folder / name).write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    return len(paused) + len(resumed)


def resumed_chain(report: bytes) -> list[tuple[str, str]]:
    """The (tool, outcome) chain of the run that resumes the paused one."""
    resumed_trace = _traces_of_paused_run()[1][0]["traceId"].lower()
    [resumed] = [run for run in json.loads(report)["results"] if run["trace_id"] == resumed_trace]
    return [(attempt["tool"], attempt["outcome"]) for attempt in resumed["chain"]]


def run_eval(checkout: Path, folder: Path) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (the process and its children) and the report of one ``eval``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", "eval", "--format", "json", str(folder)],
        cwd=checkout, capture_output=True, check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"eval in {checkout} failed ({done.returncode}): {done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout to measure the same way (before/after)")
    args = parser.parse_args()
    checkouts = {"this": REPO}
    if args.against is not None:
        checkouts = {"against": args.against.resolve(), **checkouts}
    with tempfile.TemporaryDirectory() as workdir:
        folder = Path(workdir)
        spans = write_folder(folder, args.files)
        print(f"{args.files + 2} files, {spans} spans, {len(os.sched_getaffinity(0))} usable cores")
        best: dict[str, tuple[float, float]] = {}
        reports: dict[str, bytes] = {}
        for _ in range(args.rounds):  # the checkouts take turns, so that a shared machine's load drifts evenly
            for label, checkout in checkouts.items():
                wall, cpu, reports[label] = run_eval(checkout, folder)
                if wall < best.get(label, (float("inf"), 0.0))[0]:
                    best[label] = wall, cpu
        for label, (wall, cpu) in best.items():
            print(f"{label:<8} {spans / wall:>10,.0f} spans/s   wall {wall:6.2f} s   CPU {cpu:6.2f} s   "
                  f"CPU/wall {cpu / wall:4.2f}")
        print(f"{len(json.loads(reports['this'])['results'])} runs judged; the resumed run's chain: "
              f"{resumed_chain(reports['this'])}")
        if args.against is not None:
            print("reports identical" if reports["against"] == reports["this"] else "REPORTS DIFFER")


if __name__ == "__main__":
    main()
