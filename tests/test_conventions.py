"""Convention files (issue 32, items 1 and 4): a tracing convention is a data file; a user adds
their own SDK's with ``--conventions`` (``eval``, ``inspect``, ``serve``, ``conventions``), the
span processor's ``conventions=`` or ``OTEL_RELIABILITY_CONVENTIONS``; a wrong file is one line
naming the file and the field.

The made-up SDK is the one ``docs/conventions.md`` walks through: its convention file is taken
from that page, so the page and these tests cannot drift apart.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_reliability import OTLPJsonFileSpanExporter
from otel_reliability.adapters import conventions, knowledge, to_record
from otel_reliability.adapters.decoders import (
    RESPONSE_FORMATS, as_kwargs, as_python, chat_completions_requests, chat_completions_responses,
)
from otel_reliability.cli import EXIT_FAILED, main
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import NOT_EVALUATED, PASSED, SpanData
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS
from .receiver_harness import start_receiver

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
ACME = re.search(r"```yaml\n(# acme\.yaml\n.*?)^```$", PAGE, re.MULTILINE | re.DOTALL).group(1)
CLI = [sys.executable, "-m", "otel_reliability.cli"]


@pytest.fixture(autouse=True)
def shipped_conventions_only():
    """Each test starts, and leaves the process, with the shipped conventions alone."""
    conventions.use([])
    yield
    conventions.use([])


@pytest.fixture
def acme(tmp_path) -> Path:
    path = tmp_path / "acme.yaml"
    path.write_text(ACME, encoding="utf-8")
    return path


def acme_trace(path: Path, *, refund_fails: bool = True) -> Path:
    """A run of an agent traced by the made-up Acme SDK, written as OTLP/JSON lines."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileSpanExporter(path)))
    tracer = provider.get_tracer("acme-trace")

    def reply(name: str, call_id: str) -> str:
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"order_id": "A-17"}'}}
        return json.dumps({"role": "assistant", "content": None, "tool_calls": [call]})

    def tool(name: str, call_id: str, failed: bool) -> None:
        attributes = {"acme.type": "tool", "acme.tool.name": name, "acme.tool.call_id": call_id,
                      "acme.tool.input": '{"args": [], "kwargs": {"order_id": "A-17"}}', "acme.tool.failed": failed}
        if not failed:
            attributes["acme.tool.output"] = "done"
        tracer.start_span(f"tool {name}", attributes=attributes).end()

    with tracer.start_as_current_span("support run", attributes={"acme.type": "agent", "acme.agent.name": "support"}):
        tracer.start_span("llm", attributes={"acme.type": "llm", "acme.llm.response": reply("lookup_order", "c1")}).end()
        tool("lookup_order", "c1", failed=False)
        tracer.start_span("llm", attributes={"acme.type": "llm", "acme.llm.response": reply("refund_order", "c2")}).end()
        tool("refund_order", "c2", failed=refund_fails)
    provider.shutdown()
    return path


def chain_of(document: dict) -> list[tuple[str, str, str]]:
    [result] = document["results"]
    return [(step["agent"], step["tool"], step["outcome"]) for step in result["chain"]]


