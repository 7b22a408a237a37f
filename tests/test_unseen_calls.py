"""A call no span names (issue 31, point 2): a model call whose recorded finish reason says it
stopped to have tools called, after which nothing of its run ran, asked for a call that never
ran. Where no request names that call (the instrumentation keeps no message parts) and no span
records it (a call over a limit, an unknown tool), ``fail_on`` refused (and pending) cannot be
judged: the run is ``NOT_EVALUATED``, its reason naming the model call. A call the run's spans
show ran, or another run carried on (a handoff's target, a held call resumed), leaves no doubt.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from otel_reliability.adapters import knowledge
from otel_reliability.adapters.common import stops_for_tools
from otel_reliability.adapters.conventions.model import SpanRule
from otel_reliability.adapters.conventions.reading import read_by_rule
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.assembly import assemble
from otel_reliability.model import FAILED, NOT_EVALUATED, PASSED, REFUSED, Attempt, Role, SpanData, SpanRecord, ToolRequest
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS

_UNSEEN = "finished asking for tools and no tool ran after it: a call the spans do not name may have been refused"

# trace → (status of each run, the model call its reason names or None), read from its spans
# alone (an instrumentation's logs, where it writes them, would name the calls), cold and warm alike
READ = {
    # LlamaIndex under OpenLLMetry: the second model turn asked for add (finish reason tool_call,
    # no message parts), max_iterations stopped the workflow before it ran: no span names add
    "llama_index_traceloop/blocked_max_iterations": ([NOT_EVALUATED], "the model call 'OpenAILike.task' (span 638e967651159b94)"),
    # the same instrumentation, every call asked for ran: the finish reasons say no more
    "llama_index_traceloop/multi_turn": ([PASSED, PASSED], None),
    # its model turns are read as model calls now, so the researcher's workflow (`run.task`) is its run
    "llama_index_traceloop/delegation_agent_as_tool": ([PASSED], None),
    # agent-framework with no content: the triage agent's handoff has no tool span, the refunds
    # agent's run that follows in the same trace carried it out
    "agent_framework_baseline_semconv/delegation_handoff": ([PASSED, PASSED], None),
    # the call held for approval ends the first run (its approval and run are the next trace's):
    # held, which the spans cannot tell from refused, as the reader says where it sees the request
    "agent_framework_baseline_semconv/approval_approved": (
        [NOT_EVALUATED, PASSED], "the model call 'chat scripted-model' (span 1bc92788cf43ffcf)"
    ),
    # Spring AI: the third multiply, over the per-tool limit, is refused after two others ran from
    # the same model turn: the finish reason cannot tell it (tests/corpus.py LIMITS)
    "spring_ai/limit": ([PASSED], None),
}


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "warm"])
@pytest.mark.parametrize("trace", list(READ))
def test_a_model_call_that_asked_for_tools_nothing_ran_after_leaves_fail_on_refused_undecided(trace, cold):
    statuses, model_call = READ[trace]
    with knowledge.removed() if cold else nullcontext():
        verdicts = [r.verdict for r in judge_spans(Engine(), read_telemetry(CORPUS / f"{trace}.json").spans)]
    assert [v.eval_status for v in verdicts] == statuses
    reasons = [reason for v in verdicts for reason in v.unevaluated_checks]
    if model_call is None:
        assert not any(_UNSEEN in reason for reason in reasons)
    else:
        assert reasons == [f"fail_on refused: {model_call} {_UNSEEN}"]


def test_a_refusal_the_spans_do_show_still_fails_the_run():
    # The same doubt changes nothing where fail_on refused already fails: a refused call named.
    run = assemble(_asked_then_nothing())[0]
    run.own_attempts.append(Attempt("add", {}, REFUSED, run.agent, (run.agent,), start_ns=5))
    verdict = evaluate(run, Expectation(name="no refusal", fail_on=["refused", "pending"]))
    assert verdict.eval_status == FAILED
    assert verdict.unevaluated_checks == [f"fail_on pending: the model call 'chat m' (span 0000000000000002) {_UNSEEN}"]


def _asked_then_nothing(*later: SpanRecord) -> list[SpanRecord]:
    return [
        SpanRecord(1, 1, 0, "invoke_agent calc", 0, 100, Role.AGENT_RUN, agent_name="calc"),
        SpanRecord(1, 2, 1, "chat m", 1, 4, Role.MODEL, model_call=True, stopped_for_tools=True),
        *later,
    ]


def _judged(records: list[SpanRecord]) -> tuple[str, list[str]]:
    [run] = assemble(records)
    verdict = evaluate(run, Expectation(name="default", fail_on=["error", "refused"]))
    return verdict.eval_status, verdict.unevaluated_checks


def test_synthetic_runs_read_the_finish_reason_as_the_spans_say():
    assert _judged(_asked_then_nothing()) == (NOT_EVALUATED, [f"fail_on refused: the model call 'chat m' (span 0000000000000002) {_UNSEEN}"])
    # a tool ran after it: the call it asked for is that one
    tool = SpanRecord(1, 3, 1, "execute_tool add", 5, 6, Role.TOOL, tool_name="add", arguments={}, returned=True, output="3")
    assert _judged(_asked_then_nothing(tool)) == (PASSED, [])
    # the call names what it asked for: the request is an attempt of its own (pending, here, and open)
    named = _asked_then_nothing()
    named[1].requests = (ToolRequest("add", {}, "c1"),)
    assert not any(_UNSEEN in reason for reason in _judged(named)[1])
    # a model call that stopped for any other reason asked for nothing
    plain = _asked_then_nothing()
    plain[1].stopped_for_tools = False
    assert _judged(plain) == (PASSED, [])


def test_a_later_model_call_bounds_what_ran_for_an_earlier_one():
    # asked, then asked again with no tool between: the first call's request never ran
    second = SpanRecord(1, 3, 1, "chat m", 10, 12, Role.MODEL, model_call=True)
    tool = SpanRecord(1, 4, 1, "execute_tool add", 13, 14, Role.TOOL, tool_name="add", arguments={}, returned=True, output="3")
    status, reasons = _judged(_asked_then_nothing(second, tool))
    assert status == NOT_EVALUATED and len(reasons) == 1


@pytest.mark.parametrize(
    "reasons, stopped",
    [(("tool_calls",), True), ('["TOOL_CALLS"]', True), ("tool_use", True), (["function_call"], True), ("Tool-Calls", True),
     (("stop",), False), ('["STOP"]', False), ("length", False), (None, False), ({"reason": "tool_calls"}, False)],
)
def test_a_finish_reason_that_stops_for_tools_is_read_in_any_spelling(reasons, stopped):
    assert stops_for_tools(reasons) is stopped


def test_a_convention_file_says_where_its_finish_reason_is():
    rule = SpanRule(when={"attribute": "sdk.kind", "equals": ["llm"]}, role="model", finish_reasons="sdk.stop_reason")
    span = SpanData(1, 2, 0, "llm", 0, 1, {"sdk.kind": "llm", "sdk.stop_reason": "tool_use"})
    assert read_by_rule(span, rule, None).stopped_for_tools is True


def test_the_genai_finish_reason_is_read_off_a_real_model_span():
    path = CORPUS / "spring_ai" / "limit.json"
    [result] = judge_spans(Engine(), read_telemetry(path).spans)
    assert result.verdict.eval_status == PASSED  # asked for three, two ran after it: the spans cannot tell (LIMITS)


def test_the_reason_names_the_unseen_model_calls_in_start_order_however_the_spans_arrived():
    # a receiver gets a trace's spans in any order (batches, a Collector): its verdict must read as
    # eval's of the file does, word for word
    spans = read_telemetry(CORPUS / "agent_framework_baseline_semconv" / "invalid_arguments.json").spans
    in_file = [r.verdict.unevaluated_checks for r in judge_spans(Engine(), list(spans))]
    reversed_ = [r.verdict.unevaluated_checks for r in judge_spans(Engine(), list(reversed(spans)))]
    assert in_file == reversed_ and "finished asking for tools" in in_file[0][0]
