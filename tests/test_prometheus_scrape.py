"""A real Prometheus scrapes real receivers, and every PromQL expression of ``deploy/`` —
each recording rule, each alert, each dashboard query — returns the series it should.

Two ``otel-reliability serve`` receivers: ``main`` judges the corpus (sent through the
real Python OTLP/gRPC exporter) with ``tests/fixtures/corpus_expectations.yaml``, plus an
agent whose reputation grade drops (``steady``), one whose trace gets a late span
(``latecomer``) and one run in two versions named by the resource's ``service.version``
(``released``: 1.1 passes far fewer runs than 1.0); ``stressed`` has tiny buffers and gets traces it must cut, evict, refuse
as overloaded and reject as invalid. Everything is sent twice: once before Prometheus
starts, so that every series already exists at its first scrape with its first-round
value, then again while it scrapes — so the rates over the rules' windows are the second
round's, and the expected figures follow from the second round's verdicts, read back from
the receiver's results API.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

import pytest

from .corpus import FIGURES_CORPUS
from .prometheus_harness import (
    DASHBOARD_QUERIES,
    RULES,
    Prometheus,
    concrete,
    dashboard,
    dashboard_queries,
    prometheus_binary,
    rule_expressions,
    start_prometheus,
    wait_for,
)
from .receiver_harness import (
    Receiver,
    Receivers,
    agent_spans,
    eval_json,
    export_request,
    new_trace_id,
    remap_corpus,
    run_replay,
    wait_until,
)

EXPECTATIONS = Path(__file__).parent / "fixtures" / "corpus_expectations.yaml"
# max_buffered_spans 13: two kept traces of 4 spans leave room for one more 5-span trace
# request (8 + 5), not for a request of two (8 + 10).
STRESSED = {"max_traces": 2, "max_spans_per_trace": 4, "max_buffered_spans": 13}
GRADE_RANKS = {"Matruk": 0, "Da'if": 1, "Saduq Hadith": 2, "Saduq": 3, "Thiqah": 4}
JOB = "otel-reliability"
Series = frozenset  # one series' labels, as (key, value) pairs


@dataclass
class World:
    """What was sent and what the receivers say about it, for both rounds."""

    prometheus: Prometheus
    main: Receiver
    stressed: Receiver
    first: list[dict]  # verdicts of the first round
    second: list[dict]  # verdicts of the second round
    ranks_before: dict[str, int]
    ranks_after: dict[str, int]

    @property
    def main_instance(self) -> str:
        return f"127.0.0.1:{self.main.http_port}"

    @property
    def stressed_instance(self) -> str:
        return f"127.0.0.1:{self.stressed.http_port}"

    @property
    def verdicts(self) -> list[dict]:
        return self.first + self.second

    def evaluations(self, verdicts: list[dict] | None = None) -> Counter:
        return Counter((v["agent"], v["expectation"], v["eval_status"]) for v in verdicts or self.verdicts)

    def by_version(self, verdicts: list[dict] | None = None) -> Counter:
        """Judged runs (PASSED or FAILED) of each versioned agent: (agent, version, passed) counts."""
        return Counter(
            (v["agent"], v["agent_version"], v["eval_status"] == "PASSED")
            for v in verdicts or self.verdicts
            if v["agent_version"] is not None and v["eval_status"] in ("PASSED", "FAILED")
        )

    def calls(self, verdicts: list[dict] | None = None) -> Counter:
        return Counter(
            (c["agent"] or v["agent"], c["tool"], c["outcome"]) for v in verdicts or self.verdicts for c in v["chain"]
        )

    def unexpected(self, verdicts: list[dict] | None = None) -> Counter:
        found: Counter = Counter()
        for v in verdicts or self.verdicts:
            listed = set(v["failed_tool_calls"]) | set(v["additional_tool_calls"])
            found.update((c["agent"] or v["agent"], c["tool"]) for c in v["chain"] if c["tool"] in listed)
        return found


# -- feeding the receivers ---------------------------------------------------------------


# ``released``'s runs in each round: (version, passes, failures). The first round makes every
# series exist at the first scrape; the second's figures are what the rules see.
RELEASED_ROUNDS = {"first": (("1.0", 1, 0), ("1.1", 1, 1)), "second": (("1.0", 12, 0), ("1.1", 2, 10))}


def send_main_round(main: Receiver, workdir: Path, salt: str, steady_failures: int, steady_passes: int) -> list[dict]:
    """The corpus through the real exporter, ``steady``'s runs, ``released``'s runs under a
    resource naming their version, and a ``latecomer`` run whose last span arrives after its
    verdict. Returns the round's verdicts, once all are in."""
    files = remap_corpus(workdir / salt, salt, FIGURES_CORPUS)  # the figures below are this corpus's
    sent = run_replay("grpc", main.grpc_endpoint, files)
    assert sent["exported"] == sent["replayed"] > 0, sent
    corpus_runs = eval_json(files)["results"]
    trace_ids = {r["trace_id"] for r in corpus_runs}
    for failed in [()] * steady_passes + [("get_news",)] * steady_failures:
        spans = agent_spans(new_trace_id(), "steady", failed=failed)
        main.send(spans)
        trace_ids.add(spans[0].trace_id.hex())
    released = 0
    for version, passes, failures in RELEASED_ROUNDS[salt]:
        for failed in [()] * passes + [("get_news",)] * failures:
            spans = agent_spans(new_trace_id(), "released", failed=failed)
            request = export_request(spans)
            request.resource_spans[0].resource.attributes.add(key="service.version").value.string_value = version
            response = main.grpc_export(request)
            assert not response.partial_success.rejected_spans, response
            trace_ids.add(spans[0].trace_id.hex())
            released += 1
    late_before = main.metric("agent_reliability_evaluations_late_total")
    spans = agent_spans(new_trace_id(), "latecomer")
    main.send(spans[:-1])
    main.wait_results([spans[0].trace_id.hex()], 1)
    main.send(spans[-1:])
    wait_until(lambda: main.metric("agent_reliability_evaluations_late_total") > late_before, 30, "the late re-evaluation")
    trace_ids.add(spans[0].trace_id.hex())
    return main.wait_results(trace_ids, len(corpus_runs) + steady_passes + steady_failures + released + 1, timeout=60)


