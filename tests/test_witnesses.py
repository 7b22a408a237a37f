"""Every call is read from its witnesses (the request, the execution, the answer handed back),
and its outcome is confident only when they agree (issue 31, points 1 and 2).

Where they disagree the outcome is open (``Attempt.could_be``), the verdict says only what
every reading agrees on, and a check that differs is NOT_EVALUATED with a reason naming the
call and what its witnesses say. The lexicon of texts that read as a failure or a refusal only
opens outcomes; what it costs (truly ok calls it opens) is measured over the whole corpus.
"""

from __future__ import annotations

from contextlib import nullcontext
from itertools import count

import pytest

from otel_reliability.adapters import lexicon, profiles, to_record
from otel_reliability.assembly import assemble
from otel_reliability.assembly.attempts import attempts_of
from otel_reliability.assembly.witnesses import unexplained_in_traced
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.inspect import inspect_files, render_text
from otel_reliability.model import ERROR, NOT_EVALUATED, OK, REFUSED, Role, Run, SpanRecord, ToolRequest, ToolResponse
from otel_reliability.sources import read_telemetry

from .corpus import ADAPTED, CORPUS, LIFTING, companion, logs_of, trace_files
from .reading import is_pseudo_tool

FOLDERS = sorted(ADAPTED + LIFTING)

# (corpus trace, tool, outcome the spans record, the other outcome left open, words of the doubt)
# read with every profile removed: the generic reader alone, where these read confidently wrong before
ON_REAL_TRACES = [
    ("crewai_event_listener/blocked_hook", "delete_file", OK, REFUSED, "its result reads as a refusal: 'Tool execution blocked by hook"),
    ("llama_index/blocked_approval_denied", "delete_file", OK, REFUSED, "its result reads as a refusal"),
    ("semantic_kernel/blocked_function_filter", "FilePlugin-delete_file", OK, REFUSED, "its result reads as a refusal: 'Blocked by policy"),
    ("mcp_pydantic_ai/blocked_approval_rejected", "delete_file", OK, REFUSED, "the answer reads as a refusal: 'The user refused"),
    ("mcp_openai_agents/server_unknown_tool", "legacy_lookup", OK, REFUSED, "Unknown tool: legacy_lookup"),
    ("mcp_openai_agents/tool_error", "divide", OK, ERROR, "its result reads as a failure"),
    ("openai_agents_guardrails/blocked_tool_input_guardrail", "delete_file", OK, REFUSED, "'Refused: system paths"),
    ("google_adk/blocked_before_tool_callback", "delete_file", ERROR, REFUSED, "the answer reads as a refusal"),
    ("mcp_pydantic_ai/invalid_arguments", "multiply", ERROR, REFUSED, "its error reads as a refusal"),
    ("langgraph_subagents/invalid_arguments", "multiply", ERROR, REFUSED, "1 validation error for multiply"),
    ("llama_index/invalid_arguments", "multiply", ERROR, REFUSED, "multiply() missing 1 required"),
    ("llama_index/blocked_handoff_not_allowed", "handoff", OK, REFUSED, "cannot hand off"),
    ("crewai_event_listener/blocked_usage_limit", "multiply", OK, REFUSED, "has reached its usage limit"),
    ("google_adk/blocked_plugin", "delete_file", OK, REFUSED, "skipped: system files are protected"),
    ("agno_traceloop/tool_error", "divide", OK, ERROR, "status='failure'"),  # traceloop's result, as the tool returned it
    # paused for an approval, rejected in the resumed run: the held span's OK against the answer
    ("mcp_openai_agents/blocked_approval_rejected", "delete_file", OK, REFUSED, "the answer reads as a refusal: 'operator rejected"),
]


def attempts_in(trace: str) -> list:
    spans = read_telemetry(CORPUS / f"{trace}.json").spans
    with profiles.removed():
        return [a for run in assemble([to_record(s) for s in spans]) for member in run.walk() for a in member.own_attempts]


@pytest.mark.parametrize(("trace", "tool", "outcome", "other", "doubt"), ON_REAL_TRACES, ids=[t[0] for t in ON_REAL_TRACES])
def test_a_call_whose_witnesses_disagree_is_left_open_and_says_why(trace, tool, outcome, other, doubt):
    opened = [a for a in attempts_in(trace) if a.could_be is not None]
    assert [(a.tool, a.outcome, a.could_be) for a in opened] == [(tool, outcome, other)]
    assert doubt in opened[0].witnesses.doubt


