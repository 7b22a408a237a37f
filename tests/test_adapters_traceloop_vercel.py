"""What the OpenLLMetry (traceloop) and Vercel AI SDK convention files read from a span, beyond the corpus.

The corpus tests (test_corpus_truth.py) pin whole chains; these pin the readings a real
trace of this sample does not exercise: hostile or odd wrapped arguments, errors that
are control flow or a tool body's own validation, and the front door's run test.
"""

from __future__ import annotations

import json

import pytest

from otel_reliability.adapters import may_be_run, to_record
from otel_reliability.assembly import assemble
from otel_reliability.model import STATUS_ERROR, EventData, Role, SpanData
from otel_reliability.sources import read_spans

from .corpus import trace_files


def _tool_span(arguments, status=0, message="", events=()):
    attributes = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "multiply",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "multiply",
        "gen_ai.tool.call.arguments": json.dumps(arguments),
    }
    return SpanData(1, 3, 2, "execute_tool multiply", 10, 20, attributes, tuple(events), status, message)


def _exception(exception_type, message):
    return EventData("exception", {"exception.type": exception_type, "exception.message": message})


@pytest.mark.parametrize(
    ("wrapper", "arguments"),
    [
        ({"input_str": "{'a': 10}", "inputs": {"a": 10}, "kwargs": {"tool_call_id": "c1"}}, {"a": 10}),
        ({"input_str": "{'a': 10, 'b': (1, 2)}", "kwargs": {"tool_call_id": "c1"}}, {"a": 10, "b": (1, 2)}),
        # code is never run: the text stays the argument
        ({"input_str": "__import__('os').getcwd()", "kwargs": {"tool_call_id": "c1"}}, "__import__('os').getcwd()"),
        ({"input_str": "just text", "kwargs": {"tool_call_id": "c1"}}, "just text"),
    ],
    ids=["inputs-object", "python-literal", "code-stays-text", "plain-string"],
)
def test_a_wrapped_tool_input_gives_its_arguments_and_call_id(wrapper, arguments):
    record = to_record(_tool_span(wrapper))
    assert (record.role, record.tool_name, record.call_id, record.arguments) == (Role.TOOL, "multiply", "c1", arguments)


def test_arguments_without_the_wrapper_are_kept_as_recorded():
    record = to_record(_tool_span({"a": 10}))
    assert (record.call_id, json.loads(record.arguments)) == (None, {"a": 10})


@pytest.mark.parametrize(
    ("exception_type", "message", "outcome"),
    [
        ("pydantic_core._pydantic_core.ValidationError", "1 validation error for multiply\nb\n  Input should be…", "refused"),
        # the body validated something else: it ran, and failed
        ("pydantic_core._pydantic_core.ValidationError", "1 validation error for Weather\ntemp", "error"),
        ("ConnectionError", "network unreachable", "error"),
    ],
    ids=["own-arguments-invalid", "body-raised-validation-error", "runtime-error"],
)
def test_a_failed_tool_span_is_a_refusal_only_when_its_own_arguments_failed_validation(exception_type, message, outcome):
    span = _tool_span({"inputs": {"a": 1}, "kwargs": {"tool_call_id": "c1"}}, STATUS_ERROR, message, [_exception(exception_type, message)])
    record = to_record(span)
    assert (record.refusal is not None, record.error is not None) == (outcome == "refused", True)


@pytest.mark.parametrize(
    ("exception_type", "failed"),
    [("langgraph.errors.ParentCommand", False), ("langgraph.errors.GraphInterrupt", False), ("ValueError", True)],
)
def test_langgraph_control_flow_marked_error_is_no_failure(exception_type, failed):
    attributes = {"traceloop.span.kind": "task", "traceloop.entity.name": "tools", "gen_ai.operation.name": "execute_task"}
    span = SpanData(1, 3, 2, "execute_task tools", 10, 20, attributes, (_exception(exception_type, "x"),), STATUS_ERROR, "x")
    assert (to_record(span).error is not None) == failed


