"""LlamaIndex agent workflows under the OpenInference LlamaIndex instrumentation.

No span is of kind ``AGENT`` and no attribute names an agent. The run is the workflow's
``<Workflow>.run`` CHAIN span, whose ``input.value`` is the workflow's ``init_state`` JSON;
the agent is named only in the Python reprs of its steps' events
(``AgentInput(…, current_agent_name='calculator')``, the input of ``setup_agent``,
``run_agent_step`` and ``parse_agent_output``). A ``call_tool`` step's input holds the call it dispatches as a
repr, ``ToolCall(tool_name='multiply', tool_kwargs={…}, tool_id='call_1')``, the only place
a tool span's call id shows. Its tool spans (wrapped arguments, a call paused for a human)
and model spans (a step that only prepares a call) are data
(``conventions/openinference_llama_index.yaml``).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..model import ToolRequest

_RUN_INPUT_PREFIX = '{"init_state": '
_AGENT_EVENTS = ('"ev": "AgentInput(', '"ev": "AgentSetup(')
_ACTING_AGENT = re.compile(r"current_agent_name='([^']+)'")
_DISPATCH_MARKER = '"ev": "ToolCall('
_TOOL_NAME = re.compile(r"ToolCall\(tool_name='([^']+)'")
_TOOL_ID = re.compile(r"tool_id='([^']+)'\)")
_STEP_INPUT_PREFIX = '{"ctx": "<workflows.'  # a workflow step's bound arguments: the Context first


def is_workflow_run(attrs: Mapping[str, Any]) -> bool:
    """Whether a CHAIN span is an agent workflow's run."""
    raw = attrs.get("input.value")
    return isinstance(raw, str) and raw.startswith(_RUN_INPUT_PREFIX)


def acting_agent(attrs: Mapping[str, Any]) -> str | None:
    """The agent a workflow step acts for, from the repr of the ``AgentInput``/``AgentSetup`` event it
    was given (its input, as outputs are cut short); the event's own field is the repr's last.

    >>> acting_agent({"input.value": '''{"ctx": "<workflows.context.Context>", "ev": "AgentInput(input=[], current_agent_name='calculator')"}'''})
    'calculator'
    """
    raw = attrs.get("input.value")
    if not isinstance(raw, str) or not raw.startswith(_STEP_INPUT_PREFIX) or not any(m in raw for m in _AGENT_EVENTS):
        return None
    names = _ACTING_AGENT.findall(raw)
    return names[-1] if names else None


def dispatched(attrs: Mapping[str, Any]) -> ToolRequest | None:
    """The call a ``call_tool`` step dispatched (name and id; the arguments are the tool span's)."""
    raw = attrs.get("input.value")
    if not isinstance(raw, str) or not raw.startswith(_STEP_INPUT_PREFIX) or _DISPATCH_MARKER not in raw:
        return None
    name, call_id = _TOOL_NAME.search(raw), _TOOL_ID.search(raw)
    if name is None or call_id is None:
        return None
    return ToolRequest(name.group(1), None, call_id.group(1))
