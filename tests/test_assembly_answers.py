"""What a framework's own answers and runtime messages tell about calls a span records
only in part: a failed tool span whose call the framework answered with its refusal
message never ran; a runtime message naming its agent belongs to that agent's run only
while the run is open."""

from __future__ import annotations

import json

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.model import Role, SpanData, SpanRecord, ToolResponse

TRACE, RUN = 0xABC, 1


def run_span(agent: str = "calc", start_ns: int = 0, end_ns: int = 1000) -> SpanRecord:
    return SpanRecord(TRACE, RUN, 0, f"invoke_agent {agent}", start_ns, end_ns, Role.AGENT_RUN, agent_name=agent)


def failed_tool(error: str | None = "TOOL_ERROR") -> SpanRecord:
    return SpanRecord(TRACE, 3, RUN, "execute_tool multiply", 30, 35, Role.TOOL, tool_name="multiply", call_id="call_1",
                      error=error)


def answering(response: ToolResponse) -> SpanRecord:
    return SpanRecord(TRACE, 4, RUN, "chat", 50, 60, Role.MODEL, responses=(response,))


ADK_MISSING_B = {"error": "Invoking `multiply()` failed as the following mandatory input parameters are not present:\nb"}


@pytest.mark.parametrize(
    "tool, answer, outcome",
    [
        pytest.param(failed_tool(), ToolResponse("call_1", "…", names_refusal="invalid arguments"), "refused",
                     id="failed-span-answered-with-a-refusal-never-ran"),
        pytest.param(failed_tool(), ToolResponse("call_1", "network unreachable"), "error", id="failed-span-plain-answer"),
        pytest.param(failed_tool(error=None), ToolResponse("call_1", "…", names_refusal="approval denied"), "ok",
                     id="a-span-that-did-not-fail-keeps-its-outcome"),
    ],
)
def test_a_framework_s_refusal_answer_decides_a_failed_span_s_outcome(tool, answer, outcome):
    [run] = assemble([run_span(), tool, answering(answer)])
    assert [(a.tool, a.outcome) for a in run.chain()] == [("multiply", outcome)]


def test_adk_s_answer_texts_name_their_refusal_in_model_input_messages():
    messages = [{"role": "user", "parts": [{"type": "tool_call_response", "id": "call_1", "response": ADK_MISSING_B}]}]
    span = SpanData(TRACE, 4, RUN, "generate_content m", 50, 60,
                    {"gen_ai.operation.name": "generate_content", "gen_ai.input.messages": json.dumps(messages)})
    assert [(r.call_id, r.names_refusal) for r in to_record(span).responses] == [("call_1", "invalid arguments")]


def runtime_message(span_id: int, start_ns: int, event: dict) -> SpanData:
    return SpanData(TRACE, span_id, 99, "autogen process manager", start_ns, start_ns + 5,
                    {"messaging.operation": "process", "message": json.dumps({"message": event})})


REQUEST = {"type": "ToolCallRequestEvent", "source": "calc",
           "content": [{"id": "call_x", "name": "format_disk", "arguments": "{}"}]}
ANSWER = {"type": "ToolCallExecutionEvent", "source": "calc",
          "content": [{"call_id": "call_x", "content": "Error: tool 'format_disk' not found", "is_error": True}]}


def test_a_team_s_runtime_messages_give_the_sending_agent_s_run_a_call_that_never_ran():
    records = [run_span(), to_record(runtime_message(5, 100, REQUEST)), to_record(runtime_message(6, 200, ANSWER))]
    [run] = assemble(records)
    assert [(a.agent, a.tool, a.outcome, a.error) for a in run.chain()] == [
        ("calc", "format_disk", "refused", "Error: tool 'format_disk' not found")
    ]


@pytest.mark.parametrize("sender, start_ns", [("other", 100), ("calc", 2000)], ids=["another-agent", "after-the-run"])
def test_a_runtime_message_of_another_agent_or_after_the_run_is_no_one_s(sender, start_ns):
    [run] = assemble([run_span(), to_record(runtime_message(5, start_ns, {**REQUEST, "source": sender}))])
    assert run.chain() == []