def send_stressed_round(stressed: Receiver) -> None:
    """Three 5-span traces (each cut to 4: trace_full; the buffer keeps 2: evictions), then a
    request of two traces (no room: overloaded), then a span with a bad trace id (invalid)."""
    for _ in range(3):
        reply = stressed.post_traces(export_request(agent_spans(new_trace_id(), "stressed")).SerializeToString())
        assert reply.status == 200, reply
    two = agent_spans(new_trace_id(), "stressed") + agent_spans(new_trace_id(), "stressed")
    assert stressed.post_traces(export_request(two).SerializeToString()).status == 503
    bad = agent_spans(new_trace_id(), "stressed")[:1]
    bad[0].trace_id = b"\x01" * 5
    assert stressed.post_traces(export_request(bad).SerializeToString()).status == 200


def ranks(main: Receiver) -> dict[str, int]:
    return {s["agent"]: GRADE_RANKS[s["grade"]] for s in main.http("GET", "/api/v1/reputation").json()["standings"]}


def receiver_sum(receivers: list[Receiver], name: str) -> float:
    return sum(r.metric(name) for r in receivers)


def prometheus_sum(prometheus: Prometheus, name: str) -> float:
    return sum(value for _, value in prometheus.query(f"sum({name})"))


EVICTED = "agent_reliability_traces_dropped_total"
FINAL_COUNTERS = (
    "agent_reliability_evaluations_total",
    "agent_reliability_tool_calls_total",
    "agent_reliability_tool_calls_unexpected_total",
    "agent_reliability_evaluations_late_total",
    "agent_reliability_spans_received_total",
    "agent_reliability_spans_dropped_total",
    "agent_reliability_traces_dropped_total",
)


