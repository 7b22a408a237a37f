"""Sessions (SPEC §5.2): a ``scope: session`` expectation judges every top-level run of one
conversation (``gen_ai.conversation.id``, else ``session.id``) as one chain, in start order —
at the end of ``eval``'s input, once the session is idle for ``session_idle`` (receiver, span
processor), and on demand (``ReliabilitySpanProcessor.judge_session``). Each run is still
judged alone, by the default checks only; a run naming no conversation is in no session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest
from opentelemetry.sdk.trace import TracerProvider

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.engine import Engine, EngineSettings, Sessions, judge_all_at_end
from otel_reliability.expectations import Expectation
from otel_reliability.model import OK, Attempt, Run, Verdict
from otel_reliability.results import RunResult
from otel_reliability.session_results import SessionResult
from otel_reliability.adapters import to_record
from otel_reliability.sources import read_spans
from otel_reliability.stores import open_store

from .receiver_harness import (
    REPO,
    agent_spans,
    export_request,
    otlp_json,
    receivers,  # noqa: F401 - fixture
    wait_until,
)
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 - fixture

CONVERSATION = "conv-7"
SESSION_RULES = """
expectations:
  - name: whole-conversation
    scope: session
    expected_chain: [search_flights, book_flight, send_receipt]
    order: in_order
"""
# The same rule judged per run: no single turn makes the whole chain.
PER_RUN_RULES = SESSION_RULES.replace("scope: session", "scope: run")
TURNS = (  # (trace id, start in seconds, the turn's tool calls)
    (0x7A01, 100, [("search_flights", {"to": "Lisbon"})]),
    (0x7A02, 200, [("book_flight", {"flight": "TP123"})]),
    (0x7A03, 300, [("send_receipt", {"to": "ana@example.com"})]),
)
T0 = 1_764_547_200_000_000_000


def conversation_spans(conversation: str | None = CONVERSATION, key: str = "gen_ai.conversation.id",
                       turns: Sequence[tuple[int, int, list]] = TURNS) -> list[list[Any]]:
    """One protobuf trace per turn, GenAI conventions; the run span names the conversation."""
    traces = []
    for trace_id, start_s, calls in turns:
        spans = agent_spans(trace_id, "concierge", calls, start_ns=T0 + start_s * 1_000_000_000)
        if conversation is not None:
            spans[0].attributes.add(key=key).value.string_value = conversation
        traces.append(spans)
    return traces


def write_traces(directory: Path, traces: list[list[Any]]) -> list[Path]:
    """Each trace in a file of its own, the last turn's file first (files are not in turn order)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, spans in reversed(list(enumerate(traces))):
        path = directory / f"turn-{index}.json"
        path.write_bytes(otlp_json(export_request(spans)))
        paths.append(path)
    return paths


def eval_cli(paths: Sequence[Path], rules: Path) -> tuple[int, dict, str]:
    done = subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", "eval", *map(str, paths), "--expectations", str(rules),
         "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


def rules_file(tmp_path: Path, text: str = SESSION_RULES) -> Path:
    path = tmp_path / "rules.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def sessions_in(document: dict) -> list[dict]:
    return [r for r in document["results"] if r.get("kind") == "session"]


def runs_in(document: dict) -> list[dict]:
    return [r for r in document["results"] if r.get("kind") != "session"]


def comparable(session: dict) -> dict:
    """A session result without what differs between two judgements of it."""
    return {key: value for key, value in session.items() if key not in ("source",)}


# -- eval: the end of the input ----------------------------------------------------------------


@pytest.mark.parametrize("key", ["gen_ai.conversation.id", "session.id"])
def test_eval_judges_three_turns_in_three_traces_as_one_chain_in_start_order(tmp_path, key):
    paths = write_traces(tmp_path / "traces", conversation_spans(key=key))

    code, document, _ = eval_cli(paths, rules_file(tmp_path))

    [session] = sessions_in(document)
    assert session["session_id"] == CONVERSATION and session["eval_status"] == "PASSED"
    assert [a["tool"] for a in session["chain"]] == ["search_flights", "book_flight", "send_receipt"]
    assert [r["trace_id"] for r in session["runs"]] == [f"{t:032x}" for t, _, _ in TURNS]
    assert session["expectation"] == "whole-conversation" and session["agent"] == "concierge"
    assert session["evaluator"]["name"] == "otel-reliability" and len(session["evaluator"]["expectation_digest"]) == 64
    # every run judged alone too, by the default checks only
    assert [(r["expectation"], r["eval_status"]) for r in runs_in(document)] == [("default", "PASSED")] * 3
    assert document["summary"]["runs"] == 3
    assert document["summary"]["sessions"] == {"sessions": 1, "passed": 1, "failed": 0, "not_evaluated": 0}
    assert code == 0


