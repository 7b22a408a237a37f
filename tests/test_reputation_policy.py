"""Access by grade: policy decisions, ``check_permission`` from live standings, and the guard
that blocks a tool call before it runs (marking its span and counting the denial).
"""

from __future__ import annotations

import asyncio

import pytest
import yaml
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability.reputation import (
    AccessPolicy,
    Grade,
    PermissionDenied,
    Reputation,
    ReputationConfig,
    check_permission,
)
from otel_reliability.reputation.config import ConfigError

POLICY_YAML = """
default: deny
unrated_grade: Saduq Hadith
agents:
  weather-agent-v1:
    grade: Saduq
    allowed_actions: [query_weather, query_express]
    need_manual_approval: true
    risk_level: medium
  search-agent-v1:
    grade: Thiqah
    allowed_actions: [search, summarize]
    need_manual_approval: false
    risk_level: low
grades:
  Thiqah: {allowed_actions: ["*"]}
  Saduq: {allowed_actions: [search, "db.read*"], need_manual_approval: true}
  Saduq Hadith: {allowed_actions: [search]}
"""
POLICY = AccessPolicy.model_validate(yaml.safe_load(POLICY_YAML))

T, S, SH, D, M = Grade.THIQAH, Grade.SADUQ, Grade.SADUQ_HADITH, Grade.DAIF, Grade.MATRUK

DECISIONS = [
    # (id, agent, action, grade, allowed, needs approval, part of the reason)
    ("listed_agent_at_its_grade_needs_approval", "weather-agent-v1", "query_weather", S, True, True, "may query_weather at grade Saduq"),
    ("listed_agent_above_its_grade", "weather-agent-v1", "query_express", T, True, True, "at grade Thiqah"),
    ("listed_agent_below_its_grade", "weather-agent-v1", "query_weather", SH, False, False, "grade Saduq Hadith is below the Saduq weather-agent-v1 needs"),
    ("listed_agent_outside_its_actions", "weather-agent-v1", "send_email", T, False, False, "send_email is not among weather-agent-v1's allowed actions"),
    ("listed_agent_ignores_grade_rules", "search-agent-v1", "delete_files", T, False, False, "not among"),
    ("trusted_search_agent", "search-agent-v1", "search", T, True, False, "may search"),
    ("search_agent_fallen_to_saduq", "search-agent-v1", "search", S, False, False, "below the Thiqah"),
    ("thiqah_may_do_anything", "other", "delete_files", T, True, False, "grade Thiqah may delete_files"),
    ("saduq_pattern_with_approval", "other", "db.read_users", S, True, True, "grade Saduq may db.read_users"),
    ("saduq_may_not_delete", "other", "delete_files", S, False, False, "grade Saduq may not delete_files (Thiqah or better may)"),
    ("grade_without_rule_gets_the_default", "other", "search", D, False, False, "grade Da'if has no rule; the policy's default is deny (Saduq Hadith or better may search)"),
    ("matruk_gets_the_default", "other", "search", M, False, False, "default is deny"),
    ("unrated_agent_gets_the_unrated_grade", "newcomer", "search", None, True, False, "grade Saduq Hadith (unrated) may search"),
]


@pytest.mark.parametrize(("id_", "agent", "action", "grade", "allowed", "approval", "reason"), DECISIONS, ids=[d[0] for d in DECISIONS])
def test_policy_decisions(id_, agent, action, grade, allowed, approval, reason):
    decision = POLICY.decide(agent, action, grade)
    assert (decision.allowed, decision.needs_approval) == (allowed, approval)
    assert reason in decision.reason
    assert bool(decision) == (allowed and not approval)


def test_default_allow_lets_ungoverned_agents_act():
    assert AccessPolicy(default="allow").decide("anyone", "anything", Grade.MATRUK).allowed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("grades: {Trusted: {allowed_actions: [x]}}", "unknown grade 'Trusted'"),
        ("agents: {a: {grade: Best}}", "unknown grade 'Best'"),
        ("default: maybe", "allow"),
        ("agents: {a: {allowed: [x]}}", "allowed"),
    ],
)
def test_invalid_policy_file_names_the_problem(tmp_path, text, message):
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        Reputation(":memory:", policy=path)
    assert str(path) in str(info.value)


# -- check_permission answers from the current standing --------------------------------------


def push_to(reputation: Reputation, agent: str, passes: int, fails: int) -> None:
    for i in range(passes + fails):
        reputation.feedback(agent, i < passes, "review", dimension="isnad")


@pytest.mark.parametrize(
    ("passes", "fails", "grade", "may_search", "may_delete"),
    [(10, 0, T, True, True), (8, 2, S, True, False), (6, 4, SH, True, False), (4, 6, D, False, False), (0, 10, M, False, False)],
)
def test_check_permission_follows_the_agents_standing(passes, fails, grade, may_search, may_delete):
    reputation = Reputation(":memory:", policy=POLICY, config=ReputationConfig(missing_dimension="renormalize"), cache_seconds=0)
    push_to(reputation, "other", passes, fails)
    assert reputation.standing("other").grade is grade
    assert reputation.check_permission("other", "search").allowed is may_search
    assert reputation.check_permission("other", "delete_files").allowed is may_delete
    assert check_permission("other", "search").allowed is may_search  # the module-level form asks the latest Reputation
    reputation.close()