def wait_scraped(prometheus: Prometheus, receivers: list[Receiver], steady_rank: int) -> None:
    """Until Prometheus holds what the receivers expose now, and the rules have seen it."""
    for name in FINAL_COUNTERS:
        wait_until(
            lambda name=name: prometheus_sum(prometheus, name) == receiver_sum(receivers, name),
            60, f"prometheus to scrape the final {name}",
        )
    wait_for(
        prometheus, 'agent:agent_reliability_reputation_grade:min{gen_ai_agent_name="steady"}',
        lambda result: [value for _, value in result] == [steady_rank], f"steady's grade {steady_rank} recorded",
    )
    scraped_at = datetime.now().astimezone()

    def evaluated_since() -> bool:
        groups = prometheus.api("rules")["groups"]
        return all(_timestamp(group["lastEvaluation"]) > scraped_at for group in groups)

    wait_until(evaluated_since, 30, "every rule group to be evaluated on the final data")


def _timestamp(text: str) -> datetime:
    """Prometheus's RFC 3339 times carry nanoseconds; Python parses microseconds."""
    return datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", text).replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if not prometheus_binary():
        pytest.fail("prometheus is missing: run .ci/setup, which installs the Debian package prometheus")
    workdir = tmp_path_factory.mktemp("scrape")
    group = Receivers(workdir)
    prometheus = None
    try:
        main = group.start("main", decision_wait=1.0, config={"expectations": [str(EXPECTATIONS)]})
        stressed = group.start("stressed", decision_wait=600.0, config=STRESSED)
        receivers = [main, stressed]

        first = send_main_round(main, workdir, "first", steady_failures=1, steady_passes=3)
        send_stressed_round(stressed)
        wait_until(lambda: stressed.metric(EVICTED, reason="max_traces") == 1, 30, "the first eviction")
        ranks_before = ranks(main)
        assert ranks_before["steady"] == 1, ranks_before

        prometheus = start_prometheus(
            workdir / "prometheus", [f"127.0.0.1:{r.http_port}" for r in receivers], [RULES]
        )
        wait_for(prometheus, f'up{{job="{JOB}"}} == 1', lambda result: len(result) == 2, "both receivers scraped")
        wait_scraped(prometheus, receivers, steady_rank=1)

        second = send_main_round(main, workdir, "second", steady_failures=12, steady_passes=0)
        send_stressed_round(stressed)
        wait_until(lambda: stressed.metric(EVICTED, reason="max_traces") == 4, 30, "every eviction")
        ranks_after = ranks(main)
        assert ranks_after["steady"] == 0, ranks_after
        wait_scraped(prometheus, receivers, steady_rank=0)
        yield World(prometheus, main, stressed, first, second, ranks_before, ranks_after)
    finally:
        if prometheus is not None:
            code = prometheus.stop()
            assert code == 0, f"prometheus exited {code}:\n{prometheus.log_text()}"
        problems = group.stop_all()
        assert not problems, "\n".join(problems)


# -- what each rule must return ------------------------------------------------------------


def series(**labels: str) -> Series:
    return frozenset(labels.items())


def agents_of(keys) -> set[Series]:
    return {series(gen_ai_agent_name=key[0]) for key in keys}


def instances(world: World, *names: str) -> set[Series]:
    return {series(job=JOB, instance=getattr(world, f"{name}_instance")) for name in names}


def pass_rate_low(world: World) -> set[Series]:
    """Judged at least 10 times in the second round, and under 90 % passed."""
    judged: Counter = Counter()
    passed: Counter = Counter()
    for (agent, expectation, status), n in world.evaluations(world.second).items():
        if status in ("PASSED", "FAILED"):
            judged[(agent, expectation)] += n
            passed[(agent, expectation)] += n if status == "PASSED" else 0
    assert not [k for k, n in judged.items() if 8 <= n < 10], "a run count too close to the alert's minimum"
    return {
        series(gen_ai_agent_name=a, reliability_expectation=e) for (a, e), n in judged.items() if n >= 10 and passed[(a, e)] / n < 0.9
    }


def tool_share_high(outcome: str, threshold: float) -> Callable[[World], set[Series]]:
    def expected(world: World) -> set[Series]:
        calls: Counter = Counter()
        hits: Counter = Counter()
        for (agent, _tool, result), n in world.calls(world.second).items():
            calls[agent] += n
            hits[agent] += n if result == outcome else 0
        return {series(gen_ai_agent_name=a) for a, n in calls.items() if n >= 10 and hits[a] / n > threshold}

    return expected


