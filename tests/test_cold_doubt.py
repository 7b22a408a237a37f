"""The cold reader doubts what it cannot know (issue 31, point 6): read with every profile and
framework module removed (``knowledge.removed``), real corpus traces that it read confidently
wrong before now leave open what their spans cannot tell, and the verdict says only what
every reading agrees on.

* a run's last call of a tool frameworks call themselves to end a run (a final answer, a
  ``finish``) may be no call of the agent's: it is read with and without it;
* a failed call that a refusal before the body ran would leave looking the same may have been
  refused: its arguments do not fit its tool's declared parameters, or its span keeps no
  message (only an error type, nothing, or a message withheld);
* a failed call whose error says a check of what the body returned failed (an output
  guardrail) may have been ok;
* a nested failed tool span that records its enclosing call's failure again is no second call;
* a GenAI model span with no GenAI messages is read by the OpenInference messages it carries;
* ``fail_on`` is not evaluated on a run whose spans witness no call at all, nor (the checks
  that held) on a run whose calls all read ok while one of its other spans failed.
"""

from __future__ import annotations

from contextlib import nullcontext

import pytest

from otel_reliability.adapters import knowledge
from otel_reliability.adapters.lexicon import after_return
from otel_reliability.assembly.declared import misfit
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.expectations import Expectation
from otel_reliability.model import ERROR, FAILED, NOT_A_CALL, NOT_EVALUATED, OK, PASSED, REFUSED
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS, logs_of

MAX_ONE = Expectation(name="one call", max_tool_calls=1)
ERRORS_ONLY = Expectation(name="errors", fail_on=["error"])


def judged(trace: str, expectation: Expectation | None = None, cold: bool = True) -> list:
    """The verdicts of a corpus trace's runs, read cold (or with the framework's knowledge)."""
    path = CORPUS / f"{trace}.json"
    logs = logs_of(path)
    engine = Engine([expectation]) if expectation is not None else Engine()
    with knowledge.removed() if cold else nullcontext():
        results = judge_spans(engine, read_telemetry(path).spans, read_telemetry(logs).logs if logs else ())
    return [r.verdict for r in results]


def chain_of(trace: str) -> list[tuple[str, str, str | None]]:
    return [(a.tool, a.outcome, a.could_be) for v in judged(trace) for a in v.chain]


# (trace, the tool that ends its run): the last call, opened as maybe no call
ENDING = [
    ("smolagents/single_tool", "final_answer"),
    ("beeai/single_tool", "final_answer"),
    ("dspy/single_tool", "finish"),
    ("semantic_kernel/delegation_handoff", "Handoff-complete_task"),
]


@pytest.mark.parametrize(("trace", "tool"), ENDING, ids=[t for t, _ in ENDING])
def test_a_run_ending_tool_called_last_may_be_no_call_of_the_agents(trace, tool):
    [*_, last] = chain_of(trace)
    assert last == (tool, OK, NOT_A_CALL)
    # the default expectation holds with it and without it
    assert {v.eval_status for v in judged(trace)} == {PASSED}
    # a call budget that holds only without it cannot be judged: the reason names the call
    [verdict] = [v for v in judged(trace, MAX_ONE) if any(a.tool == tool for a in v.chain)]
    if len([a for a in verdict.chain if a.tool]) == 2:
        assert verdict.eval_status == NOT_EVALUATED
        assert f"{tool} was a call of the agent's or the framework's own ending of the run" in " ".join(verdict.unevaluated_checks)


def test_with_the_frameworks_knowledge_its_ending_tool_is_no_call_at_all():
    assert [a.tool for v in judged("smolagents/single_tool", cold=False) for a in v.chain] == ["multiply"]


def test_a_run_ending_tool_called_before_the_end_of_its_run_is_a_call():
    # two turns, two runs: each run's own last call is its final answer, no other call is opened
    chain = chain_of("smolagents/multi_turn")
    assert [c for c in chain if c[2] == NOT_A_CALL] == [("final_answer", OK, NOT_A_CALL)] * 2
    assert [c[2] for c in chain if c[0] != "final_answer"] == [None, None]