def test_check_permission_without_a_policy_says_so():
    reputation = Reputation(":memory:")
    with pytest.raises(RuntimeError, match="no access policy"):
        reputation.check_permission("a", "b")


# -- the guard blocks before the call ----------------------------------------------------------


class Tracing:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("test")
        self.reader = InMemoryMetricReader()
        self.meters = MeterProvider(metric_readers=[self.reader])

    def denied_counts(self) -> dict[tuple[str, str], int]:
        counts = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "agent.reliability.policy.denied":
                        for point in metric.data.data_points:
                            counts[(point.attributes["gen_ai.agent.name"], point.attributes["gen_ai.tool.name"])] = point.value
        return counts


@pytest.fixture
def tracing() -> Tracing:
    return Tracing()


def reputation_at(tracing: Tracing, grade_passes: int, approve=None) -> Reputation:
    reputation = Reputation(
        ":memory:",
        policy=POLICY,
        config=ReputationConfig(missing_dimension="renormalize"),
        meter_provider=tracing.meters,
        approve=approve,
        cache_seconds=0,
    )
    push_to(reputation, "other", grade_passes, 10 - grade_passes)
    return reputation


def test_guard_lets_an_allowed_call_run(tracing):
    reputation = reputation_at(tracing, 10)
    calls = []

    @reputation.guard(agent="other")
    def delete_files(path: str) -> str:
        calls.append(path)
        return "deleted"

    assert delete_files("/tmp/x") == "deleted"
    assert calls == ["/tmp/x"]
    assert tracing.denied_counts() == {}


def test_guard_blocks_a_denied_call_before_it_runs_and_marks_the_tool_span(tracing):
    reputation = reputation_at(tracing, 8)  # Saduq: may not delete_files
    calls = []

    @reputation.guard(agent="other")
    def delete_files(path: str) -> str:
        calls.append(path)
        return "deleted"

    with tracing.tracer.start_as_current_span("execute_tool delete_files"):
        with pytest.raises(PermissionDenied, match="other may not delete_files: grade Saduq may not delete_files") as info:
            delete_files("/tmp/x")
    assert calls == []
    assert info.value.decision.grade is Grade.SADUQ
    [span] = tracing.exporter.get_finished_spans()
    assert span.attributes["reliability.policy.denied"] is True
    assert span.attributes["reliability.grade"] == "Saduq"
    assert "may not delete_files" in span.attributes["reliability.policy.reason"]
    assert tracing.denied_counts() == {("other", "delete_files"): 1}


@pytest.mark.parametrize(
    ("approve", "runs", "reason"),
    [
        (lambda decision: True, True, None),
        (lambda decision: False, False, "approval refused"),
        (None, False, "needs manual approval and no approver is configured"),
    ],
    ids=["approved", "refused", "no_approver"],
)
def test_guard_asks_for_manual_approval_when_the_policy_needs_it(tracing, approve, runs, reason):
    reputation = reputation_at(tracing, 8, approve=approve)  # Saduq: db.read* needs approval
    asked = []

    @reputation.guard("db.read_users", agent=lambda: "other")
    def read_users() -> list[str]:
        asked.append(1)
        return ["ada"]

    if runs:
        assert read_users() == ["ada"]
    else:
        with pytest.raises(PermissionDenied, match=reason):
            read_users()
    assert bool(asked) is runs


def test_guard_can_answer_the_model_instead_of_raising(tracing):
    reputation = reputation_at(tracing, 4)  # Da'if

    @reputation.guard(agent="other", on_denied=lambda denied: f"refused: {denied.decision.reason}")
    def search(query: str) -> str:
        raise AssertionError("must not run")

    assert search("weather").startswith("refused: grade Da'if has no rule")


def test_guard_wraps_async_tools(tracing):
    reputation = reputation_at(tracing, 10)

    @reputation.guard(agent="other")
    async def search(query: str) -> str:
        return f"results for {query}"

    assert asyncio.run(search("otel")) == "results for otel"
    reputation_low = reputation_at(tracing, 0)

    @reputation_low.guard(agent="other")
    async def summarize(text: str) -> str:
        raise AssertionError("must not run")

    with pytest.raises(PermissionDenied):
        asyncio.run(summarize("x"))


def test_feedback_items_are_weighted_by_their_confidence():
    reputation = Reputation(":memory:", config=ReputationConfig(missing_dimension="renormalize"))
    reputation.feedback("a", True, "database check", confidence=1.0)
    standing = reputation.feedback("a", False, "llm judge", confidence=0.7, source="llm_judge")
    assert standing.dimensions["sidq"] == pytest.approx(100 / 1.7)
    assert [e.source for w in reputation.window("a") for e in w.evidence] == ["llm_judge", "feedback"]
    reputation.close()
