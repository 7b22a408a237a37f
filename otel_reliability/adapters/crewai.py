"""CrewAI's OpenInference spans, in both of its instrumentation's modes.

* The agent's role is ``graph.node.id`` on its run span (the span name adds ``._execute_core``
  or the task's whole description).
* A default-mode tool span (it carries ``tool.result_as_answer``) names the tool by its
  display name (``Delegate work to coworker``); the model called it by the name CrewAI
  derives from it for the model: lower case, every run of other characters one ``_``.
* CrewAI validates a call's arguments inside its tool wrapper, before the body: that a span
  whose error is that validation's is a refusal is data, in ``frameworks/crewai.yaml``.
* The event-listener mode's model spans that requested tools list the calls elsewhere: data, in
  ``conventions/openinference_crewai.yaml``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping


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