# (trace, tool, words of the doubt): failed calls a refusal before the body would leave alike
REFUSED_ALIKE = [
    ("openai_agents_guardrails/invalid_arguments", "multiply", "do not fit the tool's declared parameters: a is a string, declared integer"),
    ("semantic_kernel/invalid_arguments_type", "MathPlugin-multiply", "a is a string, declared integer"),
    ("beeai/invalid_arguments", "multiply", "a is a string, declared integer"),
    ("mlflow_openai_agents/invalid_arguments", "multiply", "missing required b"),  # mlflow.chat.tools, by the convention file
    ("google_adk/invalid_arguments", "multiply", "do not fit the tool's declared parameters: missing required b"),
    ("google_adk/unknown_tool", "format_disk", "format_disk is not among the tools declared to the model (add, multiply)"),
    ("google_adk_legacy/invalid_arguments", "multiply", "keeps only an error type, no message: 'TOOL_ERROR'"),  # no definitions
    ("google_adk_legacy/unknown_tool", "format_disk", "keeps only an error type, no message: 'ValueError'"),
    ("mcp_openai_agents_semconv/server_unknown_tool", "legacy_lookup", "the execution span says ERROR with no message"),
    ("logfire_openai_agents/invalid_arguments", "multiply", "its message is withheld"),
    ("dspy/invalid_arguments", "multiply", "its error reads as a refusal: \"ValueError: Arg a is invalid"),
]


@pytest.mark.parametrize(("trace", "tool", "doubt"), REFUSED_ALIKE, ids=[t for t, *_ in REFUSED_ALIKE])
def test_a_failed_call_a_refusal_would_leave_alike_may_have_been_refused(trace, tool, doubt):
    [verdict] = judged(trace)
    [attempt] = [a for a in verdict.chain if a.tool == tool and a.outcome == ERROR]
    assert (attempt.could_be, doubt in attempt.witnesses.doubt) == (REFUSED, True), attempt.witnesses.doubt
    # fail_on [error, refused] fails it either way; fail_on [error] alone depends on it, and says so
    assert verdict.eval_status == FAILED
    [alone] = judged(trace, ERRORS_ONLY)
    assert alone.eval_status == NOT_EVALUATED
    assert f"{tool} was error or refused" in " ".join(alone.unevaluated_checks)


def test_a_body_that_raised_with_a_message_and_fitting_arguments_stays_a_failure():
    # BeeAI's divide by zero: "Tool Error", arguments as declared
    assert chain_of("beeai/tool_error")[0] == ("divide", ERROR, None)


@pytest.mark.parametrize(("arguments", "parameters", "declared", "says"), [
    ({"a": 10}, {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}, {},
     "missing required b"),
    ({"a": 10, "c": 1}, {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False}, {},
     "c is not a declared parameter"),
    ({"a": 10.0}, {"type": "object", "properties": {"a": {"type": "integer"}}}, {}, None),  # a whole number sent as a float
    ({"a": True}, {"type": "object", "properties": {"a": {"type": "number"}}}, {}, "a is a boolean, declared number"),
    ({"a": "ten"}, '{"anyOf": [{"type": "object"}]}', {}, None),  # a schema the reader does not follow fits anything
    ({"a": "ten"}, None, {"add": None}, "multiply is not among the tools declared to the model (add)"),
    ({"a": "ten"}, None, {"multiply": None}, None),  # declared with no parameters: nothing to check
])
def test_what_does_not_fit_a_tools_declared_parameters(arguments, parameters, declared, says):
    assert misfit("multiply", arguments, parameters, declared) == says


def test_a_nested_span_that_records_the_same_failure_again_is_no_second_call():
    # BeeAI reports the divide that raised as a tool span and, inside it, an "error" tool span
    [verdict] = judged("beeai/tool_error")
    assert [a.tool for a in verdict.chain] == ["divide", "divide", "final_answer"]
    assert len(verdict.chain[0].evidence) == 2


def test_a_genai_model_span_without_genai_messages_reads_the_openinference_ones():
    # strands under OpenInference: the refused request is seen only in OpenInference's messages
    assert chain_of("strands_openinference/refused_hook_cancel") == [("delete_file", REFUSED, None), ("delete_file", OK, None)]
    assert [v.eval_status for v in judged("strands_openinference/refused_hook_cancel")] == [FAILED]


NOTHING_WITNESSED = ["openai_agents_guardrails/input_guardrail_tripped"]