def versions_of(world: World) -> set[Series]:
    return {series(gen_ai_agent_name=a, gen_ai_agent_version=v) for a, v, _ in world.by_version()}


def version_below_others(world: World) -> set[Series]:
    """Versions whose second-round pass rate is more than 5 points below the agent's other
    versions' (at least 10 runs each side)."""
    judged: Counter = Counter()
    passed: Counter = Counter()
    for (agent, version, ok), n in world.by_version(world.second).items():
        judged[(agent, version)] += n
        passed[(agent, version)] += n if ok else 0
    found = set()
    for (agent, version), n in judged.items():
        others = [key for key in judged if key[0] == agent and key != (agent, version)]
        other_runs = sum(judged[key] for key in others)
        if n >= 10 and other_runs >= 10 and passed[(agent, version)] / n < sum(passed[k] for k in others) / other_runs - 0.05:
            found.add(series(gen_ai_agent_name=agent, gen_ai_agent_version=version))
    return found


RULE_SERIES: dict[str, Callable[[World], set[Series]]] = {
    "agent_expectation_status:agent_reliability_evaluations:rate1h": lambda w: {
        series(gen_ai_agent_name=a, reliability_expectation=e, reliability_status=s) for a, e, s in w.evaluations()
    },
    "agent_expectation:agent_reliability_evaluations_judged:rate1h": lambda w: {
        series(gen_ai_agent_name=a, reliability_expectation=e) for a, e, s in w.evaluations() if s != "NOT_EVALUATED"
    },
    "agent_expectation:agent_reliability_pass:ratio_rate1h": lambda w: {
        series(gen_ai_agent_name=a, reliability_expectation=e) for a, e, s in w.evaluations() if s != "NOT_EVALUATED"
    },
    "agent:agent_reliability_pass:ratio_rate1h": lambda w: agents_of(k for k in w.evaluations() if k[2] != "NOT_EVALUATED"),
    "agent:agent_reliability_score:mean_rate1h": lambda w: agents_of(w.evaluations()),
    # every version of `released` ran in the second round, and each had the other beside it
    "agent_version:agent_reliability_evaluations_judged:rate1h": versions_of,
    "agent_version:agent_reliability_pass:ratio_rate1h": versions_of,
    "agent_version:agent_reliability_evaluations_judged:increase1d": versions_of,
    "agent_version:agent_reliability_evaluations_passed:increase1d": versions_of,
    "agent_version:agent_reliability_evaluations_judged_other_versions:increase1d": versions_of,
    "agent_version:agent_reliability_pass_other_versions:ratio_increase1d": versions_of,
    "agent_tool_outcome:agent_reliability_tool_calls:rate1h": lambda w: {
        series(gen_ai_agent_name=a, gen_ai_tool_name=t, reliability_outcome=o) for a, t, o in w.calls()
    },
    "agent:agent_reliability_tool_calls:rate1h": lambda w: agents_of(w.calls()),
    "agent:agent_reliability_tool_call_errors:ratio_rate1h": lambda w: agents_of(w.calls()),
    "agent:agent_reliability_tool_call_refusals:ratio_rate1h": lambda w: agents_of(w.calls()),
    "agent:agent_reliability_tool_calls_unexpected:ratio_rate1h": lambda w: agents_of(w.calls()),
    "agent_tool:agent_reliability_tool_calls_unexpected:increase1h": lambda w: {
        series(gen_ai_agent_name=a, gen_ai_tool_name=t) for a, t in w.unexpected()
    },
    "agent:agent_reliability_reputation_score:min": lambda w: {series(gen_ai_agent_name=a) for a in w.ranks_after},
    "agent:agent_reliability_reputation_grade:min": lambda w: {series(gen_ai_agent_name=a) for a in w.ranks_after},
    "instance:agent_reliability_spans_received:rate5m": lambda w: instances(w, "main", "stressed"),
    "instance_reason:agent_reliability_spans_dropped:rate5m": lambda w: {
        series(job=JOB, instance=w.stressed_instance, reason=r) for r in ("overloaded", "invalid", "trace_full")
    },
    # stressed never judges: its traces are evicted unjudged
    "instance_reason:agent_reliability_traces_dropped:rate5m": lambda w: {
        series(job=JOB, instance=w.stressed_instance, reason="max_traces")
    },
    # only main judges (stressed waits 600 s), so only main has re-judged anything
    "instance:agent_reliability_evaluations_late:rate5m": lambda w: instances(w, "main"),
    "instance:agent_reliability_traces_buffered:sum": lambda w: instances(w, "main", "stressed"),
    "instance:agent_reliability_receiver_request_duration_seconds:p99_rate5m": lambda w: instances(w, "main", "stressed"),
    # alerts, as their expressions stand (their `for` aside)
    "AgentPassRateLow": pass_rate_low,
    "AgentVersionPassRateBelowPrevious": version_below_others,
    "AgentToolErrorRateHigh": tool_share_high("error", 0.1),
    "AgentToolRefusalRateHigh": tool_share_high("refused", 0.05),
    "AgentUnexpectedToolCalls": lambda w: {
        series(gen_ai_agent_name=a, gen_ai_tool_name=t) for a, t in w.unexpected(w.second)
    },
    "AgentReputationGradeDropped": lambda w: {
        series(gen_ai_agent_name=a) for a, rank in w.ranks_after.items() if rank < w.ranks_before.get(a, rank)
    },
    "ReceiverOverloaded": lambda w: instances(w, "stressed"),
    "ReceiverDroppingSpans": lambda w: {
        series(job=JOB, instance=w.stressed_instance, reason=r) for r in ("invalid", "trace_full")
    },
    "ReceiverEvictingTraces": lambda w: instances(w, "stressed"),
    "ReceiverSlowRequests": lambda w: {
        frozenset((k, v) for k, v in labels.items() if k != "__name__")
        for labels, value in w.prometheus.query("instance:agent_reliability_receiver_request_duration_seconds:p99_rate5m")
        if value > 1
    },
}


