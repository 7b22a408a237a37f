"""smolagents' OpenInference spans: the agent named only in the span name.

The run span (``AGENT``) is named ``<agent name>.run`` and carries ``smolagents.max_steps``
but no ``agent.name``. Its tool spans' wrapped arguments are data
(``conventions/openinference_smolagents.yaml``).
"""

from __future__ import annotations

from typing import Any, Mapping

_RUN_MARKER = "smolagents.max_steps"
_RUN_SUFFIX = ".run"


def agent_name(name: str, attrs: Mapping[str, Any]) -> str | None:
    """The agent of a smolagents run span; None for other conventions' spans.

    >>> agent_name("calculator.run", {"smolagents.max_steps": 20})
    'calculator'
    """
    if _RUN_MARKER in attrs and name.endswith(_RUN_SUFFIX) and len(name) > len(_RUN_SUFFIX):
        return name[: -len(_RUN_SUFFIX)]
    return None
