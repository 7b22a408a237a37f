"""The rolling window in both stores (SQLite file and a real PostgreSQL server): eviction,
stability across runs of a case, counters, late evidence, and agreement with pure scoring.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_reliability.reputation import Evidence, Grade, ReputationConfig, evaluate_evidence
from otel_reliability.reputation.evidence import stability_evidence
from otel_reliability.reputation.standing import Entry
from otel_reliability.reputation.stores import open_standings

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

RENORMALIZE = "renormalize"


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request, tmp_path):
    """Open a fresh, empty store of the parametrised kind with a given config."""
    opened = []

    def opener(config: ReputationConfig):
        if request.param == "sqlite":
            spec = str(tmp_path / f"standings-{len(opened)}.db")
        else:
            spec = fresh_schema_url(request.getfixturevalue("postgres_server"))
        store = open_standings(spec, config)
        opened.append(store)
        return store

    yield opener
    for store in opened:
        store.close()


def chain(passed: bool) -> tuple[Evidence, ...]:
    return (Evidence("isnad", "matcher", passed, "met" if passed else "missing get_weather"),)


def entry(agent: str, evidence: tuple[Evidence, ...], i: int, **extra) -> Entry:
    return Entry(agent, evidence, float(i), trace_id=i + 1, run_span_id=1000 + i, expectation="weather", **extra)


# -- eviction -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Eviction:
    id: str
    window: int
    outcomes: list[bool]  # isnad outcome of each evaluation, oldest first
    expected: list[tuple[int, float]]  # (evaluations in window, isnad score) after each


EVICTIONS = [
    Eviction("window_of_three", 3, [True, True, False, False, False, True],
             [(1, 100.0), (2, 100.0), (3, 66.666666667), (3, 33.333333333), (3, 0.0), (3, 33.333333333)]),
    Eviction("window_of_one_keeps_only_the_latest", 1, [True, False, True], [(1, 100.0), (1, 0.0), (1, 100.0)]),
    Eviction("recovery_needs_the_failures_to_leave", 4, [False, True, True, True, True],
             [(1, 0.0), (2, 50.0), (3, 66.666666667), (4, 75.0), (4, 100.0)]),
    Eviction("no_eviction_below_the_window", 100, [True, False, True, False], [(1, 100.0), (2, 50.0), (3, 66.666666667), (4, 50.0)]),
]


@pytest.mark.parametrize("case", EVICTIONS, ids=[c.id for c in EVICTIONS])
def test_window_eviction(open_store, case: Eviction):
    store = open_store(ReputationConfig(window=case.window, missing_dimension=RENORMALIZE))
    seen = []
    for i, passed in enumerate(case.outcomes):
        standing = store.append(entry("forecaster", chain(passed), i, passed=passed))
        seen.append((standing.evaluations, standing.dimensions["isnad"]))
        assert standing.score == standing.dimensions["isnad"]
    assert seen == case.expected
    assert [e.seq for e in store.window("forecaster")] == sorted((e.seq for e in store.window("forecaster")), reverse=True)
    assert len(store.window("forecaster")) == case.expected[-1][0]


def test_dimension_whose_evidence_left_the_window_counts_as_missing(open_store):
    store = open_store(ReputationConfig(window=2))
    facts = (Evidence("sidq", "fact_check", True, "output states 25°C"),)
    store.append(entry("forecaster", facts + chain(True), 0))
    standing = store.append(entry("forecaster", chain(True), 1))
    assert (standing.dimensions["sidq"], standing.score) == (100.0, 60.0)
    standing = store.append(entry("forecaster", chain(True), 2))
    assert standing.dimensions["sidq"] is None
    assert (standing.score, standing.grade) == (30.0, Grade.MATRUK)


def test_counters_keep_counting_past_the_window(open_store):
    store = open_store(ReputationConfig(window=2))
    for i, passed in enumerate([True, False, True, True, None]):
        standing = store.append(entry("forecaster", chain(True), i, passed=passed))
    assert (standing.evaluations, standing.total_evaluations, standing.passed_evaluations) == (2, 5, 3)
    assert store.standing("forecaster") == standing


def test_agents_have_separate_windows(open_store):
    store = open_store(ReputationConfig(window=2, missing_dimension=RENORMALIZE))
    for i in range(4):
        store.append(entry("good", chain(True), i))
        store.append(entry("bad", chain(False), i))
    good, bad = store.standing("good"), store.standing("bad")
    assert (good.score, good.evaluations, good.total_evaluations) == (100.0, 2, 4)
    assert (bad.score, bad.evaluations, bad.total_evaluations) == (0.0, 2, 4)
    assert [s.agent for s in store.standings()] == ["bad", "good"]
    assert store.standing("unknown") is None


# -- stability ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs", "window", "dabt_items", "dabt_score"),
    [
        ([("weather", "A"), ("weather", "A"), ("weather", "B"), ("weather", "B"), ("weather", "A")], 3, [None, True, False, True, False], 100 / 3),
        ([("weather", "A"), ("news", "B"), ("weather", "A"), ("news", "C")], 10, [None, None, True, False], 50.0),
        ([("weather", "A")], 10, [None], None),
    ],
    ids=["chain_changes_count_against_stability", "cases_are_compared_separately", "first_run_of_a_case_has_no_stability_evidence"],
)
def test_stability_compares_each_run_with_the_previous_run_of_its_case(open_store, runs, window, dabt_items, dabt_score):
    store = open_store(ReputationConfig(window=window))
    for i, (case, signature) in enumerate(runs):
        store.append(entry("forecaster", chain(True), i, case=case, signature=signature))
    oldest_first = list(reversed(store.window("forecaster")))
    recorded = [next((e.passed for e in w.evidence if e.dimension == "dabt"), None) for w in oldest_first]
    assert recorded == dabt_items[-len(recorded):]
    dabt = store.standing("forecaster").dimensions["dabt"]
    assert dabt == (None if dabt_score is None else pytest.approx(dabt_score, abs=1e-9))


# -- late evidence ----------------------------------------------------------------------------


def test_feedback_on_a_run_in_the_window_joins_its_evaluation(open_store):
    store = open_store(ReputationConfig(window=2))
    store.append(entry("forecaster", chain(True), 0))
    store.append(entry("forecaster", chain(True), 1))
    late = Evidence("sidq", "feedback", False, "user: the temperature was wrong")
    standing = store.amend("forecaster", 1, 1000, [late], 5.0)  # run 0: trace 1, span 1000
    assert (standing.evaluations, standing.total_evaluations, standing.dimensions["sidq"]) == (2, 2, 0.0)
    [older] = [w for w in store.window("forecaster") if w.trace_id == 1]
    assert [e.source for e in older.evidence] == ["matcher", "feedback"]
    standing = store.append(entry("forecaster", chain(True), 2))
    assert standing.dimensions["sidq"] is None, "the feedback leaves the window with its run"


def test_feedback_on_a_run_outside_the_window_is_an_evaluation_of_its_own(open_store):
    store = open_store(ReputationConfig(window=5))
    store.append(entry("forecaster", chain(True), 0))
    standing = store.amend("forecaster", 99, 99, [Evidence("sidq", "feedback", True, "thumbs up")], 5.0)
    assert (standing.evaluations, standing.total_evaluations, standing.dimensions["sidq"]) == (2, 2, 100.0)
    standing = store.amend("newcomer", None, None, [Evidence("sidq", "feedback", True, "thumbs up")], 6.0)
    assert (standing.agent, standing.evaluations) == ("newcomer", 1)


# -- the store agrees with pure scoring -------------------------------------------------------

evidence_items = st.builds(
    Evidence,
    dimension=st.sampled_from(["sidq", "dabt", "isnad", "adalah"]),
    source=st.just("generated"),
    passed=st.booleans(),
    detail=st.just(""),
    confidence=st.sampled_from([0.5, 0.7, 0.9, 1.0]),
)
evaluations = st.lists(
    st.tuples(st.lists(evidence_items, max_size=4), st.sampled_from([None, "weather", "news"]), st.sampled_from(["A", "B"])),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=evaluations, window=st.integers(min_value=1, max_value=8), missing=st.sampled_from(["zero", RENORMALIZE]))
def test_sqlite_standing_equals_pure_scoring_of_the_last_n_evaluations(history, window, missing):
    config = ReputationConfig(window=window, missing_dimension=missing)
    store = open_standings(":memory:", config)
    kept: deque[list[Evidence]] = deque(maxlen=window)
    previous: dict[str, str] = {}
    try:
        for i, (items, case, signature) in enumerate(history):
            standing = store.append(entry("agent", tuple(items), i, case=case, signature=signature if case else None))
            replayed = list(items)
            if case is not None:
                item = stability_evidence(case, previous.get(case), signature)
                if item is not None:
                    replayed.append(item)
                previous[case] = signature
            kept.append(replayed)
            in_window = [e for run in kept for e in run]
            expected = evaluate_evidence(in_window, config.weights, missing)
            if not in_window:  # nothing to grade yet: unrated, not 0 and Matruk
                assert (standing.score, standing.grade, standing.grade_label) == (None, None, "unrated")
            else:
                assert standing.score == pytest.approx(expected.overall, abs=1e-6)
                assert standing.grade is expected.grade or abs(standing.score - expected.overall) < 1e-6
            assert standing.dimensions.keys() == expected.dimensions.keys()
            for dimension, value in expected.dimensions.items():
                assert standing.dimensions[dimension] == (None if value is None else pytest.approx(value, abs=1e-6))
            assert standing.evaluations == len(kept)
    finally:
        store.close()


# -- batches ----------------------------------------------------------------------------------


def test_a_batch_gives_the_same_standings_as_appending_one_by_one(open_store):
    config = ReputationConfig(window=4)
    history = [
        entry(agent, chain(i % 3 != 0) + (Evidence("sidq", "judge", i % 2 == 0, "", 0.7),), i,
              passed=i % 3 != 0, case="weather", signature="AB"[i // 4 % 2])
        for i, agent in enumerate(["alpha", "beta"] * 7)
    ]
    one_by_one, batched = open_store(config), open_store(config)
    for e in history:
        one_by_one.append(e)
    batched.append_many(history[:3])  # a batch continues from what the store already holds
    result = batched.append_many(history[3:])
    assert sorted(result) == ["alpha", "beta"]
    for expected, got in zip(one_by_one.standings(), batched.standings()):
        assert got.score == pytest.approx(expected.score, abs=1e-9)
        assert (got.grade, got.evaluations, got.total_evaluations, got.passed_evaluations) == (
            expected.grade, expected.evaluations, expected.total_evaluations, expected.passed_evaluations)
        assert result[got.agent].score == pytest.approx(got.score, abs=1e-9)
        window = [[e.to_json() for e in w.evidence] for w in batched.window(got.agent)]
        assert window == [[e.to_json() for e in w.evidence] for w in one_by_one.window(got.agent)]
    assert batched.append_many([]) == {}


# -- superseding verdicts (a run re-judged after a late span) ------------------------------------


@dataclass(frozen=True)
class Supersede:
    id: str
    runs: list[tuple[int, str, bool]]  # (run number, chain signature, passed) appended in order
    superseding: tuple[int, str, bool]  # the re-judged run's new verdict
    window: list[tuple[int, bool | None]]  # (run number, its dabt item) oldest first, afterwards
    passed_evaluations: int
    case_signature_after: str  # what the next run of the case is compared with


SUPERSEDES = [
    Supersede("the_new_verdict_replaces_the_old", [(0, "A", True), (1, "B", False)], (1, "A", True),
              [(0, None), (1, True)], 2, "A"),
    Supersede("stability_compares_with_the_run_before_not_with_the_superseded_verdict",
              [(0, "A", True), (1, "A", True)], (1, "B", True), [(0, None), (1, False)], 2, "B"),
    Supersede("a_later_run_of_the_case_keeps_its_signature",
              [(0, "A", True), (1, "B", False), (2, "C", True)], (1, "A", True),
              [(0, None), (2, False), (1, True)], 3, "C"),
    Supersede("a_run_never_recorded_is_appended", [(0, "A", True)], (5, "A", False),
              [(0, None), (5, True)], 1, "A"),
]


@pytest.mark.parametrize("batched", ["append", "append_many", "one_batch"])
@pytest.mark.parametrize("case", SUPERSEDES, ids=lambda c: c.id)
def test_a_superseding_verdict_replaces_the_runs_entry(open_store, case: Supersede, batched):
    """Appended one by one, in a batch of its own, or in one batch with the entry it replaces (a
    run judged and re-judged in one tick: a resumed run before and after its paused run arrived)."""
    store = open_store(ReputationConfig(window=10))

    def run(i, signature, passed, **extra):
        return entry("forecaster", chain(passed), i, passed=passed, case="weather", signature=signature, **extra)

    earlier = [run(i, signature, passed) for i, signature, passed in case.runs]
    new = run(*case.superseding, supersedes=True)
    if batched == "one_batch":
        standing = store.append_many([*earlier, new])["forecaster"]
    else:
        for item in earlier:
            store.append(item)
        standing = store.append_many([new])["forecaster"] if batched == "append_many" else store.append(new)
    recorded = [
        (w.run_span_id - 1000, next((e.passed for e in w.evidence if e.dimension == "dabt"), None))
        for w in reversed(store.window("forecaster"))
    ]
    assert recorded == case.window
    total = len({i for i, _, _ in case.runs} | {case.superseding[0]})
    assert (standing.evaluations, standing.total_evaluations, standing.passed_evaluations) == (
        total, total, case.passed_evaluations)
    after = store.append(run(9, case.case_signature_after, True))
    assert [e.passed for e in store.window("forecaster", 1)[0].evidence if e.dimension == "dabt"] == [True]
    assert after.total_evaluations == total + 1


def test_a_store_from_before_superseding_gains_the_column_and_keeps_its_entries(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    store = open_standings(str(path), ReputationConfig())
    store.append(entry("forecaster", chain(True), 0))
    store.close()
    with sqlite3.connect(path) as db:  # the table as the first release created it
        db.execute("ALTER TABLE reputation_evaluations DROP COLUMN previous_signature")
    store = open_standings(str(path), ReputationConfig())
    try:
        standing = store.append(entry("forecaster", chain(False), 0, supersedes=True))
        assert (standing.evaluations, standing.total_evaluations, standing.score) == (1, 1, 0.0)
    finally:
        store.close()


def test_a_store_from_before_the_window_index_has_it_in_place_of_the_agent_index(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    store = open_standings(str(path), ReputationConfig(window=2))
    for i, passed in enumerate([True, False, True]):
        store.append(entry("forecaster", chain(passed), i))
    before = store.standing("forecaster")
    store.close()
    with sqlite3.connect(path) as db:  # the index as releases before the window index made it
        db.execute("DROP INDEX reputation_evaluations_window")
        db.execute("CREATE INDEX reputation_evaluations_by_agent ON reputation_evaluations (agent, seq)")
    store = open_standings(str(path), ReputationConfig(window=2))
    try:
        with sqlite3.connect(path) as db:
            indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'reputation_evaluations'")}
        assert indexes == {"reputation_evaluations", "reputation_evaluations_window", "reputation_evaluations_by_run"}
        assert store.standing("forecaster") == before
        after = store.append(entry("forecaster", chain(True), 3))
        assert (after.evaluations, after.total_evaluations, after.tallies["isnad"].items) == (2, 4, 2)
    finally:
        store.close()
