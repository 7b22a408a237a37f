"""The tool-call metrics summed over the whole corpus (SPEC §6, revised 2026-12-01).

Every real trace of ``tests/fixtures/corpus`` (of ``FIGURES_CORPUS``, whose figures are pinned) is judged with
``tests/fixtures/corpus_expectations.yaml`` and its verdicts recorded by
``ReliabilityMetrics`` on a real SDK ``MeterProvider``. The figures must agree with the
verdicts' own JSON (the chain ``eval --format json`` prints): each (agent, tool)'s
outcomes add up to its calls, with no attempt counted twice, and the unexpected counter
counts exactly the attempts of tools the verdict lists as failed or additional.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from otel_reliability.emitters.metrics import ReliabilityMetrics
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.sources import read_spans

from .corpus import figures_files

EXPECTATIONS = Path(__file__).parent / "fixtures" / "corpus_expectations.yaml"
OUTCOMES = {"ok", "error", "refused", "pending"}


def sums(reader: InMemoryMetricReader, name: str, keys: tuple[str, ...]) -> Counter:
    found: Counter = Counter()
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        found[tuple(point.attributes[k] for k in keys)] += point.value
    return found


@pytest.fixture(scope="module")
def corpus_judged():
    """(metrics reader, the verdicts' JSON), each corpus file judged on its own."""
    reader = InMemoryMetricReader()
    metrics = ReliabilityMetrics(MeterProvider(metric_readers=[reader]))
    engine = Engine([EXPECTATIONS])
    verdicts = []
    for path in figures_files():
        results = judge_spans(engine, read_spans(path))
        metrics.record_many(results)
        verdicts += [r.to_json() for r in results]
    return reader, verdicts


def calls_in(verdicts) -> Counter:
    return Counter((c["agent"] or v["agent"], c["tool"], c["outcome"]) for v in verdicts for c in v["chain"])


def unexpected_in(verdicts) -> Counter:
    found: Counter = Counter()
    for v in verdicts:
        listed = set(v["failed_tool_calls"]) | set(v["additional_tool_calls"])
        found.update((c["agent"] or v["agent"], c["tool"]) for c in v["chain"] if c["tool"] in listed)
    return found


def test_each_attempt_is_counted_once_under_its_outcome(corpus_judged):
    reader, verdicts = corpus_judged
    counted = sums(reader, "agent.reliability.tool_calls", ("gen_ai.agent.name", "gen_ai.tool.name", "reliability.outcome"))
    assert {outcome for _, _, outcome in counted} <= OUTCOMES
    assert counted == calls_in(verdicts)


def test_a_tool_s_outcomes_add_up_to_its_calls(corpus_judged):
    reader, verdicts = corpus_judged
    counted = sums(reader, "agent.reliability.tool_calls", ("gen_ai.tool.name", "reliability.outcome"))
    per_tool: Counter = Counter()
    for (tool, _outcome), n in counted.items():
        per_tool[tool] += n
    calls = Counter(c["tool"] for v in verdicts for c in v["chain"])
    assert per_tool == calls
    assert sum(per_tool.values()) == sum(len(v["chain"]) for v in verdicts) > 50


def test_unexpected_counts_the_attempts_of_tools_the_verdict_did_not_allow(corpus_judged):
    reader, verdicts = corpus_judged
    unexpected = sums(reader, "agent.reliability.tool_calls.unexpected", ("gen_ai.agent.name", "gen_ai.tool.name"))
    assert unexpected == unexpected_in(verdicts)
    calls = calls_in(verdicts)
    for (agent, tool), n in unexpected.items():
        assert n <= sum(calls[(agent, tool, outcome)] for outcome in OUTCOMES), (agent, tool)


@pytest.mark.parametrize(
    ("agent", "tool", "count"),
    [
        ("calculator", "divide", 6),  # strict: errored and clean calls alike
        ("calculator", "format_disk", 2),  # refused twice, each attempt counted
        ("researcher", "compute", 5),  # lenient: additional calls still were not asked for
        ("researcher", "lookup", 1),  # the router's member, counted for the member
    ],
    ids=["strict", "refused-attempts", "lenient", "team-member"],
)
def test_unexpected_calls_of_the_corpus(corpus_judged, agent, tool, count):
    reader, _ = corpus_judged
    unexpected = sums(reader, "agent.reliability.tool_calls.unexpected", ("gen_ai.agent.name", "gen_ai.tool.name"))
    assert unexpected[(agent, tool)] == count
    assert unexpected[("calculator", "multiply")] == 0  # expected: never unexpected
