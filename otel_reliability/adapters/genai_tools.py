"""What a GenAI ``execute_tool`` span says beyond the convention: refusals, placeholders, synthetic spans.

Producers mark a tool span that exists although the tool body never ran in their own
ways: an attribute (``pydantic_ai.tool.failure_stage``, ADK's
``adk.experimental.response.source``), the placeholder tool type ADK gives a name the
agent lacks, or only the fixed text of the answer the framework handed to the model. Those
texts are data, one file per framework (``frameworks``), applied whatever instrumentation
carried them; this module asks them of ADK's result objects. All of it is framework
knowledge: a cold reading (``knowledge``) reads none of it.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..model import SpanData
from . import frameworks
from .common import is_one_of, loads, str_or_none
from .knowledge import FRAMEWORKS

# ADK writes this instead of the model's call id on the span of a tool that raised.
PLACEHOLDER_CALL_ID = "<not specified>"
# ADK's span after a response with several calls, carrying their merged answers: no call.
MERGED_TOOLS = "(merged tools)"

_REFUSAL_STAGES = {"validation": "invalid arguments"}  # pydantic_ai.tool.failure_stage
# adk.experimental.response.source: a callback answered instead of the tool
_REFUSAL_SOURCES = {"before_tool_callback": "blocked by a before_tool_callback"}
_AWAITING_CONFIRMATION = "This tool call requires confirmation, please approve or reject."
# ADK's tool type for a name the agent has no tool for: the abstract base class itself
_UNKNOWN_TOOL_TYPE = "BaseTool"
# autogen's arguments check: pydantic's first line names the model autogen built, ``<function>args``
_AUTOGEN_ARGUMENTS_CHECK = re.compile(r"ValidationError: \d+ validation errors? for (\w+)args\n")


def is_synthetic(tool_name: str | None) -> bool:
    return tool_name == MERGED_TOOLS


def call_id(attrs: Mapping[str, Any]) -> str | None:
    value = str_or_none(attrs.get("gen_ai.tool.call.id"))
    return None if value == PLACEHOLDER_CALL_ID else value


def arguments(attrs: Mapping[str, Any]) -> Any:
    """The arguments the span records, None when it records none (ADK's legacy schema has its own key)."""
    value = attrs.get("gen_ai.tool.call.arguments")
    return value if value is not None else attrs.get("gcp.vertex.agent.tool_call_args")


def result_error(attrs: Mapping[str, Any]) -> str | None:
    """The ``error`` text of a result that is an object with one (how ADK answers the model), else None."""
    for key in ("gen_ai.tool.call.result", "gcp.vertex.agent.tool_response"):
        value = attrs.get(key)
        if value is None or (isinstance(value, str) and '"error"' not in value):
            continue  # absent, or (as most results) holding no error: nothing to decode
        value = loads(value)
        if isinstance(value, dict) and isinstance(value.get("error"), str):
            return value["error"]
    return None


def answer_refusal(content: Any) -> str | None:
    """The refusal a framework's answer to the model names (ADK's ``{"error": ...}``: ``frameworks``), else None."""
    error = content.get("error") if isinstance(content, Mapping) else None
    return frameworks.refusal_named(error) if isinstance(error, str) else None


def awaits_confirmation(error: str | None, result_error: str | None) -> bool:
    """ADK's tool span of a call held for confirmation: the tool did not run, the span did not fail."""
    return error is None and result_error == _AWAITING_CONFIRMATION and FRAMEWORKS.applies


def refusal(span: SpanData, tool_name: str | None, error: str | None, result_error: str | None) -> str | None:
    """Why the tool never ran although the span exists, None when it ran (or nothing says otherwise)."""
    if not FRAMEWORKS.applies:
        return None
    attrs = span.attributes
    source = attrs.get("adk.experimental.response.source")
    if source is not None and is_one_of(source, _REFUSAL_SOURCES):
        return _REFUSAL_SOURCES[source]
    if error is None:
        return None
    stage = attrs.get("pydantic_ai.tool.failure_stage")
    if is_one_of(stage, _REFUSAL_STAGES):
        return _REFUSAL_STAGES[stage]
    if attrs.get("gen_ai.tool.type") == _UNKNOWN_TOOL_TYPE:
        return "unknown tool"
    if result_error is not None and (answered := frameworks.refusal_named(result_error)) is not None:
        return answered
    if _autogen_rejected_arguments(attrs, tool_name, error):
        return "invalid arguments"
    return None


def _autogen_rejected_arguments(attrs: Mapping[str, Any], tool_name: str | None, error: str) -> bool:
    """autogen validates a call's arguments inside the tool span, against a model named ``<tool>args``.

    A ValidationError the tool body raised names another model, so it stays an error.
    """
    if tool_name is None or attrs.get("error.type") != "ValidationError":
        return False
    check = _AUTOGEN_ARGUMENTS_CHECK.match(error)
    return check is not None and check.group(1) == tool_name
