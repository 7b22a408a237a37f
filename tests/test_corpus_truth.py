"""Every real trace reconstructs to what really ran (``.truth.json``): tool, agent, outcome,
judged with the capture's log records where it wrote them (``.logs.json``).

What spans cannot tell is documented in docs/conventions.md ("What spans cannot tell") and,
for the scenarios of this sample, in ``tests/corpus.py`` ``LIMITS``: those are held to what
their spans record (``AS_RECORDED``), the honest reading, never a guess.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from otel_reliability.adapters import to_event_record, to_record
from otel_reliability.assembly import assemble
from otel_reliability.model import Role
from otel_reliability.engine.buffer import TraceBuffer
from otel_reliability.sources import read_spans, read_telemetry

from .corpus import (
    ADAPTED,
    AS_RECORDED,
    INVARIANT_BROKEN,
    LIFTING,
    LIMITS,
    adapted_files,
    companion,
    logs_of,
    scenario_id,
    trace_files,
)
from .reading import UNNAMED, is_pseudo_tool, reads_as

TRUTH_FILES = [p for p in adapted_files() if p.with_name(p.stem + ".truth.json").exists()]
# A LIFTING folder is held to its reading floors (tests/test_reading_scores.py); its scenarios in
# LIMITS are held here too, to what their spans record
LIMITED_LIFTING = [p for folder in LIFTING for p in trace_files(folder) if scenario_id(p) in LIMITS]
HELD = TRUTH_FILES + LIMITED_LIFTING


def joined_records(path):
    """The trace's records as the engine judges them: with the GenAI event log records of the
    capture's ``.logs.json`` (openai-v2's default mode, ADK's event-only content) joined to their spans."""
    spans = read_spans(path)
    logs = logs_of(path)
    if logs is None:
        return [to_record(s) for s in spans]
    buffer = TraceBuffer()
    buffer.add([to_record(s) for s in spans], 0.0)
    buffer.add_events([e for e in map(to_event_record, read_telemetry(logs).logs) if e is not None], 0.0)
    return [r for trace_id in dict.fromkeys(s.trace_id for s in spans) for r in buffer.joined_records(trace_id)]


def _script_id(truth, attempt):
    """The id a capture script gave a call the spans name no id for (such ids are unique by tool and arguments)."""
    for entry in truth["tool_executions"]:
        if entry.get("tool_call_id_source") == "script" and (entry["name"], entry.get("arguments")) == (
            attempt.tool,
            attempt.arguments,
        ):
            return entry["tool_call_id"]
    return None


def reconstructed(path, truth):
    """(call id, tool, agent, outcome) per attempt, in start order; a continuation's view of an
    attempt supersedes the paused run's. An id the truth does not know (it recorded none) is None."""
    known = {entry.get("tool_call_id") for entry in truth["tool_executions"]} - {None}
    attempts = {}
    unnamed = itertools.count()
    for run in assemble(joined_records(path)):
        unnamed_agents = {r.agent for r in run.walk() if not r.agent_named}
        for attempt in run.chain():
            call_id = attempt.call_id or _script_id(truth, attempt)
            call_id = call_id if call_id in known else None
            key = call_id if call_id is not None else ("no id", next(unnamed))
            outcome = attempt.outcome if attempt.could_be is None else f"{attempt.outcome}|{attempt.could_be}"
            attempts[key] = (call_id, attempt.tool, UNNAMED if attempt.agent in unnamed_agents else attempt.agent, outcome)
    return list(attempts.values())


def agree(got, want) -> bool:
    """The attempts read are the expected ones; an outcome the reader leaves open
    (``error|refused``: the spans cannot tell) agrees with either, and the agent of a run no
    span names (``?``) with any (``tests/reading.py``)."""
    return len(got) == len(want) and all(g[:2] == w[:2] and reads_as(g[2], g[3], w[2], w[3]) for g, w in zip(got, want, strict=True))