def _spans_of(framework):
    return [span for path in trace_files(framework) for span in read_spans(path)]


@pytest.mark.parametrize("framework", ["traceloop_langgraph", "llama_index_traceloop", "agno_traceloop", "crewai_traceloop", "vercel_ai"])
def test_every_span_read_as_a_run_is_held_back_by_the_front_door_test(framework):
    # The span processor holds back what may_be_run says may be a run, to forward it with its verdict.
    for span in _spans_of(framework):
        if to_record(span).role is Role.AGENT_RUN:
            assert may_be_run(span.name, span.attributes, local_root=span.parent_id == 0), span.name


def test_a_graph_invocation_is_one_run_and_its_wrapper_span_is_not_a_run():
    path = next(p for p in trace_files("traceloop_langgraph") if p.stem == "delegation")
    spans = read_spans(path)
    runs = {s.name: to_record(s).role for s in spans if s.name.startswith("invoke_agent") or s.name.endswith(".workflow")}
    assert runs == {"invoke_agent coordinator": Role.OTHER, "invoke_agent researcher": Role.OTHER, "coordinator.workflow": Role.AGENT_RUN}
    [run] = assemble(map(to_record, spans))
    assert (run.agent, [m.agent for m in run.members]) == ("coordinator", ["researcher"])


def test_vercel_parallel_calls_that_start_in_the_same_millisecond_keep_the_order_they_were_asked_for():
    path = next(p for p in trace_files("vercel_ai") if p.stem == "parallel_tools")
    spans = read_spans(path)
    tools = [s for s in spans if s.name == "ai.toolCall"]
    assert len({s.start_ns for s in tools}) == 1  # the SDK's start times are whole milliseconds
    for order in (spans, list(reversed(spans))):  # the span processor sees them in end order
        [run] = assemble(map(to_record, order))
        assert [a.call_id for a in run.chain()] == ["call_mul_1", "call_add_1"]


@pytest.mark.parametrize(
    ("scenario", "outputs"),
    [
        ("traceloop_langgraph/single_tool", ["10 times 5 is 50."]),
        ("traceloop_langgraph/blocked_approval_rejected", [None, "Understood, I kept the report."]),  # paused on a call
        ("traceloop_langgraph/single_tool_content_off", [None]),
        ("vercel_ai/single_tool", ["50"]),
        ("vercel_ai/blocked_approval_denied", [None, "I was not allowed to delete it."]),
    ],
)
def test_a_run_s_output_is_its_final_answer(scenario, outputs):
    framework, stem = scenario.split("/")
    path = next(p for p in trace_files(framework) if p.stem == stem)
    assert [run.output for run in assemble(map(to_record, read_spans(path)))] == outputs


def test_a_run_that_answers_its_own_request_does_not_resume_another_run_that_left_the_same_call_pending():
    # traceloop's paused janitor run leaves call_delete_1 pending; a LangGraph janitor whose guard
    # refuses its own call_delete_1 answers that id too, but resumes nothing.
    def records(framework, stem):
        return [to_record(s) for s in read_spans(next(p for p in trace_files(framework) if p.stem == stem))]

    approval = records("traceloop_langgraph", "blocked_approval_rejected")
    paused_trace = min(approval, key=lambda r: r.start_ns).trace_id
    paused = [r for r in approval if r.trace_id == paused_trace]
    guarded = records("langgraph_subagents", "blocked_wrap_tool_call")
    [alone] = assemble(guarded)
    together = assemble(paused + guarded)
    [joined] = [run for run in together if run.trace_id == alone.trace_id]
    assert [(a.tool, a.outcome, a.arguments) for a in joined.chain()] == [(a.tool, a.outcome, a.arguments) for a in alone.chain()]
    assert [a.outcome for run in together if run.trace_id == paused_trace for a in run.chain()] == ["pending"]
