"""Budgets (SPEC §5.2): ``max_model_calls``, ``max_total_tokens``, ``max_duration_ms`` and
``max_repeated_calls``, measured from the spans and reported in every verdict's ``usage``
whether a budget is set or not; a broken budget is a readable sentence in
``policy_violations``, and a budget the spans cannot measure is not evaluated, never passed."""

from __future__ import annotations

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.model import OK, Attempt, Run, SpanData
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS


def first_run(relative: str, expectation: Expectation | None = None):
    telemetry = read_telemetry(CORPUS / relative)
    engine = Engine([expectation] if expectation else [])
    return judge_spans(engine, telemetry.spans, telemetry.logs)[0]


def span_attribute(relative: str, span_id: int, key: str):
    [span] = [s for s in read_telemetry(CORPUS / relative).spans if s.span_id == span_id]
    return span.attributes[key]


# Each known convention's usage attributes, from real traces. Where the producer also writes
# the run's total on its run span, that total is the oracle: the sum over the model calls must
# equal it. The others were added up by hand from the model-call spans.
TOKENS = [
    # (trace, model calls, total tokens, the run span's own total: keys to add, or None)
    pytest.param("strands/error_retry.json", 3, 186, ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"),
                 id="genai-strands-input-output"),
    pytest.param("openai_v2/single_tool.json", 2, 36, None, id="genai-openai-v2"),
    pytest.param("openai_v2_latest/single_tool.json", 2, 36, None, id="genai-openai-v2-latest-mode"),
    pytest.param("pydantic_ai/error_fatal.json", 1, 60,
                 ("gen_ai.aggregated_usage.input_tokens", "gen_ai.aggregated_usage.output_tokens"), id="genai-pydantic-ai"),
    pytest.param("traceloop_langgraph/single_tool.json", 2, 36, None, id="traceloop-langgraph-genai-usage"),
    pytest.param("vercel_ai/single_tool.json", 2, 36, ("ai.usage.totalTokens",), id="vercel-ai-usage"),
    pytest.param("vercel_ai_otel/single_tool.json", 2, 36, ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"),
                 id="vercel-genai-usage"),
    pytest.param("smolagents/code_agent.json", 1, 18, ("llm.token_count.total",), id="openinference-smolagents"),
    pytest.param("agno/agent_single_tool.json", 2, 226, None, id="openinference-agno"),
    pytest.param("openai_agents/single_tool.json", 2, 125, None, id="openinference-openai-agents"),
    pytest.param("crewai_event_listener/single_tool.json", 2, 36, None, id="openinference-crewai"),
    # LlamaIndex nests each call in a second LLM span, and writes a preparation LLM span beside it
    pytest.param("llama_index/single_tool_nonstreaming.json", 2, 36, None, id="openinference-llama-index-nested"),
]


@pytest.mark.parametrize(("trace", "calls", "tokens", "oracle"), TOKENS)
def test_token_usage_from_each_convention(trace, calls, tokens, oracle):
    result = first_run(trace)
    assert (result.verdict.usage.model_calls, result.verdict.usage.total_tokens) == (calls, tokens)
    if oracle is not None:
        assert tokens == sum(span_attribute(trace, result.run_span_id, key) for key in oracle)


@pytest.mark.parametrize(("trace", "calls", "tokens", "oracle"), TOKENS)
def test_a_token_budget_fails_only_above_the_usage(trace, calls, tokens, oracle):
    within = first_run(trace, Expectation(name="budget", max_total_tokens=tokens))
    assert within.verdict.policy_violations == [] and within.verdict.score == 1.0
    over = first_run(trace, Expectation(name="budget", max_total_tokens=tokens - 1))
    assert over.verdict.failed
    assert over.verdict.policy_violations == [f"used {tokens:,} tokens; the budget (max_total_tokens) is {tokens - 1:,}"]


