"""How a GenAI ``execute_tool`` span's own markers read: which spans are calls that never ran.

The corpus (test_corpus_truth.py) pins the captured shapes; these pin the edges a
producer's shape implies, where a looser reading would invent a refusal or a pass.
"""

from __future__ import annotations

import pytest

from otel_reliability.adapters import to_record
from otel_reliability.assembly import assemble
from otel_reliability.model import STATUS_ERROR, STATUS_UNSET, SpanData

MS = 1_000_000
RUN = SpanData(1, 1, 0, "invoke_agent janitor", 0, 100 * MS, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "janitor"})


def _tool(attributes: dict, status: int = STATUS_UNSET, message: str = "", span_id: int = 2, start: int = 10 * MS) -> SpanData:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "delete_file", "gen_ai.tool.call.id": "call_1"}
    attrs.update(attributes)
    return SpanData(1, span_id, 1, "execute_tool delete_file", start, start + MS, attrs, (), status, message)


def _chain(*spans: SpanData) -> list[tuple]:
    [run] = assemble(to_record(s) for s in (RUN, *spans))
    return [(a.tool, a.outcome, a.call_id) for a in run.chain()]


VALIDATION = "ValidationError: 1 validation error for delete_fileargs\npath\n  Field required"

CASES = [
    ("ran", {}, STATUS_UNSET, "", [("delete_file", "ok", "call_1")]),
    ("raised", {"error.type": "OSError"}, STATUS_ERROR, "OSError", [("delete_file", "error", "call_1")]),
    (
        "ADK placeholder id: no id",
        {"gen_ai.tool.call.id": "<not specified>", "error.type": "OSError"}, STATUS_ERROR, "OSError",
        [("delete_file", "error", None)],
    ),
    ("ADK merged span: no call", {"gen_ai.tool.name": "(merged tools)"}, STATUS_UNSET, "", []),
    (
        "ADK callback answered, span UNSET",
        {"adk.experimental.response.source": "before_tool_callback", "gen_ai.tool.call.result": '{"result": "skipped"}'},
        STATUS_UNSET, "", [("delete_file", "refused", "call_1")],
    ),
    (
        "ADK error callback answered: the tool ran",
        {"adk.experimental.response.source": "on_tool_error_callback", "error.type": "TOOL_ERROR"},
        STATUS_ERROR, "TOOL_ERROR", [("delete_file", "error", "call_1")],
    ),
    (
        "ADK unknown name: the BaseTool placeholder",
        {"gen_ai.tool.type": "BaseTool", "error.type": "ValueError"}, STATUS_ERROR, "ValueError",
        [("delete_file", "refused", "call_1")],
    ),
    (
        "ADK missing parameter answer",
        {"gen_ai.tool.call.result": '{"error": "Invoking `delete_file()` failed as the following mandatory input parameters are not present:\\npath"}'},
        STATUS_ERROR, "TOOL_ERROR", [("delete_file", "refused", "call_1")],
    ),
    (
        "a tool's own error dict",
        {"gen_ai.tool.call.result": '{"error": "disk is read-only"}'}, STATUS_ERROR, "TOOL_ERROR",
        [("delete_file", "error", "call_1")],
    ),
    (
        "ADK held for confirmation: pending, not ok",
        {"gen_ai.tool.call.result": '{"error": "This tool call requires confirmation, please approve or reject."}'},
        STATUS_UNSET, "", [("delete_file", "pending", "call_1")],
    ),
    (
        "ADK rejected confirmation",
        {"gen_ai.tool.call.result": '{"error": "This tool call is rejected."}'}, STATUS_ERROR, "TOOL_ERROR",
        [("delete_file", "refused", "call_1")],
    ),
    (
        "autogen arguments check",
        {"error.type": "ValidationError"}, STATUS_ERROR, VALIDATION, [("delete_file", "refused", "call_1")],
    ),
    (
        "a ValidationError the tool body raised",
        {"error.type": "ValidationError"}, STATUS_ERROR, "ValidationError: 1 validation error for Settings\nroot\n  Field required",
        [("delete_file", "error", "call_1")],
    ),
]


@pytest.mark.parametrize(("case", "attributes", "status", "message", "chain"), CASES, ids=[c[0] for c in CASES])
def test_a_tool_span_reads_as_the_call_it_records(case, attributes, status, message, chain):
    assert _chain(_tool(attributes, status, message)) == chain


def test_a_placeholder_id_pairs_with_the_request_by_name_and_arguments_instead_of_leaving_it_unexecuted():
    model = SpanData(1, 3, 1, "generate_content m", MS, 2 * MS, {
        "gen_ai.operation.name": "generate_content",
        "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "tool_call", "id": "call_del_1", "name": "delete_file", "arguments": {"path": "/x"}}]}]',
    })
    tool = _tool({"gen_ai.tool.call.id": "<not specified>", "gen_ai.tool.call.arguments": '{"path": "/x"}', "error.type": "OSError"}, STATUS_ERROR, "OSError")
    assert _chain(model, tool) == [("delete_file", "error", "call_del_1")]


def test_adk_legacy_call_llm_spans_are_model_calls_whose_function_calls_are_requests():
    call_llm = SpanData(1, 3, 1, "call_llm", MS, 2 * MS, {
        "gen_ai.system": "gcp.vertex.agent",
        "gcp.vertex.agent.llm_response": '{"content": {"parts": [{"function_call": {"id": "call_del_1", "args": {"path": "/x"}, "name": "delete_file"}}], "role": "model"}}',
    })
    assert _chain(call_llm) == [("delete_file", "pending", "call_del_1")]