def test_a_session_passes_where_each_run_judged_alone_by_the_same_rule_would_not(tmp_path):
    paths = write_traces(tmp_path / "traces", conversation_spans())

    _, as_session, _ = eval_cli(paths, rules_file(tmp_path))
    per_run_code, per_run, _ = eval_cli(paths, rules_file(tmp_path / "per-run", PER_RUN_RULES))

    assert [s["eval_status"] for s in sessions_in(as_session)] == ["PASSED"]
    assert sessions_in(per_run) == []
    assert [r["eval_status"] for r in runs_in(per_run)] == ["FAILED"] * 3
    assert per_run_code == 1


def test_a_session_out_of_order_fails_and_fails_eval(tmp_path):
    reordered = [(TURNS[1][0], 100, TURNS[1][2]), (TURNS[0][0], 200, TURNS[0][2]), TURNS[2]]
    paths = write_traces(tmp_path / "traces", conversation_spans(turns=reordered))

    code, document, stderr = eval_cli(paths, rules_file(tmp_path))

    [session] = sessions_in(document)
    assert session["eval_status"] == "FAILED" and session["order_violations"]
    assert [a["tool"] for a in session["chain"]] == ["book_flight", "search_flights", "send_receipt"]
    assert [r["eval_status"] for r in runs_in(document)] == ["PASSED"] * 3
    assert f"session {CONVERSATION}: FAILED" in stderr
    assert code == 1


def test_runs_that_name_no_conversation_are_in_no_session_and_eval_says_so(tmp_path):
    paths = write_traces(tmp_path / "traces", conversation_spans(conversation=None))

    code, document, stderr = eval_cli(paths, rules_file(tmp_path))

    assert sessions_in(document) == [] and "sessions" not in document["summary"]
    assert len(runs_in(document)) == 3
    assert "3 run(s) name no conversation" in stderr
    assert code == 0


def test_two_conversations_give_two_sessions_and_runs_of_neither_stay_alone(tmp_path):
    first = conversation_spans("conv-a", turns=TURNS[:2])
    second = conversation_spans("conv-b", turns=[(0x7B01, 150, TURNS[2][2])])
    lone = conversation_spans(None, turns=[(0x7C01, 50, TURNS[0][2])])
    paths = write_traces(tmp_path / "traces", first + second + lone)

    _, document, _ = eval_cli(paths, rules_file(tmp_path))

    assert [(s["session_id"], len(s["runs"]), s["eval_status"]) for s in sessions_in(document)] == [
        ("conv-a", 2, "FAILED"), ("conv-b", 1, "FAILED"),  # each misses part of the chain
    ]


# -- the engine's bounds -----------------------------------------------------------------------


def _run(trace_id: int, session: str | None, tool: str, start: int) -> Run:
    return Run(trace_id, 1, "bot", "invoke_agent bot", start, start + 5, session_id=session,
               own_attempts=[Attempt(tool, {}, OK, "bot", ("bot",), start_ns=start + 1)])


RULE = Expectation(name="conv", scope="session", expected_tool_calls=["a"], allow_additional_tool_calls=True)


@pytest.mark.parametrize(
    ("settings", "runs", "judged", "dropped"),
    [
        pytest.param({}, [("s1", 1), ("s1", 2), ("s2", 3)], ["s1", "s2"], {}, id="within-bounds"),
        pytest.param({"max_sessions": 1}, [("s1", 1), ("s2", 2)], ["s2"], {"max_sessions": 1},
                     id="the-least-recently-active-session-is-pushed-out-and-counted"),
        pytest.param({"max_runs_per_session": 2}, [("s1", 1), ("s1", 2), ("s1", 3)], [], {"max_runs_per_session": 1},
                     id="a-session-longer-than-the-bound-is-not-judged-on-part-of-it"),
    ],
)
def test_sessions_are_bounded_and_what_leaves_unjudged_is_counted_by_reason(settings, runs, judged, dropped):
    sessions = Sessions([RULE], EngineSettings(**settings))
    for session, trace in runs:
        sessions.note([_run(trace, session, "a", trace * 100)], now=float(trace))

    results = sessions.judge_all()

    assert [r.session_id for r in results] == judged
    assert sessions.stats.dropped == dropped