def _by_call(attempt) -> str:
    return repr(attempt[:2])


def expected(path, truth):
    if scenario_id(path) in LIMITS:
        return [tuple(attempt) for attempt in AS_RECORDED[scenario_id(path)]]
    in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
    return [(t.get("tool_call_id"), t["name"], t["agent"], t["outcome"]) for t in in_order if not is_pseudo_tool(truth, t)]


@pytest.mark.parametrize("path", HELD, ids=scenario_id)
def test_every_attempt_reconstructs_to_what_really_ran(path):
    truth = companion(path, "truth")
    assert agree(sorted(reconstructed(path, truth), key=_by_call), sorted(expected(path, truth), key=_by_call)), (
        reconstructed(path, truth), expected(path, truth))


@pytest.mark.parametrize("path", HELD, ids=scenario_id)
def test_attempts_follow_the_real_start_order(path):
    truth = companion(path, "truth")
    assert agree(reconstructed(path, truth), expected(path, truth)), (reconstructed(path, truth), expected(path, truth))


def test_every_captured_framework_is_held_to_its_truth_or_to_its_reading_floors():
    assert sorted({p.parent.name for p in trace_files()} - set(ADAPTED) - set(LIFTING)) == []


def test_every_limit_is_a_scenario_the_spans_get_wrong_and_is_listed_once():
    # A limit that a fix lifted must leave LIMITS: its scenario is then held to its truth.
    assert list(LIMITS) == sorted(LIMITS) and LIMITS.keys() == AS_RECORDED.keys()
    by_id = {scenario_id(p): p for p in HELD}
    for scenario in LIMITS:
        truth = companion(by_id[scenario], "truth")
        in_order = sorted(truth["tool_executions"], key=lambda t: (t.get("run", 1), t["seq"]))
        truth_chain = [(t.get("tool_call_id"), t["name"], t["agent"], t["outcome"]) for t in in_order if not is_pseudo_tool(truth, t)]
        assert not agree([tuple(a) for a in AS_RECORDED[scenario]], truth_chain), scenario


def _invariant_cases():
    """Every trace; one its invariants are known broken on today is expected to fail (strict)."""
    return [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=INVARIANT_BROKEN[scenario_id(p)]))
        if scenario_id(p) in INVARIANT_BROKEN
        else p
        for p in trace_files()
    ]


@pytest.mark.parametrize("path", _invariant_cases(), ids=scenario_id)
def test_no_chain_holds_one_execution_twice(path):
    """Neither one execution span in two attempts, nor a request beside the execution that carried it out."""
    for run in assemble(joined_records(path)):
        chain = run.chain()
        spans = [a.span_id for a in chain if a.span_id is not None]
        assert len(spans) == len(set(spans)), [(a.tool, a.outcome) for a in chain]
        executed_ids = {a.call_id for a in chain if a.span_id is not None and a.call_id is not None}
        unexecuted = [a for a in chain if a.span_id is None]
        assert not [a.call_id for a in unexecuted if a.call_id in executed_ids]
        executed = [(a.tool, a.arguments) for a in chain if a.span_id is not None]
        assert not [a.tool for a in unexecuted if a.outcome == "pending" and (a.tool, a.arguments) in executed]
        # nor two layers of one call (a tool span inside another of the same tool, with no model
        # call or run between: a framework span and its MCP client or server span)
        by_id = {r.span_id: r for r in joined_records(path) if r.trace_id == run.trace_id}
        attempted = {a.span_id: a.tool for a in chain if a.span_id is not None}
        for a in chain:
            parent = by_id.get(by_id[a.span_id].parent_id) if a.span_id in by_id else None
            while parent is not None and parent.role not in (Role.MODEL, Role.AGENT_RUN):
                assert attempted.get(parent.span_id) != a.tool, f"{a.tool}: a layer of the call is an attempt too"
                parent = by_id.get(parent.parent_id)


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
