"""LangChain's ``create_agent`` graphs under the OpenInference LangChain instrumentation.

Every span of such a graph carries ``metadata`` JSON with ``"ls_integration":
"langchain_create_agent"`` and the agent's name as ``lc_agent_name``; no span is of kind
``AGENT`` unless a name happens to contain "agent". The run is the graph's root, the span
named after its agent (a sub-agent's root sits under the tool or the supervisor node that
called it, so it is told by its name, not by having no parent). A ``tools`` node's
``input.value`` is the list of the one call it dispatches, ``[{"name", "args", "id", "type":
"tool_call"}]``; a node's ``output.value`` holds the ToolMessages it produced, with their call
ids: the tool's answer, or the refusal of a call no tool span records (unknown tool, a
``wrap_tool_call`` guard, a tool-call limit, a rejected human-in-the-loop decision).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..model import ToolRequest
from .common import loads, str_or_none

_INTEGRATION = "langchain_create_agent"
_DISPATCH_PREFIX = '[{"name": '


def is_graph_node(metadata: Mapping[str, Any]) -> bool:
    """Whether a span belongs to a ``create_agent`` graph."""
    return metadata.get("ls_integration") == _INTEGRATION


def is_agent_root(name: str, metadata: Mapping[str, Any]) -> bool:
    """Whether a span is the root of a ``create_agent`` graph: the span named after its agent.

    >>> is_agent_root("calculator", {"ls_integration": "langchain_create_agent", "lc_agent_name": "calculator"})
    True
    """
    return is_graph_node(metadata) and metadata.get("lc_agent_name") == name


def agent_name(metadata: Mapping[str, Any]) -> str | None:
    """The agent a ``create_agent`` graph's span names in its metadata (``lc_agent_name``)."""
    return str_or_none(metadata.get("lc_agent_name")) or None


def dispatched(raw: Any) -> ToolRequest | None:
    """The one call a ``tools`` node's input dispatches, else None."""
    if not isinstance(raw, str) or not raw.startswith(_DISPATCH_PREFIX):
        return None
    calls = loads(raw)
    if not isinstance(calls, list) or len(calls) != 1:
        return None
    call = calls[0]
    if not isinstance(call, dict) or call.get("type") != "tool_call" or not call.get("name"):
        return None
    return ToolRequest(str(call["name"]), call.get("args"), str_or_none(call.get("id")))