def test_member_runs_usage_is_counted_with_the_run():
    # strands' agent-as-tool: the orchestrator's run span totals only its own calls (123);
    # the researcher it delegates to used another 123, and the run's usage holds both.
    trace = "strands/delegation_agent_as_tool.json"
    result = first_run(trace)
    own = sum(span_attribute(trace, result.run_span_id, k) for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"))
    assert (own, result.verdict.usage.total_tokens, result.verdict.usage.model_calls) == (123, 246, 4)


NOT_MEASURED = [
    # (trace, budget, the reason given)
    pytest.param("llama_index/single_tool.json", {"max_total_tokens": 10},
                 "max_total_tokens not evaluated: 2 of 2 model calls carry no token usage", id="streaming-llama-index-no-usage"),
    pytest.param("google_adk_legacy/single_tool.json", {"max_total_tokens": 10},
                 "max_total_tokens not evaluated: 2 of 2 model calls carry no token usage", id="adk-no-usage"),
    pytest.param("autogen/single_tool.json", {"max_model_calls": 5},
                 "max_model_calls not evaluated: the spans record no model calls", id="autogen-no-model-spans"),
    pytest.param("autogen/single_tool.json", {"max_total_tokens": 10},
                 "max_total_tokens not evaluated: the spans record no model calls", id="autogen-no-model-spans-tokens"),
]


@pytest.mark.parametrize(("trace", "budget", "reason"), NOT_MEASURED)
def test_a_budget_the_spans_cannot_measure_is_not_evaluated(trace, budget, reason):
    result = first_run(trace, Expectation(name="budget", **budget))
    assert result.verdict.eval_status == "NOT_EVALUATED"
    assert result.verdict.unevaluated_checks == [reason]


def test_usage_is_measured_with_no_budget_set():
    result = first_run("openai_v2_latest/single_tool.json")
    usage = result.verdict.usage
    assert (usage.model_calls, usage.total_tokens, usage.max_repeated_calls) == (2, 36, 1)
    assert usage.duration_ms == pytest.approx((result.end_ns - result.start_ns) / 1e6)
    assert result.to_json()["usage"] == {
        "model_calls": 2, "total_tokens": 36, "duration_ms": usage.duration_ms, "max_repeated_calls": 1,
    }


def run_with(*attempts: Attempt, start_ns: int = 1_000_000_000, end_ns: int = 4_200_000_000, **fields) -> Run:
    return Run(1, 2, "solo", "invoke_agent solo", start_ns, end_ns, own_attempts=list(attempts), **fields)


def call(tool: str, captured: bool = True, **arguments) -> Attempt:
    return Attempt(tool, arguments, OK, "solo", ("solo",), arguments_captured=captured)


BUDGETS = [
    # (run, budget, policy_violations, unevaluated_checks)
    pytest.param(run_with(model_calls=7, tokens=100), {"max_model_calls": 5},
                 ["made 7 model calls; the budget (max_model_calls) is 5"], [], id="model-calls-over"),
    pytest.param(run_with(model_calls=5, tokens=100), {"max_model_calls": 5}, [], [], id="model-calls-at"),
    pytest.param(run_with(model_calls=3, tokens=12_400), {"max_total_tokens": 10_000},
                 ["used 12,400 tokens; the budget (max_total_tokens) is 10,000"], [], id="tokens-over"),
    # Over budget on the calls that carry usage: over whatever the others used.
    pytest.param(run_with(model_calls=3, tokens=12_400, untokened_model_calls=1), {"max_total_tokens": 10_000},
                 ["used 12,400 tokens; the budget (max_total_tokens) is 10,000"], [], id="tokens-over-with-some-unknown"),
    pytest.param(run_with(model_calls=3, tokens=400, untokened_model_calls=1), {"max_total_tokens": 10_000}, [],
                 ["max_total_tokens not evaluated: 1 of 3 model calls carry no token usage"], id="tokens-within-some-unknown"),
    pytest.param(run_with(), {"max_duration_ms": 2000},
                 ["ran for 3,200 ms; the budget (max_duration_ms) is 2,000 ms"], [], id="duration-over"),
    pytest.param(run_with(end_ns=2_999_500_000), {"max_duration_ms": 2000}, [], [], id="duration-within"),
    pytest.param(run_with(start_ns=0, end_ns=0), {"max_duration_ms": 2000}, [],
                 ["max_duration_ms not evaluated: the run span carries no times"], id="duration-unknown"),
    pytest.param(run_with(call("search", q="a"), call("search", q="a"), call("search", q="a")),
                 {"max_repeated_calls": 2},
                 ["called search 3 times with the same arguments; the budget (max_repeated_calls) is 2"], [],
                 id="repeated-over"),
    pytest.param(run_with(call("search", q="a"), call("search", q="b"), call("search", q="a")),
                 {"max_repeated_calls": 2}, [], [], id="repeated-different-arguments"),
    pytest.param(run_with(call("add", a=10), call("add", a=10.0)), {"max_repeated_calls": 1},
                 ["called add 2 times with the same arguments; the budget (max_repeated_calls) is 1"], [],
                 id="repeated-equal-as-python-compares"),
    pytest.param(run_with(call("search", captured=False), call("search", captured=False)), {"max_repeated_calls": 1},
                 [], ["max_repeated_calls not evaluated: arguments of search not captured: enable content capture"],
                 id="repeated-arguments-not-captured"),
]


@pytest.mark.parametrize(("run", "budget", "violations", "unevaluated"), BUDGETS)
def test_budgets(run, budget, violations, unevaluated):
    verdict = evaluate(run, Expectation(name="budget", **budget))
    assert verdict.policy_violations == violations
    assert verdict.unevaluated_checks == unevaluated
    assert verdict.eval_status == ("FAILED" if violations else "NOT_EVALUATED" if unevaluated else "PASSED")


def test_a_model_call_span_inside_another_is_one_call():
    from otel_reliability.adapters import to_record
    from otel_reliability.assembly import assemble

    run = SpanData(1, 1, 0, "invoke_agent solo", 0, 100, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solo"})
    outer = SpanData(1, 2, 1, "call_llm", 10, 50, {"gcp.vertex.agent.llm_response": "{}", "gen_ai.usage.input_tokens": 30,
                                                    "gen_ai.usage.output_tokens": 5})
    inner = SpanData(1, 3, 2, "generate_content m", 11, 49, {"gen_ai.operation.name": "generate_content",
                                                             "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 5})
    [assembled] = assemble(map(to_record, [run, outer, inner]))
    assert (assembled.model_calls, assembled.tokens) == (1, 35)


def test_repeats_are_unknown_when_no_call_captured_its_arguments():
    # openai-v2 without content capture records no arguments: equal or not, nobody can say.
    assert first_run("openai_v2/single_tool.json").verdict.usage.max_repeated_calls is None


@pytest.mark.parametrize("trace", ["vercel_ai/blocked_approval_denied.json", "vercel_ai/approval_approved.json"])
def test_a_resumed_run_counts_only_its_own_model_calls(trace):
    # The approval pauses the run; the resumed run (a new ai.generateText span) continues it.
    # Each result counts the calls under its own run span, so their sum is every call once.
    telemetry = read_telemetry(CORPUS / trace)
    results = judge_spans(Engine(), telemetry.spans, telemetry.logs)
    calls = [s for s in telemetry.spans if s.name == "ai.generateText.doGenerate"]
    assert len(results) == 2
    assert sum(r.verdict.usage.model_calls for r in results) == len(calls) == 2
    assert sum(r.verdict.usage.total_tokens for r in results) == sum(s.attributes["ai.usage.totalTokens"] for s in calls)
