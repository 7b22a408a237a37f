"""Every real trace reconstructs to what really ran (``.truth.json``): tool, agent, outcome.

What spans cannot show is documented in docs/conventions.md ("What spans cannot
tell"); the scenarios of this sample where they cannot are listed in ``corpus.LIMITS``
and must reconstruct to what their spans record (``corpus.AS_RECORDED``) instead.
"""

from __future__ import annotations

import dataclasses

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.sources import read_spans

from .corpus import AS_RECORDED, LIMITS, adapted_files, companion, scenario_id, trace_files

TRUTH_FILES = [p for p in adapted_files() if p.with_name(p.stem + ".truth.json").exists()]


def reconstructed(path):
    """Attempts by call id, in start order; a continuation's view of an attempt supersedes the paused run's."""
    attempts = {}
    for run in assemble(to_record(s) for s in read_spans(path)):
        for attempt in run.chain():
            attempts[attempt.call_id] = (attempt.tool, attempt.agent, attempt.outcome)
    return attempts


def expected(path):
    """What the scenario must reconstruct to, in start order: its truth, or what its spans record when they cannot tell."""
    scenario = scenario_id(path)
    if scenario in LIMITS:
        return {call_id: (tool, agent, outcome) for call_id, tool, agent, outcome in AS_RECORDED[scenario]}
    truth = companion(path, "truth")
    in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
    return {t["tool_call_id"]: (t["name"], t["agent"], t["outcome"]) for t in in_order}


@pytest.mark.parametrize("path", TRUTH_FILES, ids=scenario_id)
def test_every_attempt_reconstructs_to_what_really_ran(path):
    assert reconstructed(path) == expected(path)


@pytest.mark.parametrize("path", TRUTH_FILES, ids=scenario_id)
def test_attempts_follow_the_real_start_order(path):
    assert list(reconstructed(path)) == list(expected(path))


def test_every_limit_names_an_adapted_scenario_and_says_what_its_spans_record():
    scenarios = {scenario_id(p) for p in TRUTH_FILES}
    assert set(LIMITS) <= scenarios
    assert set(AS_RECORDED) == set(LIMITS)
    assert list(LIMITS) == sorted(LIMITS)
    assert all(reason.strip() for reason in LIMITS.values())


@pytest.mark.parametrize("path", trace_files(), ids=scenario_id)
def test_no_chain_holds_the_same_execution_twice(path):
    # An execution span is one attempt: never also a second attempt, nor its request a phantom
    # attempt beside it. A continuation repeats its predecessor's attempts, so runs are apart.
    for run in assemble(to_record(s) for s in read_spans(path)):
        chain = run.chain()
        executions = [a.span_id for a in chain if a.span_id is not None]
        assert len(executions) == len(set(executions)), run.agent
        executed_ids = {a.call_id for a in chain if a.span_id is not None and a.call_id is not None}
        unexecuted = [a.call_id for a in chain if a.span_id is None and a.call_id is not None]
        assert not executed_ids & set(unexecuted), run.agent
        assert len(unexecuted) == len(set(unexecuted)), run.agent


def test_delegated_member_calls_belong_to_the_member_and_to_the_top_level_run():
    path = next(p for p in TRUTH_FILES if scenario_id(p) == "pydantic_ai/delegation")
    [run] = assemble(to_record(s) for s in read_spans(path))
    assert run.agent == "router"
    assert [m.agent for m in run.members] == ["researcher"]
    assert [(a.tool, a.agent_path) for a in run.evidence()] == [
        ("ask_researcher", ("router",)),
        ("lookup", ("router", "researcher")),
    ]


def test_history_replayed_in_model_inputs_is_not_counted_again():
    path = next(p for p in TRUTH_FILES if scenario_id(p) == "langgraph/multi_turn")
    runs = assemble(to_record(s) for s in read_spans(path))
    assert [[a.tool for a in run.chain()] for run in runs] == [["multiply"], ["add"]]


def test_a_resumed_run_joins_the_run_it_resumes_and_resolves_its_pending_call():
    path = next(p for p in TRUTH_FILES if scenario_id(p) == "pydantic_ai/refused_approval_denied")
    paused, resumed = assemble(to_record(s) for s in read_spans(path))
    assert [(a.tool, a.outcome) for a in paused.chain()] == [("delete_file", "pending")]
    assert [(a.tool, a.outcome, a.error) for a in resumed.chain()] == [
        ("delete_file", "refused", "Deleting system files is not allowed")
    ]


def test_a_resumed_run_does_not_join_another_agent_s_run_that_left_the_same_call_id_pending():
    # Both files leave a `call_del_1` pending: agno's "Files Agent" and pydantic-ai's "janitor".
    def records(scenario):
        return [to_record(s) for s in read_spans(next(p for p in trace_files() if scenario_id(p) == scenario))]

    janitor = records("pydantic_ai/refused_approval_denied")
    resumed_trace = max(janitor, key=lambda r: r.start_ns).trace_id  # the resumption is the later trace
    resuming = [r for r in janitor if r.trace_id == resumed_trace]
    [alone] = assemble(resuming)
    [resumed] = [run for run in assemble(records("agno/agent_paused_confirmation") + resuming) if run.trace_id == resumed_trace]
    assert [(a.agent, a.tool, a.arguments) for a in resumed.chain()] == [(a.agent, a.tool, a.arguments) for a in alone.chain()]


def test_traces_that_reuse_span_ids_are_assembled_apart():
    path = next(p for p in TRUTH_FILES if scenario_id(p) == "pydantic_ai/single_tool")
    spans = read_spans(path)
    copies = [dataclasses.replace(span, trace_id=span.trace_id + 1) for span in spans]
    runs = assemble(to_record(s) for s in spans + copies)
    assert [(run.trace_id - spans[0].trace_id, [a.tool for a in run.chain()]) for run in runs] == [
        (0, ["multiply"]),
        (1, ["multiply"]),
    ]


def _escape_underscores(value):
    return value.replace("_", "\\u005f") if isinstance(value, str) else value


@pytest.mark.parametrize("scenario", ["pydantic_ai/refused_approval_denied", "pydantic_ai/parallel_tools"])
def test_messages_that_spell_part_types_with_unicode_escapes_read_the_same(scenario):
    # JSON may spell "tool_call" as "tool\u005fcall": the adapter's cheap pre-check must not skip it.
    path = next(p for p in TRUTH_FILES if scenario_id(p) == scenario)
    spans = read_spans(path)
    keys = ("gen_ai.input.messages", "gen_ai.output.messages")
    escaped = [
        dataclasses.replace(s, attributes={k: _escape_underscores(v) if k in keys else v for k, v in s.attributes.items()})
        for s in spans
    ]
    assert any(s.attributes != e.attributes for s, e in zip(spans, escaped))

    def chains(spans):
        return [[(a.tool, a.call_id, a.outcome, a.arguments) for a in run.chain()] for run in assemble(map(to_record, spans))]

    assert chains(escaped) == chains(spans)