def label_sets(result: list[tuple[dict[str, str], float]]) -> set[Series]:
    return {frozenset((k, v) for k, v in labels.items() if k != "__name__") for labels, _ in result}


def values(world: World, expr: str) -> dict[Series, float]:
    return {frozenset((k, v) for k, v in labels.items() if k != "__name__"): value for labels, value in world.prometheus.query(expr)}


# -- the tests ------------------------------------------------------------------------------


def test_every_rule_and_every_dashboard_query_has_its_expected_series():
    assert set(RULE_SERIES) == set(rule_expressions())
    assert set(DASHBOARD_QUERIES) == set(dashboard_queries(dashboard()))


def test_every_rule_evaluates_without_error(world):
    rules = [rule for group in world.prometheus.api("rules")["groups"] for rule in group["rules"]]
    assert len(rules) == len(rule_expressions())
    assert [(r["name"], r["lastError"]) for r in rules if r["health"] != "ok"] == []


@pytest.mark.parametrize("name", sorted(RULE_SERIES))
def test_rule_expression_returns_its_series(world, name):
    expected = RULE_SERIES[name](world)
    result = world.prometheus.query(rule_expressions()[name])
    assert label_sets(result) == expected
    if name.startswith(("Agent", "Receiver")) and name != "ReceiverSlowRequests":
        assert expected, f"{name} should fire on this data"


@pytest.mark.parametrize("expr", sorted(DASHBOARD_QUERIES))
def test_dashboard_query_returns_series_with_its_legend_labels(world, expr):
    result = world.prometheus.query(concrete(expr))
    assert result, expr
    assert {frozenset(labels) - {"__name__"} for labels, _ in result} == {frozenset(DASHBOARD_QUERIES[expr])}


def test_the_dashboard_agent_variable_lists_every_judged_agent(world):
    variable = next(v for v in dashboard()["templating"]["list"] if v["name"] == "agent")
    metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["query"]["query"]).groups()
    found = world.prometheus.api(f"label/{label}/values", **{"match[]": metric})
    assert set(found) == {agent for agent, _, _ in world.evaluations()}