def test_a_session_is_judged_once_idle_and_a_turn_after_that_makes_it_due_again():
    sessions = Sessions([RULE], EngineSettings(session_idle=10))
    sessions.note([_run(1, "s1", "a", 100)], now=0.0)

    assert sessions.due(now=9.0) == []
    [first] = sessions.due(now=10.0)
    assert sessions.due(now=15.0) == []  # judged: not again until it changes
    sessions.note([_run(2, "s1", "b", 200)], now=16.0)
    [second] = sessions.due(now=26.0)

    assert (len(first.runs), len(second.runs)) == (1, 2)
    assert [a.tool for a in second.verdict.chain] == ["a", "b"]


def test_a_turn_for_a_session_closed_after_its_verdict_is_counted_not_judged_as_a_new_session():
    sessions = Sessions([RULE], EngineSettings(session_idle=10))
    sessions.note([_run(1, "s1", "a", 100)], now=0.0)
    assert len(sessions.due(now=10.0)) == 1
    assert sessions.due(now=20.0) == []  # idle as long again: closed

    sessions.note([_run(2, "s1", "b", 200)], now=30.0)

    assert sessions.judge_all() == [] and sessions.stats.dropped == {"closed": 1}


def test_no_session_expectation_no_sessions_gathered(tmp_path):
    paths = write_traces(tmp_path / "traces", conversation_spans())
    records = [to_record(span) for path in paths for span in read_spans(path)]

    judgements, sessions = judge_all_at_end(Engine(), records)

    assert len(judgements) == 3 and sessions == []


# -- the span processor: on demand, and once idle -------------------------------------------------


def _traced_turns(provider: TracerProvider, conversation: str) -> None:
    tracer = provider.get_tracer("tests.sessions")
    for _, _, calls in TURNS:
        with tracer.start_as_current_span("invoke_agent concierge", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "concierge",
            "gen_ai.conversation.id": conversation,
        }):
            for name, arguments in calls:
                with tracer.start_as_current_span(f"execute_tool {name}", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                    "gen_ai.tool.call.arguments": json.dumps(arguments),
                }):
                    pass


def test_the_span_processor_judges_a_session_on_demand_and_stores_it(tmp_path):
    store = tmp_path / "results.db"
    processor = ReliabilitySpanProcessor(store=str(store), expectations=[rules_file(tmp_path)])
    provider = TracerProvider()
    provider.add_span_processor(processor)
    try:
        _traced_turns(provider, CONVERSATION)

        result = processor.judge_session(CONVERSATION)

        assert isinstance(result, SessionResult) and result.verdict.eval_status == "PASSED"
        assert [a.tool for a in result.verdict.chain] == ["search_flights", "book_flight", "send_receipt"]
        assert len({trace for trace, _ in result.runs}) == 3
        assert processor.judge_session("another-conversation") is None
    finally:
        provider.shutdown()
    kept = open_store(store)
    try:
        [stored] = kept.query(session_id=CONVERSATION)
        assert stored == result or stored.to_json() == result.to_json()
        assert all(not isinstance(r, SessionResult) for r in kept.query(limit=None))  # runs only by default
        assert len(kept.query(limit=None)) == 3
    finally:
        kept.close()


def test_the_span_processor_judges_an_idle_session_by_itself(tmp_path):
    seen: list[SessionResult] = []
    store = tmp_path / "results.db"
    processor = ReliabilitySpanProcessor(store=str(store), expectations=[rules_file(tmp_path)], session_idle=0.2)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    try:
        _traced_turns(provider, CONVERSATION)
        kept = open_store(store)
        try:
            seen = wait_until(lambda: kept.query(session_id=CONVERSATION), 15, "the idle session's stored result")
        finally:
            kept.close()
    finally:
        provider.shutdown()
    assert [s.verdict.eval_status for s in seen] == ["PASSED"]


# -- the receiver: once idle, and its API ----------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-shards-each-judging-part-of-the-turns"])
def test_the_receiver_judges_a_session_once_idle_and_its_api_gives_eval_s_session_result(receivers, tmp_path, workers):
    rules = rules_file(tmp_path)
    traces = conversation_spans()
    assert {trace_id % 2 for trace_id, _, _ in TURNS} == {0, 1}  # with two shards, each judges some turns
    paths = write_traces(tmp_path / "traces", traces)
    [expected] = sessions_in(eval_cli(paths, rules)[1])
    receiver = receivers.start(
        decision_wait=0.2, config={"session_idle": 1.0, "expectations": [str(rules)], "workers": workers}
    )

    for spans in traces:
        receiver.send(spans)

    document = wait_until(
        lambda: (found := receiver.results(session_id=CONVERSATION)) and found["results"] and found,
        20, "the session's result from the API",
    )
    [got] = document["results"]
    assert comparable(got) == comparable(expected)
    assert document["summary"]["sessions"]["passed"] == 1 and document["summary"]["runs"] == 0
    assert len(receiver.results()["results"]) == 3  # the runs' results; the session only by its id
    assert receiver.metric(
        "agent_reliability_session_evaluations_total", reliability_status="PASSED",
        reliability_expectation="whole-conversation",
    ) == 1


