"""CrewAI's OpenInference spans, in both of its instrumentation's modes.

* The agent's role is ``graph.node.id`` on its run span (the span name adds ``._execute_core``
  or the task's whole description).
* A default-mode tool span (it carries ``tool.result_as_answer``) names the tool by its
  display name (``Delegate work to coworker``); the model called it by the name CrewAI
  derives from it for the model: lower case, every run of other characters one ``_``.
* CrewAI validates a call's arguments inside its tool wrapper, before the body: that a span
  whose error is that validation's is a refusal is data, in ``frameworks/crewai.yaml``.
* The event-listener mode's model spans that requested tools have no ``llm.output_messages``;
  the calls are the ``output.value`` JSON list ``[{"id", "function": {"name", "arguments"}}]``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..model import ToolRequest
from .common import loads
from .decoders import tool_call_requests

_DISPLAY_NAMED = "tool.result_as_answer"  # set on default-mode tool spans only
_OTHER_CHARACTERS = re.compile(r"[^a-z0-9]+")


def tool_name(name: str, attrs: Mapping[str, Any]) -> str:
    """The name the model called a tool by.

    >>> tool_name("Delegate work to coworker", {"tool.result_as_answer": False})
    'delegate_work_to_coworker'
    """
    if _DISPLAY_NAMED not in attrs:
        return name
    return _OTHER_CHARACTERS.sub("_", name.lower()).strip("_") or name


def requests_in_output(attrs: Mapping[str, Any]) -> tuple[ToolRequest, ...]:
    """The calls a model span without output messages lists in its ``output.value``."""
    raw = attrs.get("output.value")
    if not isinstance(raw, str) or not raw.startswith('[{"id": '):
        return ()
    return tool_call_requests(loads(raw))