# -- a few values --------------------------------------------------------------------------


def test_pass_rates_are_the_second_round_s(world):
    rates = values(world, "agent_expectation:agent_reliability_pass:ratio_rate1h")
    judged = world.evaluations(world.second)
    calculator = series(gen_ai_agent_name="calculator", reliability_expectation="calculator-multiplies")
    passed, failed = judged[("calculator", "calculator-multiplies", "PASSED")], judged[("calculator", "calculator-multiplies", "FAILED")]
    assert passed and failed
    assert rates[calculator] == pytest.approx(passed / (passed + failed), abs=0.02)
    assert rates[series(gen_ai_agent_name="router", reliability_expectation="router-asks-the-researcher")] == 0  # never passed
    assert rates[series(gen_ai_agent_name="weather", reliability_expectation="default")] == 1  # never failed
    assert rates[series(gen_ai_agent_name="steady", reliability_expectation="default")] == 0  # passed in the first round only


def test_version_pass_rates_are_the_second_round_s(world):
    rates = values(world, "agent_version:agent_reliability_pass:ratio_rate1h")
    others = values(world, "agent_version:agent_reliability_pass_other_versions:ratio_increase1d")
    old, new = (series(gen_ai_agent_name="released", gen_ai_agent_version=v) for v in ("1.0", "1.1"))
    # A version's own pass rate is one counter's rate over itself when it never failed: exactly 1.
    # Its other versions' pass rate is a difference of extrapolated increases (the agent's sum
    # less this version's) over another: 1 only to rounding, 0.9999999999999999 as often as not.
    # 1.1's rates are extrapolated past the first and last samples a little differently for its
    # PASSED and FAILED counters, hence the tolerance.
    assert (rates[old], rates[new]) == (1.0, pytest.approx(2 / 12, abs=0.02))
    assert (others[old], others[new]) == (pytest.approx(2 / 12, abs=0.02), pytest.approx(1.0, rel=1e-9))


def test_tool_call_shares_are_the_second_round_s(world):
    calls = world.calls(world.second)
    total = sum(n for (agent, _, _), n in calls.items() if agent == "calculator")
    for rule, outcome in (("errors", "error"), ("refusals", "refused")):
        share = values(world, f"agent:agent_reliability_tool_call_{rule}:ratio_rate1h")[series(gen_ai_agent_name="calculator")]
        hits = sum(n for (agent, _, o), n in calls.items() if agent == "calculator" and o == outcome)
        assert share == pytest.approx(hits / total, abs=0.02), rule
    unexpected = values(world, "agent_tool:agent_reliability_tool_calls_unexpected:increase1h")
    for (agent, tool), n in world.unexpected(world.second).items():
        # an increase is extrapolated past the first and last samples (up to a scrape interval
        # each side, over a round that lasts several seconds), never less
        assert n <= unexpected[series(gen_ai_agent_name=agent, gen_ai_tool_name=tool)] <= n * 1.5, (agent, tool)


def test_reputation_figures_are_the_receiver_s_standings(world):
    grades = values(world, "agent:agent_reliability_reputation_grade:min")
    assert grades == {series(gen_ai_agent_name=a): rank for a, rank in world.ranks_after.items()}
    scores = values(world, "agent:agent_reliability_reputation_score:min")
    standings = world.main.http("GET", "/api/v1/reputation").json()["standings"]
    assert scores == pytest.approx({series(gen_ai_agent_name=s["agent"]): s["score"] for s in standings})


def test_receiver_health_figures(world):
    dropped = values(world, "instance_reason:agent_reliability_spans_dropped:rate5m")
    assert all(rate > 0 for rate in dropped.values()), dropped
    evicted = values(world, "instance_reason:agent_reliability_traces_dropped:rate5m")
    assert all(rate > 0 for rate in evicted.values()), evicted
    buffered = values(world, "instance:agent_reliability_traces_buffered:sum")
    assert buffered[next(iter(instances(world, "stressed")))] == STRESSED["max_traces"]