@pytest.mark.parametrize("trace", ["crewai_event_listener/blocked_hook", "semantic_kernel/blocked_function_filter"])
def test_a_false_pass_on_a_blocked_call_becomes_not_evaluated_naming_the_call_and_its_witnesses(trace):
    """Both read PASSED before: a tool span that ended OK although the framework blocked the body."""
    results = judge_spans(Engine(), read_telemetry(CORPUS / f"{trace}.json").spans)
    assert [r.verdict.eval_status for r in results] == [NOT_EVALUATED]
    [reason] = [c for c in results[0].verdict.unevaluated_checks if "the spans cannot tell" in c]
    call_id = companion(CORPUS / f"{trace}.json", "truth")["tool_executions"][0]["tool_call_id"]
    assert f"delete_file was ok or refused ({call_id}: the execution span says OK, its result reads as a refusal" in reason


def test_calls_whose_witnesses_agree_stay_confident():
    [attempt] = attempts_in("crewai_event_listener/single_tool")
    assert (attempt.outcome, attempt.could_be, attempt.witnesses.doubt) == (OK, None, None)
    witnesses = attempt.witnesses
    assert (witnesses.joined_by, witnesses.request, witnesses.execution, witnesses.result, witnesses.answer) == (
        "name+arguments", True, OK, "50", "50")


# (corpus trace, tool): a call paused for an approval and resumed in a later run of the same
# trace, which answers the call's id without asking for it (or in the same run). Each instrumentation leaves a span
# that ended OK with no result for the pause, and the approved call's real execution in the
# resumed run: one attempt, the resumed execution's, with the call's id.
PAUSED_AND_RESUMED = [
    ("mcp_openai_agents/approval_approved", "delete_file"),
    ("mcp_openai_agents_semconv/approval_approved", "delete_file"),
    ("openai_agents_openinference/approval_approved", "delete_file"),
    ("openai_agents_guardrails/approval_approved_outer_trace", "delete_file"),
    # both spans carry the call's id, in the same run
    ("mcp_pydantic_ai/approval_approved", "delete_file"),
    ("mcp_pydantic_ai_semconv/approval_approved", "delete_file"),
]


@pytest.mark.parametrize(("trace", "name"), PAUSED_AND_RESUMED, ids=[t[0] for t in PAUSED_AND_RESUMED])
def test_a_call_paused_for_a_decision_and_resumed_is_one_attempt_with_its_final_outcome(trace, name):
    [truth] = companion(CORPUS / f"{trace}.json", "truth")["tool_executions"]
    calls = [a for a in attempts_in(trace) if a.tool == name]
    assert [(a.call_id, a.outcome, a.could_be) for a in calls] == [(truth["tool_call_id"], OK, None)]
    assert calls[0].witnesses.result is not None, "the resumed execution's, not the pause's span"
    results = judge_spans(Engine(), read_telemetry(CORPUS / f"{trace}.json").spans)
    with profiles.removed():
        cold = judge_spans(Engine(), read_telemetry(CORPUS / f"{trace}.json").spans)
    for judged in (results, cold):
        chain = {a.call_id: a.outcome for r in judged for a in r.verdict.chain if a.tool == name}
        assert chain == {truth["tool_call_id"]: OK}


# Small synthetic runs for what the corpus lacks: a span status of OK over an error payload, and
# a call that ends OK with no result where the run's other calls record theirs.
_ids = count(10)


def tool(name: str, call_id: str | None, *, output: str | None = None, returned: bool = True, error: str | None = None) -> SpanRecord:
    span_id = next(_ids)
    return SpanRecord(1, span_id, 1, name, span_id * 10, span_id * 10 + 5, Role.TOOL, error=error, tool_name=name, arguments="{}",
                      call_id=call_id, output=output, returned=returned)


def model(requests=(), responses=()) -> SpanRecord:
    span_id = next(_ids)
    return SpanRecord(1, span_id, 1, "chat", span_id * 10, span_id * 10 + 5, Role.MODEL, requests=tuple(requests), responses=tuple(responses))


def asked(*names: str) -> SpanRecord:
    return model([ToolRequest(n, "{}", f"c_{n}") for n in names])


