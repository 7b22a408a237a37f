"""Two processes appending evaluations for the same agents to one store lose nothing.

Each worker process appends its own deterministic evaluations (evidence, verdict,
chain signatures that differ between the workers, so stability evidence depends on
the order) for the same three agents, all at once — one evaluation per transaction,
or in batches of ten (``append_many``). Afterwards every evaluation is counted, and
the standings, windows and stability items equal a sequential replay of the same
evaluations, one by one, in the store's sequence order.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest

from otel_reliability.reputation import Evidence, ReputationConfig
from otel_reliability.reputation.standing import Entry
from otel_reliability.reputation.stores import open_standings

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

AGENTS = ("alpha", "beta", "gamma")
PER_WORKER = 120
BATCH = 10
WINDOW = 25  # small enough that most evaluations are evicted again
CONFIG = ReputationConfig(window=WINDOW)
UNBOUNDED = ReputationConfig(window=1000)  # batches: keep every evaluation, to read their order back


def evaluation(worker: int, i: int) -> Entry:
    """Worker ``worker``'s ``i``-th evaluation: the same on every call."""
    agent = AGENTS[i % len(AGENTS)]
    evidence = (
        Evidence("isnad", "matcher", (i + worker) % 4 != 0, f"w{worker} run {i}"),
        Evidence("adalah", "refusals", i % 7 != 3, "refusals"),
        Evidence("sidq", "evaluation:judge", (i * (worker + 1)) % 5 != 0, "judge", 0.7),
    )
    return Entry(
        agent,
        evidence,
        evaluated_at=1_700_000_000.0 + i,
        trace_id=worker * 100_000 + i + 1,
        run_span_id=i + 1,
        expectation="weather",
        passed=(i + worker) % 4 != 0,
        case="weather" if i % 2 == 0 else "news",
        signature=f"{agent}/get_weather:{'ok' if (i // 3 + worker) % 2 else 'error'}",
    )


def work(spec: str, worker: int, batched: bool, start: multiprocessing.synchronize.Barrier, out: multiprocessing.Queue) -> None:
    store = open_standings(spec, UNBOUNDED if batched else CONFIG)
    start.wait(timeout=60)
    applied = []
    step = BATCH if batched else 1
    for first in range(0, PER_WORKER, step):
        if batched:
            store.append_many([evaluation(worker, i) for i in range(first, first + step)])
        else:
            applied.append((store.append(evaluation(worker, first)).last_seq, worker, first))
        # As a real writer pauses between runs (or batches). SQLite's busy wait backs off for
        # up to 100 ms, so a writer that never pauses keeps the lock until it is done.
        time.sleep(0.01 if batched else 0.001)
    store.close()
    out.put(applied)


def run_two_workers(spec: str, batched: bool) -> list[tuple[int, int, int]]:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    out = context.Queue()
    workers = [context.Process(target=work, args=(spec, w, batched, start, out)) for w in (0, 1)]
    for p in workers:
        p.start()
    applied = [item for _ in workers for item in out.get(timeout=120)]
    for p in workers:
        p.join(timeout=60)
        assert p.exitcode == 0
    return applied


@pytest.fixture(params=["sqlite", "postgres"])
def shared_spec(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "shared.db")
    return fresh_schema_url(request.getfixturevalue("postgres_server"))


@pytest.mark.parametrize("batched", [False, True], ids=["one_per_transaction", "batches_of_ten"])
def test_two_processes_lose_nothing_and_equal_a_sequential_replay(shared_spec, tmp_path, batched):
    config = UNBOUNDED if batched else CONFIG
    open_standings(shared_spec, config).close()  # create the tables once, before the race
    applied = run_two_workers(shared_spec, batched)
    if batched:  # every evaluation is still in its window: read back the order they were applied in
        reader = open_standings(shared_spec, config)
        applied = [(w.seq, w.trace_id // 100_000, w.trace_id % 100_000 - 1) for a in AGENTS for w in reader.window(a)]
        reader.close()

    # Nothing lost: every append got its own sequence number.
    seqs = [seq for seq, _, _ in applied]
    assert len(seqs) == 2 * PER_WORKER == len(set(seqs))
    order = [(worker, i) for _, worker, i in sorted(applied)]
    switches = sum(1 for a, b in zip(order, order[1:]) if a[0] != b[0])
    assert switches >= 2, "the workers did not overlap; the test proved nothing"

    shared = open_standings(shared_spec, config)
    replay = open_standings(str(tmp_path / "replay.db"), config)
    try:
        for worker, i in order:
            replay.append(evaluation(worker, i))
        concurrent_standings = shared.standings()
        assert [s.agent for s in concurrent_standings] == sorted(AGENTS)
        for got, expected in zip(concurrent_standings, replay.standings()):
            assert got.total_evaluations == expected.total_evaluations == 2 * PER_WORKER // len(AGENTS)
            assert got.passed_evaluations == expected.passed_evaluations
            assert got.evaluations == expected.evaluations == min(config.window, 2 * PER_WORKER // len(AGENTS))
            assert got.score == pytest.approx(expected.score, abs=1e-9)
            assert got.grade is expected.grade
            for dimension in got.tallies:
                assert got.tallies[dimension].items == expected.tallies[dimension].items
                assert got.tallies[dimension].passed == pytest.approx(expected.tallies[dimension].passed)
            # The window holds the same evaluations with the same evidence, stability items included.
            window = [(w.trace_id, [e.to_json() for e in w.evidence]) for w in shared.window(got.agent)]
            assert window == [(w.trace_id, [e.to_json() for e in w.evidence]) for w in replay.window(got.agent)]
            assert any(e["dimension"] == "dabt" for _, items in window for e in items)
    finally:
        shared.close()
        replay.close()