@pytest.mark.parametrize("trace", NOTHING_WITNESSED)
def test_fail_on_is_not_evaluated_on_a_run_whose_spans_witness_no_call(trace):
    for verdict in judged(trace):
        assert (verdict.chain, verdict.usage.model_calls, verdict.eval_status) == ([], 0, NOT_EVALUATED)
        assert any(c.startswith("fail_on error, refused: the spans record no model call and no tool call")
                   for c in verdict.unevaluated_checks), verdict.unevaluated_checks


# (trace, read cold, the verdict, (tool, outcome, open) of each call, what the run's verdict says it could not judge)
FAILED_STEP = [
    # DSPy: a reply naming a tool ReAct does not have fails the adapter's parse; cold, no span is that call
    ("dspy/unknown_tool", True, NOT_EVALUATED, [("multiply", OK, None), ("finish", OK, NOT_A_CALL)],
     "fail_on error, refused: every call reads ok, but a span of the run that is no call failed "
     "(ChatAdapter.__call__: AdapterParseError: Failed to parse field next_tool_name w…)"),
    ("dspy_litellm/unknown_tool", True, NOT_EVALUATED, [("multiply", OK, None), ("finish", OK, NOT_A_CALL)],
     "fail_on error, refused: every call reads ok, but a span of the run that is no call failed "
     "(ChatAdapter.__call__: AdapterParseError: Failed to parse field next_tool_name w…)"),
    # with DSPy's knowledge the failed parse is the refused call itself
    ("dspy/unknown_tool", False, FAILED, [("format_disk", REFUSED, None), ("multiply", OK, None)], None),
    # a failed step beside a failed call: the failure already seen breaks fail_on, confidently
    ("traceloop_langgraph/tool_error", True, FAILED, [("fetch_url", ERROR, None)], None),
    ("smolagents/tool_error", True, FAILED, [("divide", ERROR, None), ("divide", OK, None), ("final_answer", OK, NOT_A_CALL)], None),
]


@pytest.mark.parametrize(("trace", "cold", "status", "chain", "unjudged"), FAILED_STEP,
                         ids=[f"{t}-{'cold' if c else 'warm'}" for t, c, *_ in FAILED_STEP])
def test_fail_on_is_not_evaluated_where_every_call_reads_ok_but_another_span_of_the_run_failed(trace, cold, status, chain, unjudged):
    [verdict] = judged(trace, cold=cold)
    assert (verdict.eval_status, [(a.tool, a.outcome, a.could_be) for a in verdict.chain]) == (status, chain)
    said = [c for c in verdict.unevaluated_checks if c.startswith("fail_on")]
    assert said == ([] if unjudged is None else [f"{unjudged}, so a call that failed or was refused there would not be seen"])


def test_a_failed_step_beside_a_failed_call_leaves_the_other_fail_on_outcomes_judged():
    # traceloop over LangGraph: the tools node fails with the tool it ran; no refusal is hidden there
    [verdict] = judged("traceloop_langgraph/tool_error", Expectation(name="refusals", fail_on=["refused"]))
    assert (verdict.eval_status, verdict.unevaluated_checks) == (PASSED, [])


def test_a_call_failed_by_a_check_of_what_it_returned_may_have_been_ok():
    # openai-agents' tool output guardrail raised after read_config returned: the span fails with
    # the guardrail's tripwire; cold it is ok or failed, so fail_on is not judged; with the
    # framework's file its text says the body ran
    [verdict] = judged("openai_agents_guardrails/tool_output_guardrail_raise")
    [call] = verdict.chain
    assert (verdict.eval_status, call.tool, call.outcome, call.could_be) == (NOT_EVALUATED, "read_config", ERROR, OK)
    assert call.witnesses.doubt.startswith("the execution span says ERROR, its error reads as a check of what the body returned: ")
    [warm] = judged("openai_agents_guardrails/tool_output_guardrail_raise", cold=False)
    assert [(a.tool, a.outcome, a.could_be) for a in warm.chain] == [("read_config", OK, None)]


def test_a_guardrail_before_the_body_still_reads_as_a_refusal():
    # the tool input guardrail raised before delete_file ran: its text says nothing of a returned
    # body, so the failed call stays open as refused, and fail_on breaks either way
    assert not after_return("Tool input guardrail ToolInputGuardrail triggered tripwire")
    [verdict] = judged("openai_agents_guardrails/blocked_tool_input_guardrail_raise")
    assert (verdict.eval_status, [(a.tool, a.outcome, a.could_be) for a in verdict.chain]) == (FAILED, [("delete_file", ERROR, REFUSED)])