SYNTHETIC = [
    # (what, records, tool whose outcome is open, outcome, other, words of the doubt); None: none open
    ("an error object in an OK result", [asked("a"), tool("a", "c_a", output='{"error": "quota"}')], "a", OK, ERROR, "reads as a failure"),
    ("a traceback in an OK result", [asked("a"), tool("a", "c_a", output="Traceback (most recent call last):\n  File")],
     "a", OK, ERROR, "reads as a failure"),
    ("an exception's text as the result", [asked("a"), tool("a", "c_a", output="ValueError: bad date")], "a", OK, ERROR, "failure"),
    ("an error object that says no error", [asked("a"), tool("a", "c_a", output='{"error": null, "value": 3}')], None, None, None, None),
    ("OK with no result while the run's other call records one",
     [asked("a", "b"), tool("a", "c_a", output="3"), tool("b", "c_b", returned=False)], "b", OK, REFUSED, "no recorded result"),
    ("OK with no result in a run that records no results", [asked("a", "b"), tool("a", "c_a", returned=False), tool("b", "c_b", returned=False)],
     None, None, None, None),
    ("an answer that is not the recorded result",
     [asked("a"), tool("a", "c_a", output='{"rows": 3}'), model(responses=[ToolResponse("c_a", "withheld by the output check")])],
     "a", OK, ERROR, "is not the execution's result"),
    ("an answer that is the result, wrapped and spaced otherwise",
     [asked("a"), tool("a", "c_a", output='{"content": "{\\"rows\\":3}"}'), model(responses=[ToolResponse("c_a", '{"rows": 3}')])],
     None, None, None, None),
    ("a refusal answered with no reason", [asked("a", "b"), tool("a", "c_a", output="1"), model(responses=[ToolResponse("c_b", "")])],
     "b", REFUSED, OK, "gives no reason"),
    ("a refusal answered with what reads as a result, in a run no tool span records",
     [asked("a"), model(responses=[ToolResponse("c_a", "42")])], "a", REFUSED, OK, "gives no reason: '42'"),
    ("a refusal answered as a failure", [asked("a", "b"), tool("a", "c_a", output="1"), model(responses=[ToolResponse("c_b", "Error: boom")])],
     "b", REFUSED, ERROR, "reads as a failure"),
    ("a held span, then the approved call run in the resumed run",
     [asked("a"), tool("a", None, returned=False), model(responses=[ToolResponse("c_a", "done")]), tool("a", None, output="done")],
     None, None, None, None),
    ("a refusal answered as one", [asked("a", "b"), tool("a", "c_a", output="1"), model(responses=[ToolResponse("c_b", "Tool b is not allowed")])],
     None, None, None, None),
]


@pytest.mark.parametrize(("what", "records", "name", "outcome", "other", "doubt"), SYNTHETIC, ids=[s[0] for s in SYNTHETIC])
def test_witnesses_that_disagree_open_the_outcome(what, records, name, outcome, other, doubt):
    attempts = attempts_of(records, "solo", ("solo",), None)
    opened = [(a.tool, a.outcome, a.could_be) for a in attempts if a.could_be is not None]
    if name is None:
        assert opened == []
        return
    assert opened == [(name, outcome, other)]
    assert doubt in next(a for a in attempts if a.tool == name).witnesses.doubt


@pytest.mark.parametrize(("records", "other"), [
    ([asked("a", "b"), tool("a", "c_a", output="1"), model(responses=[ToolResponse("c_b", "43")])], ERROR),
    ([asked("b"), model(responses=[ToolResponse("c_b", "43")])], OK),
], ids=["beside a call a tool span carried out", "in a trace no tool span records"])
def test_a_refusal_answered_with_no_reason_could_have_run_only_where_no_tool_span_ran_a_request(records, other):
    """Where the instrumentation traces the calls it runs, a call with no span did not run: it may
    have failed; where it traces none, the answer may be the call's result."""
    attempts = attempts_of(records, "solo", ("solo",), None)
    run = Run(trace_id=1, span_id=2, agent="solo", span_name="invoke_agent solo", start_ns=0, end_ns=0, own_attempts=attempts)
    unexplained_in_traced([run])
    assert [(a.tool, a.outcome, a.could_be) for a in attempts if a.could_be is not None] == [("b", REFUSED, other)]


def test_a_held_span_and_the_resumed_execution_are_one_call():
    held, resumed = tool("a", None, returned=False), tool("a", None, output="done")
    [attempt] = attempts_of([asked("a"), held, model(responses=[ToolResponse("c_a", "done")]), resumed], "solo", ("solo",), None)
    assert (attempt.span_id, attempt.call_id, attempt.outcome, attempt.witnesses.result) == (resumed.span_id, "c_a", OK, "done")