def eval_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["eval", *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_users_convention_file_reads_an_sdk_the_reader_does_not_know(acme, tmp_path, capsys):
    trace = acme_trace(tmp_path / "trace.jsonl")
    assert main(["eval", str(trace)]) == 4  # spans, but no run a built-in convention knows
    assert "no agent runs found" in capsys.readouterr().err
    code, document = eval_json(capsys, "--conventions", str(acme), str(trace))
    assert chain_of(document) == [("support", "lookup_order", "ok"), ("support", "refund_order", "error")]
    assert (code, document["results"][0]["errored_tool_calls"]) == (EXIT_FAILED, ["refund_order"])


def test_the_environment_names_convention_files_for_eval_as_the_flag_does(acme, tmp_path):
    trace = acme_trace(tmp_path / "trace.jsonl", refund_fails=False)
    env = {**os.environ, "OTEL_RELIABILITY_CONVENTIONS": str(acme)}
    done = subprocess.run([*CLI, "eval", str(trace), "--format", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert chain_of(json.loads(done.stdout)) == [("support", "lookup_order", "ok"), ("support", "refund_order", "ok")]


def test_inspect_names_the_convention_that_read_each_span(acme, tmp_path, capsys):
    trace = acme_trace(tmp_path / "trace.jsonl")
    assert main(["inspect", "--conventions", str(acme), str(trace), "--format", "json"]) == 0
    spans = json.loads(capsys.readouterr().out)["spans"]
    assert {span["convention"] for span in spans} == {"acme"}
    assert sorted(span["read_as"] for span in spans) == ["model", "model", "run", "tool", "tool"]


def test_conventions_lists_each_in_force_with_what_finds_it_and_where_it_came_from(acme, capsys):
    assert main(["conventions", "--conventions", str(acme), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["conventions"]
    assert rows[0] == {"name": "acme", "kind": "convention file", "found by": ["attribute acme.type"], "source": str(acme)}
    sources = {(row["name"], row["kind"]): row["source"] for row in rows}
    assert sources[("haystack-native", "convention file")] == "shipped"
    assert sources[("genai", "convention file")] == "shipped"
    assert sources[("openinference-dspy", "profile")] == "shipped"
    assert [row["kind"] for row in rows] == sorted((row["kind"] for row in rows), key=["convention file", "profile"].index)


def test_the_receiver_reads_with_the_convention_files_it_is_given(acme, tmp_path):
    trace = acme_trace(tmp_path / "trace.jsonl")
    receiver = start_receiver(tmp_path / "receiver", extra_args=["--conventions", str(acme)])
    try:
        for line in trace.read_bytes().splitlines():
            assert receiver.post_traces(line, content_type="application/json").status == 200
        trace_id = json.loads(trace.read_bytes().splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
        [result] = receiver.wait_results([trace_id], runs=1)
    finally:
        receiver.stop()
    assert result["agent"] == "support"
    assert [(step["tool"], step["outcome"]) for step in result["chain"]] == [("lookup_order", "ok"), ("refund_order", "error")]


_GOOD_RULE = "  - when: {attribute: a.kind, equals: [tool]}\n    role: tool\n"

# (what is wrong, the file's text, what the one line says after "convention file PATH: ")
BAD_FILES = [
    ("empty", "", "the file is empty: expected name, description and spans"),
    ("not YAML", "name: [x\n", "not valid YAML: line 2, column 1:"),
    ("no spans", "name: x\ndescription: d\n", "spans: required, but missing"),
    ("a rule found by nothing", "name: x\ndescription: d\nspans:\n  - when: {span_name_matches: 'tool .*'}\n    role: tool\n",
     "spans[0].when: needs span_name or attribute"),
    ("a field of another role", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    agent_name: a.agent\n",
     "spans[0]: a tool span reads no agent_name"),
    ("an unknown role", "name: x\ndescription: d\nspans:\n  - when: {span_name: t}\n    role: planner\n",
     "spans[0].role: expected 'agent_run', 'tool', 'model', 'names_agent', 'acting_agent', 'handoff', 'answers', 'relay', 'dispatch' or 'no_call', got 'planner'"),
    ("no rules", "name: x\ndescription: d\nspans: []\n", "spans: give at least one rule"),
    ("an unknown decoder", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    arguments: {{attribute: a.in, decode: yaml}}\n",
     "spans[0].arguments[0].decode: expected 'json', 'text', 'kwargs', 'python', 'raw', 'identifier', 'callback_input', 'last_ai_message', "
     "'object_name', 'bound_arguments' or 'string', got 'yaml'"),
    ("positional arguments named by nothing", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    arguments: {{attribute: a.in, decode: bound_arguments}}\n",
     "spans[0].arguments[0]: decode: bound_arguments names its positional arguments from names_from: give both or neither"),
    ("a flattened list decoded", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    arguments: {{attribute: a.in, each: .value}}\n",
     "spans[0].arguments[0]: each reads a flattened list's items as written: give attribute and decode: raw, no event or path"),
    ("a relay with nothing to relay", "name: x\ndescription: d\nspans:\n  - when: {attribute: bus.op}\n    role: relay\n",
     "spans[0]: a span of role relay needs requests or responses"),
    ("an empty list of places", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    arguments: []\n",
     "spans[0].arguments: must not be empty"),
    ("a group the pattern lacks",
     "name: x\ndescription: d\nspans:\n  - when: {span_name: t, span_name_matches: 'tool (.*)'}\n    role: tool\n"
     "    tool_name: {span_name_group: name}\n",
     "spans[0]: tool_name: span_name_group 'name' is no named group of when.span_name_matches"),
    ("a misspelt field", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    tool_nmae: a.name\n",
     "spans[0].tool_nmae: not a field this file takes (a typo?)"),
    ("items without a path", f"name: x\ndescription: d\nspans:\n  - when: {{attribute: m}}\n    role: model\n    requests: {{attribute: out}}\n",
     "spans[0].requests: format items needs path and call_id"),
    ("a path with no attribute", "name: x\ndescription: d\nspans:\n  - when: {span_name: t, path: a.b}\n    role: tool\n",
     "spans[0].when: path looks inside an attribute's value: give attribute"),
    ("an acting agent named by nothing", "name: x\ndescription: d\nspans:\n  - when: {span_name: step}\n    role: acting_agent\n",
     "spans[0]: a span of role acting_agent names an agent: it needs agent_name"),
    ("a tool that outlives its steps", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    outlived: true\n",
     "spans[0]: a tool span reads no outlived"),
    ("a JSON result read decoded", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}    result: a.out\n    result_is_json: true\n",
     "spans[0]: result_is_json tells the result's text as written: read result with decode: raw"),
    ("a rule found by an event", "name: x\ndescription: d\nspans:\n  - when: {attribute: a.kind, event: exception}\n    role: tool\n",
     "spans[0]: when: event is for conditions on a span found (failed_when, not_failed_when, refused_when)"),
    ("a rule found by a pattern alone", "name: x\ndescription: d\nspans:\n  - when: {matches: {a.kind: tool}}\n    role: tool\n",
     "spans[0]: when: needs span_name or attribute (matches alone would be tried on every span)"),
    ("a pattern that is no regular expression", "name: x\ndescription: d\nspans:\n  - when: {attribute: a.kind, matches: {a.kind: '('}}\n"
     "    role: tool\n", "spans[0].when: matches a.kind: '(' is no regular expression: missing ), unterminated subpattern"),
    ("one attribute of the same value", "name: x\ndescription: d\nspans:\n  - when: {attribute: a.kind, same_value: [a.name]}\n"
     "    role: tool\n", "spans[0].when: same_value compares attributes with each other: give two or more"),
    ("a tool's name compared where none is read", f"name: x\ndescription: d\nspans:\n{_GOOD_RULE}"
     "    not_failed_when: [{matches: {error.type: '(?P<tool>.*)'}}]\n",
     "spans[0]: not_failed_when: a group named tool is compared with the tool's name: only refused_when has one"),
    ("a run refused", "name: x\ndescription: d\nspans:\n  - when: {span_name: run}\n    role: agent_run\n"
     "    refused_when: {attribute: a.invalid}\n", "spans[0]: a agent_run span reads no refused_when"),
    ("answers from nowhere", "name: x\ndescription: d\nspans:\n  - when: {span_name: node}\n    role: answers\n",
     "spans[0]: a span of role answers needs responses"),
    ("refining a convention not in force", f"name: x\ndescription: d\nrefines: [acme]\nspans:\n{_GOOD_RULE}",
     "refines: no convention named 'acme' is in force"),
    ("refining itself", f"name: x\ndescription: d\nrefines: [x]\nspans:\n{_GOOD_RULE}", "refines: x refine each other in a circle"),
    ("not UTF-8", b"name: caf\xe9\n", "not UTF-8: byte 0xe9 at offset 9 (line 1)"),
]


@pytest.mark.parametrize(("what", "text", "says"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_wrong_convention_file_is_one_line_naming_the_file_and_the_field_and_exits_2(what, text, says, tmp_path, capsys):
    path = tmp_path / "mine.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["eval", "--conventions", str(path), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"otel-reliability: convention file {path}: {says}"), err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(conventions.ConventionError):
        conventions.use([path])


def test_a_wrong_convention_file_leaves_the_conventions_in_force(acme, tmp_path):
    conventions.use([acme])
    (tmp_path / "broken.yaml").write_text("name: broken\n")
    with pytest.raises(conventions.ConventionError):
        conventions.use([acme, tmp_path / "broken.yaml"])
    assert [origin.convention.name for origin in conventions.in_force()][0] == "acme"


@pytest.mark.parametrize(("decoder", "value", "decoded"), [
    (as_kwargs, '{"args": [], "kwargs": {"a": 1}}', {"a": 1}),
    (as_kwargs, '{"args": [2], "kwargs": {"a": 1}}', {"args": [2], "kwargs": {"a": 1}}),  # positional: unnamed, kept whole
    (as_kwargs, '{"a": 1}', {"a": 1}),
    (as_python, "{'a': 1, 'b': None}", {"a": 1, "b": None}),
    (as_python, "not a literal", "not a literal"),
    (as_python, '{"a": true}', {"a": True}),  # JSON first
])
def test_value_decoders(decoder, value, decoded):
    assert decoder(value) == decoded


def test_chat_completions_messages_give_the_newest_requests_and_answers():
    reply = {"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}]}}]}
    [request] = chat_completions_requests(json.dumps(reply))
    assert (request.name, request.call_id, request.arguments) == ("add", "c1", '{"a": 1}')
    messages = [
        {"role": "tool", "tool_call_id": "old", "content": "replayed"},
        {"role": "assistant", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]
    assert [(r.call_id, r.content) for r in chat_completions_responses(json.dumps(messages))] == [("c1", "2")]


def test_the_ai_sdks_failed_tool_results_are_answers_and_its_successes_are_not():
    # A provider-executed tool's success has no tool span and is no refusal: only the outputs
    # that say no result came back answer a call (``ai_sdk_messages``).
    messages = [
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "old"}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c1", "output": {"type": "error-text", "value": "no such tool"}},
            {"type": "tool-result", "toolCallId": "c2", "output": {"type": "execution-denied", "reason": "not allowed"}},
            {"type": "tool-result", "toolCallId": "c3", "output": {"type": "json", "value": {"ok": True}}},
        ]},
    ]
    answers = RESPONSE_FORMATS["ai_sdk_messages"](json.dumps(messages))
    assert [(a.call_id, a.content, a.error) for a in answers] == [("c1", "no such tool", True), ("c2", "not allowed", False)]


def test_a_format_that_holds_only_answers_is_refused_for_requests(tmp_path):
    path = tmp_path / "sdk.yaml"
    path.write_text("name: sdk\ndescription: d\nspans:\n  - when: {attribute: sdk.kind, equals: [llm]}\n    role: model\n"
                    "    requests: {attribute: sdk.messages, format: ai_sdk_messages}\n", encoding="utf-8")
    with pytest.raises(conventions.ConventionError, match=r"sdk\.yaml: .*requests.*holds only answers"):
        conventions.load_file(path)


_TASK = {"traceloop.span.kind": "task", "traceloop.entity.name": "calculator", "gen_ai.operation.name": "execute_task"}


# held: True, the rule that reads the span may make it a run (or name the agent of one); False, it
# reads it as something else; None, no rule reads it
@pytest.mark.parametrize(("attributes", "held"), [
    ({"ai.operationId": "ai.generateText"}, True),
    ({"ai.operationId": "ai.streamText"}, True),
    ({"ai.operationId": "ai.generateText.doGenerate"}, False),  # a model call: never a run, not held back
    ({"ai.operationId": "ai.toolCall"}, False),
    ({"mlflow.spanType": '"AGENT"'}, True),  # a JSON string's text, as MLflow writes it
    ({"langfuse.observation.type": ["agent"]}, None),  # a list is no value a rule asks for: no rule reads it
    ({**_TASK, "traceloop.association.properties.lc_agent_name": "calculator"}, True),  # a sub-agent's task
    ({**_TASK, "traceloop.association.properties.lc_agent_name": "supervisor"}, False),  # a graph node of another agent
    ({"traceloop.span.kind": "agent", "gen_ai.operation.name": "invoke_agent"}, False),  # OpenLLMetry's, not a GenAI run
    ({"gen_ai.workflow.nodes": "[]", "gen_ai.operation.name": "invoke_agent"}, True),  # a graph's wrapper names its agent
])
def test_the_front_doors_hold_back_only_the_spans_a_convention_file_may_read_as_a_run(attributes, held):
    assert conventions.may_be_run("span", attributes) is held


def test_a_layered_convention_is_tried_before_the_one_it_refines():
    # OpenLLMetry's LlamaIndex file reads a workflow span as a run that outlives its span; the
    # general OpenLLMetry file would read it as a plain run. Sorted by file name it would come first.
    order = [origin.convention.name for origin in conventions.in_force()]
    assert order.index("traceloop-llama-index") < order.index("traceloop") and order.index("traceloop-agno") < order.index("traceloop")
    span = SpanData(1, 2, 0, "FunctionAgent.workflow", 0, 1, {"traceloop.span.kind": "workflow", "traceloop.entity.name": "FunctionAgent"})
    rule, name, _ = conventions.rule_for(span)
    assert (name, rule.outlived) == ("traceloop-llama-index", True)


# Spring AI writes what a tool method returned as JSON and an exception's message bare in its
# place (its convention's ``result_is_json``): (scenario, tool, result as the span writes it,
# outcome, could be, the verdict of the default expectation)
RESULTS_AS_JSON = [
    ("tool_error", "fetch_url", "network unreachable", "ok", "error", NOT_EVALUATED),
    ("single_tool", "multiply", "50", "ok", None, PASSED),
    ("sequential_chain", "lookup_weather", '"sunny, 21C"', "ok", None, PASSED),  # a String result, quoted
]


@pytest.mark.parametrize(("scenario", "tool", "result", "outcome", "could_be", "status"), RESULTS_AS_JSON,
                         ids=[r[0] for r in RESULTS_AS_JSON])
def test_a_result_that_is_not_written_as_returned_values_are_may_be_a_failure(scenario, tool, result, outcome, could_be, status):
    spans = read_telemetry(CORPUS / "spring_ai" / f"{scenario}.json").spans
    [verdict] = [r.verdict for r in judge_spans(Engine(), spans)]
    [attempt] = [a for a in verdict.chain if a.tool == tool]
    assert attempt.witnesses.result == result
    assert (attempt.outcome, attempt.could_be, verdict.eval_status) == (outcome, could_be, status)
    if could_be is not None:
        assert "its result is not what its convention writes for a returned value" in attempt.witnesses.doubt


def test_a_tool_span_named_by_its_display_name_joins_the_request_and_leaves_unspanned_calls_open():
    # OpenLIT over CrewAI spans only CrewAI's delegation tool ("Delegate work to coworker", read as
    # the identifier the model asked for), never the agents' own tools: the coworker's lookup has no
    # span, and that says nothing about whether it ran (its convention's spans_some_calls)
    spans = read_telemetry(CORPUS / "openlit_crewai" / "delegation.json").spans
    chain = [(a.tool, a.outcome, a.could_be, a.witnesses.joined_by) for r in judge_spans(Engine(), spans) for a in r.verdict.chain]
    assert [c[:3] for c in chain] == [("delegate_work_to_coworker", "ok", None), ("lookup", "refused", "ok")]
    assert chain[0][3] != "unpaired"


def test_a_framework_convention_file_is_left_out_of_a_cold_reading():
    # smolagents records Tool.__call__'s bound arguments: naming the positional ones by the tool's
    # parameters is knowledge of smolagents (a file with framework:), which a cold reading lacks
    raw = '{"args": [57], "sanitize_inputs_outputs": false, "kwargs": {}}'
    span = SpanData(1, 2, 0, "final_answer", 0, 1, {"openinference.span.kind": "TOOL", "tool.name": "final_answer",
                                                    "input.value": raw, "tool.parameters": '{"answer": {}}'})
    assert to_record(span).arguments == {"answer": 57}
    with knowledge.removed():
        assert to_record(span).arguments == raw
        assert not [o.convention.name for o in conventions.in_force() if o.convention.framework]
    assert to_record(span).arguments == {"answer": 57}


def test_a_long_flattened_input_gives_only_the_answers_after_its_last_assistant_message():
    # thousands of replayed messages: the answers the model is handed now are the newest ones
    attributes: dict[str, object] = {"openinference.span.kind": "LLM"}
    for i in range(3001):
        attributes[f"llm.input_messages.{i}.message.role"] = "assistant" if i % 3 == 0 else "tool"
        attributes[f"llm.input_messages.{i}.message.tool_call_id"] = f"c{i}"
        attributes[f"llm.input_messages.{i}.message.content"] = str(i)
    attributes.update({"llm.input_messages.3001.message.role": "tool", "llm.input_messages.3001.message.tool_call_id": "last"})
    record = to_record(SpanData(1, 2, 0, "ChatModel", 0, 1, attributes))
    assert [(a.call_id, a.content) for a in record.responses] == [("last", "")]  # message 3000 is the last assistant's
    assert record.model_call


def test_a_tool_rule_reads_placeholders_names_after_a_prefix_bookkeeping_spans_refusals_and_held_calls(tmp_path):
    # The generic fields GenAI's file reads with, on a made-up SDK: a placeholder id is none, a span
    # without a name attribute is named by its span name after the prefix, a bookkeeping span is no
    # call, a rule's refusal alone refuses every span it reads, and a held call is the request.
    path = tmp_path / "sdk.yaml"
    path.write_text(
        "name: sdk\ndescription: d\nspans:\n"
        "  - when: {attribute: sdk.op, equals: [hold]}\n    role: tool\n    held: true\n"
        "    tool_name: [{attribute: sdk.tool, decode: raw}, {span_name: true, after: 'run ', decode: raw}]\n"
        "  - when: {attribute: sdk.op, equals: [blocked]}\n    role: tool\n    refusal: blocked by a hook\n"
        "    tool_name: [{attribute: sdk.tool, decode: raw}]\n"
        "  - when: {attribute: sdk.op, equals: [tool]}\n    role: tool\n    not_calls: [(merged)]\n"
        "    tool_name: [{attribute: sdk.tool, decode: raw, unless: ['']}, {span_name: true, after: 'run ', decode: raw}]\n"
        "    call_id: {attribute: sdk.id, decode: raw, unless: ['<none>']}\n",
        encoding="utf-8")
    conventions.use([path])
    try:
        def read(name, **attributes):
            return to_record(SpanData(1, 2, 0, name, 0, 1, attributes))
        named = read("run lookup", **{"sdk.op": "tool", "sdk.tool": "", "sdk.id": "<none>"})
        assert (named.role.value, named.tool_name, named.call_id) == ("tool", "lookup", None)
        assert read("run x", **{"sdk.op": "tool", "sdk.tool": "(merged)"}).role.value == "other"
        assert read("run x", **{"sdk.op": "blocked", "sdk.tool": "rm"}).refusal == "blocked by a hook"
        held = read("run approve", **{"sdk.op": "hold"})
        assert (held.role.value, [request.name for request in held.requests], held.tool_name) == ("model", ["approve"], None)
    finally:
        conventions.use([])