def test_a_resumed_run_s_turn_replaces_the_turn_of_the_run_it_continues(tmp_path):
    """A human-in-the-loop run resumed in another trace carries the paused run's attempts: the
    session counts each attempt once, not once per judgement of the paused run."""
    from .receiver_harness import paused_and_resumed

    paused, resumed = paused_and_resumed(0x9A01, 0x9A02)
    for spans in (paused, resumed):
        spans[0].attributes.add(key="gen_ai.conversation.id").value.string_value = CONVERSATION
    rules = rules_file(tmp_path, """
expectations:
  - name: approved booking
    scope: session
    expected_chain: [get_weather, approve_booking]
    order: exact
""")
    paths = write_traces(tmp_path / "traces", [paused, resumed])

    _, document, _ = eval_cli(paths, rules)

    [session] = sessions_in(document)
    assert [(a["tool"], a["outcome"]) for a in session["chain"]] == [("get_weather", "ok"), ("approve_booking", "ok")]
    assert session["eval_status"] == "PASSED"
    assert [r["trace_id"] for r in session["runs"]] == [f"{0x9A02:032x}"]


def test_a_run_span_naming_a_session_rule_is_judged_alone_by_the_run_rules_and_its_session_by_that_rule():
    rule = Expectation(name="conv", scope="session", expected_tool_calls=["a"])
    engine = Engine([rule])
    run = Run(1, 2, "bot", "invoke_agent bot", 0, 9, attributes={"reliability.expect.case": "conv"}, session_id="s1")

    assert engine.expectation_for(run).name == "default"


@pytest.mark.parametrize("kind", ["sqlite", "jsonl", "postgres"])
def test_a_store_keeps_the_newest_verdict_of_a_session_beside_the_runs_and_gives_it_by_its_id(kind, tmp_path, request):
    spec = (fresh_schema_url(request.getfixturevalue("postgres_server")) if kind == "postgres"
            else str(tmp_path / ("results.db" if kind == "sqlite" else "results.jsonl")))
    run = RunResult(0x7A01, 1, "concierge", "default", Verdict("PASSED", "default"), 10.0)
    first = SessionResult(CONVERSATION, [(0x7A01, 1)], "concierge", "whole-conversation",
                          Verdict("FAILED", "whole-conversation", missing_tool_calls=["book_flight"]), 20.0)
    second = SessionResult(CONVERSATION, [(0x7A01, 1), (0x7A02, 1)], "concierge", "whole-conversation",
                           Verdict("PASSED", "whole-conversation"), 30.0)
    other = SessionResult("conv-other", [(0x7B01, 1)], "concierge", "whole-conversation",
                          Verdict("PASSED", "whole-conversation"), 40.0)
    store = open_store(spec)
    try:
        store.add_many([run, first])
        store.add_many([second, other])

        assert store.query(limit=None) == [run]
        assert store.query(session_id=CONVERSATION) == [second]
        assert store.query(session_id="conv-other", status="FAILED") == []
        assert store.query(session_id="no-such-conversation") == []
    finally:
        store.close()



def test_the_span_processor_counts_session_verdicts_and_sessions_left_unjudged(tmp_path):
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    processor = ReliabilitySpanProcessor(
        store=None, expectations=[rules_file(tmp_path)], max_sessions=1, meter_provider=MeterProvider([reader]),
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _traced_turns(provider, "conv-pushed-out")
    _traced_turns(provider, CONVERSATION)  # the first leaves unjudged: only one session is gathered
    provider.shutdown()  # judges the one left

    points = {
        (metric.name, tuple(sorted(point.attributes.items()))): point.value
        for resource in reader.get_metrics_data().resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name.startswith("agent.reliability.session")
        for point in metric.data.data_points
    }
    assert points == {
        ("agent.reliability.session.evaluations", (
            ("gen_ai.agent.name", "concierge"), ("reliability.expectation", "whole-conversation"),
            ("reliability.status", "PASSED"),
        )): 1,
        ("agent.reliability.sessions.dropped", (("reason", "max_sessions"),)): 1,
    }