def test_inspect_shows_each_calls_witnesses_and_why_its_outcome_is_open():
    with profiles.removed():
        inspection = inspect_files([CORPUS / "mcp_pydantic_ai" / "blocked_approval_rejected.json"])
    [attempt] = [a for run in inspection.runs for a in run.attempts]
    assert attempt.witnesses == ["request: in a model output", "execution: OK, no result recorded",
                                 "answer: 'The user refused to delete this file.'"]
    text = " ".join(render_text(inspection, width=400).split())
    assert "request: in a model output" in text
    assert "execution: OK, no result recorded" in text
    assert "answer: 'The user refused to delete this file.'" in text
    assert "may be refused: the execution span says OK, the answer reads as a refusal" in text


@pytest.mark.parametrize(("text", "reads"), [
    ("operator rejected: scratch file is still in use", lexicon.REFUSAL),
    ("Error: division by zero", lexicon.FAILURE),
    ('{"error": "boom"}', lexicon.FAILURE),
    ('{"error": null}', None),
    ("The weather in Paris is 18°C and sunny", None),
    ("50", None),
])
def test_the_lexicon_reads_texts_as_a_failure_or_a_refusal(text, reads):
    assert lexicon.reads_as(text) == reads


@pytest.mark.parametrize(("body", "error"), [
    ("refusal: [{why: w, patterns: ['('], examples: [x]}]\nfailure: []\n", "does not compile"),
    ("refusal: [{why: w, patterns: [denied], examples: [approved]}]\nfailure: []\n", "no pattern matches its example 'approved'"),
    ("refusal: [{why: w, patterns: [], examples: []}]\nfailure: []\n", "needs patterns and examples"),
    ("refusal: []\nfailures: []\n", "failure"),
])
def test_a_bad_lexicon_is_refused_naming_the_file_and_what_is_wrong(tmp_path, body, error):
    path = tmp_path / "reads_as.yaml"
    path.write_text(body)
    with pytest.raises(ValueError, match="lexicon reads_as.yaml: ") as raised:
        lexicon.load(path)
    assert error in str(raised.value)


def _opened_truly_ok(cold: bool) -> tuple[int, list[str], list[str]]:
    """Over every scenario of every corpus folder: the truly ok calls (by the truth files), those
    the lexicon opened (a result, error or answer that reads as a failure or a refusal), and
    those read ``ok`` that any witness opened. A call is found in the truth by its call id, else as
    the next truth entry of the same tool. A framework's own tool that the truth records but that
    is no call of the agent's (``is_pseudo_tool``: a final answer) is not counted: opening it as
    maybe no call is right."""
    ok = 0
    by_lexicon, read_ok_opened = [], []
    for folder in FOLDERS:
        for trace in trace_files(folder):
            if not trace.with_name(trace.stem + ".truth.json").exists():
                continue
            whole = companion(trace, "truth")
            truth = list(whole["tool_executions"])
            logs = logs_of(trace)
            with profiles.removed() if cold else nullcontext():
                results = judge_spans(Engine(), read_telemetry(trace).spans, read_telemetry(logs).logs if logs else ())
            for attempt in (a for r in results for a in r.verdict.chain):
                entry = next((t for t in truth if t.get("tool_call_id") and t["tool_call_id"] == attempt.call_id), None)
                entry = entry or next((t for t in truth if t["name"] == attempt.tool), None)
                if entry is None:
                    continue
                truth.remove(entry)
                if entry["outcome"] != OK or is_pseudo_tool(whole, entry):
                    continue
                ok += 1
                doubt = attempt.witnesses.doubt if attempt.witnesses is not None else None
                if doubt is None:
                    continue
                said = f"{folder}/{trace.stem}: {attempt.tool} read {attempt.outcome}: {doubt}"
                if " reads as a " in doubt:
                    by_lexicon.append(said)
                if attempt.outcome == OK:
                    read_ok_opened.append(said)
    return ok, by_lexicon, read_ok_opened


@pytest.mark.parametrize("cold", [True, False], ids=["cold", "with profiles"])
def test_the_lexicon_and_the_witnesses_open_at_most_two_percent_of_truly_ok_calls(cold, capsys):
    ok, by_lexicon, read_ok_opened = _opened_truly_ok(cold)
    with capsys.disabled():
        print(f"\nof {ok} truly ok calls ({'cold' if cold else 'with profiles'}), the lexicon opened {len(by_lexicon)}, "
              f"and doubt opened {len(read_ok_opened)} read ok" + "".join(f"\n  {w}" for w in dict.fromkeys(by_lexicon + read_ok_opened)))
    assert ok > 600, "the measure covers the corpus"
    assert len(by_lexicon) <= 0.02 * ok, by_lexicon
    assert len(read_ok_opened) <= 0.02 * ok, read_ok_opened
