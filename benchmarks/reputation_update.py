"""How fast verdicts become standings: evaluations/s through ``Reputation.record``, SQLite and PostgreSQL.

Run: ``python benchmarks/reputation_update.py [--evaluations N] [--agents N] [--batch N] [--postgres URL] [--fast]``

Each evaluation is a realistic verdict (``RunResult``): a run of two or three tool
calls against an expectation with expected tools, an ``allowed_tools`` policy and an
``expected_output`` fact, 10% of them failing. ``record`` turns it into evidence
(isnad, adalah, sidq items, and the dabt item the store derives from the previous
chain signature) and applies it to the agent's rolling window (100) in one
transaction. Agents are visited round-robin, so every update evicts once the windows
are full.

Two paths per store: ``record`` (one transaction per evaluation, what the in-process
processor does) and ``record_many`` (``--batch`` evaluations per transaction, for a
receiver that judges many runs at once). Each starts from an empty store.

SQLite: a fresh file in WAL mode (the default store). PostgreSQL: ``--postgres URL``
(each measurement in a fresh schema), or a throwaway local server started from
Debian's ``postgresql`` package (its defaults, fsync and synchronous commit on, unless
``--fast`` turns them off).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from otel_reliability.expectations import Expectation, ExpectedOutput  # noqa: E402
from otel_reliability.matcher import evaluate  # noqa: E402
from otel_reliability.model import ERROR, OK, Attempt, Run  # noqa: E402
from otel_reliability.reputation import Observed, Reputation  # noqa: E402
from otel_reliability.results import RunResult  # noqa: E402

EXPECTATION = Expectation(
    name="weather",
    expected_tool_calls=["get_weather"],
    allowed_tools=["get_weather", "get_forecast"],
    expected_output=ExpectedOutput(contains=["25°C"]),
)


def workload(evaluations: int, agents: int) -> list[Observed]:
    """Verdicts with outputs, judged up front so that only the update is timed."""
    items = []
    for i in range(evaluations):
        agent = f"agent-{i % agents:02d}"
        failing = i % 10 == 7
        attempts = [
            Attempt("get_weather", {"city": "Paris"}, ERROR if failing else OK, agent, (agent,), span_id=3 * i + 1, start_ns=1),
            Attempt("get_forecast", {"city": "Paris"}, OK, agent, (agent,), span_id=3 * i + 2, start_ns=2),
        ]
        if i % 3 == 0:
            attempts.append(Attempt("get_weather", {"city": "Lyon"}, OK, agent, (agent,), span_id=3 * i + 3, start_ns=3))
        run = Run(i + 1, i + 1, agent, f"invoke_agent {agent}", 0, 9, own_attempts=attempts)
        verdict = evaluate(run, EXPECTATION)
        output = "Paris: 18°C" if failing else "Paris: 25°C, sunny"
        items.append(Observed(RunResult(i + 1, i + 1, agent, EXPECTATION.name, verdict, 1_700_000_000.0 + i), output))
    return items


def measure(store: str, items: list[Observed], batch: int = 1) -> tuple[float, int, int]:
    reputation = Reputation(store, expectations=[EXPECTATION])
    try:
        start = time.perf_counter()
        if batch == 1:
            for item in items:
                reputation.record(item.result, output=item.output)
        else:
            for first in range(0, len(items), batch):
                reputation.record_many(items[first:first + batch])
        elapsed = time.perf_counter() - start
        standings = reputation.standings()
        total = sum(s.total_evaluations for s in standings)
        return elapsed, total, len(standings)
    finally:
        reputation.close()


def report(label: str, elapsed: float, total: int, agents: int, expected: int) -> None:
    assert total == expected, f"{label}: {total} evaluations applied, expected {expected}"
    print(f"{label:<52} {expected:>6} evaluations / {agents} agents in {elapsed:6.2f} s = {expected / elapsed:8.0f} evaluations/s "
          f"({elapsed / expected * 1e6:6.0f} µs each)")


def _path(batch: int) -> str:
    return "record" if batch == 1 else f"record_many({batch})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--batch", type=int, default=100, help="evaluations per record_many transaction")
    parser.add_argument("--postgres", metavar="URL", help="an existing server (default: start a throwaway one)")
    parser.add_argument("--fast", action="store_true", help="throwaway server with fsync and synchronous_commit off")
    args = parser.parse_args()

    items = workload(args.evaluations, args.agents)
    print(f"Python {platform.python_version()} on {platform.machine()}, window 100, "
          f"{args.evaluations} evaluations over {args.agents} agents")

    with tempfile.TemporaryDirectory() as tmp:
        for batch in (1, args.batch):
            elapsed, total, agents = measure(str(Path(tmp) / f"reputation-{batch}.db"), items, batch)
            report(f"SQLite (WAL, synchronous=NORMAL), {_path(batch)}", elapsed, total, agents, args.evaluations)

    if args.postgres:
        from tests.reputation_postgres import fresh_schema_url

        for batch in (1, args.batch):
            elapsed, total, agents = measure(fresh_schema_url(args.postgres), items, batch)
            report(f"PostgreSQL (given server), {_path(batch)}", elapsed, total, agents, args.evaluations)
        return 0
    from tests.reputation_postgres import fresh_schema_url, postgres_bin, throwaway_postgres

    if postgres_bin() is None:
        print("PostgreSQL: not installed (apt-get install -y postgresql), skipped")
        return 0
    with throwaway_postgres(durable=not args.fast) as url:
        for batch in (1, args.batch):
            elapsed, total, agents = measure(fresh_schema_url(url), items, batch)
            label = "PostgreSQL (fsync off)" if args.fast else "PostgreSQL (defaults, fsync on)"
            report(f"{label}, {_path(batch)}", elapsed, total, agents, args.evaluations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
