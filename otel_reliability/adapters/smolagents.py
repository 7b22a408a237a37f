"""smolagents' OpenInference spans: the agent named only in the span name, wrapped tool arguments.

The run span (``AGENT``) is named ``<agent name>.run`` and carries ``smolagents.max_steps``
but no ``agent.name``. A tool span records the bound arguments of ``Tool.__call__``,
``{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}``, never the call the model
asked for; unwrapped (positional values named by ``tool.parameters``, in its order) they
equal the request's arguments, which is how a tool span with no call id pairs with it.
"""

from __future__ import annotations

from typing import Any, Mapping

from .common import loads

_RUN_MARKER = "smolagents.max_steps"
_RUN_SUFFIX = ".run"
_WRAPPED_KEYS = frozenset(("args", "sanitize_inputs_outputs", "kwargs"))
_WRAPPED_PREFIX = '{"args": '


def agent_name(name: str, attrs: Mapping[str, Any]) -> str | None:
    """The agent of a smolagents run span; None for other conventions' spans.

    >>> agent_name("calculator.run", {"smolagents.max_steps": 20})
    'calculator'
    """
    if _RUN_MARKER in attrs and name.endswith(_RUN_SUFFIX) and len(name) > len(_RUN_SUFFIX):
        return name[: -len(_RUN_SUFFIX)]
    return None


def unwrapped_arguments(raw: Any, parameters: Any) -> dict[str, Any] | None:
    """The arguments of a wrapped ``Tool.__call__`` input; None when ``raw`` is not one.

    >>> unwrapped_arguments('{"args": [57], "sanitize_inputs_outputs": false, "kwargs": {}}', '{"answer": {}}')
    {'answer': 57}
    """
    if not isinstance(raw, str) or not raw.startswith(_WRAPPED_PREFIX):
        return None
    bound = loads(raw)
    if not isinstance(bound, dict) or bound.keys() != _WRAPPED_KEYS:
        return None
    positional, named = bound["args"], bound["kwargs"]
    if not isinstance(positional, list) or not isinstance(named, dict):
        return None
    if not positional:
        return named
    schema = loads(parameters)
    names = list(schema) if isinstance(schema, dict) else []
    if len(positional) > len(names):
        return None  # values the schema cannot name: keep the recording as it is
    return {**dict(zip(names, positional, strict=False)), **named}
