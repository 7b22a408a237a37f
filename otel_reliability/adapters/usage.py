"""Token usage of one model call, where a convention file's ``tokens`` says it is: input plus output tokens.

Only model-call spans are read: agent-run and workflow spans repeat the sum of their
calls (strands' ``invoke_agent``, Vercel's ``ai.generateText``, CrewAI's ``crew.kickoff``),
and reading them too would count every token twice. Where a convention records the two
parts, their sum is the call's tokens; a total is read only when the parts are absent
(it may include tokens the parts leave out, e.g. cached ones, on some producers).
"""

from __future__ import annotations

from typing import Any, Mapping

def tokens_from(
    attrs: Mapping[str, Any], parts: tuple[tuple[str, str], ...], totals: tuple[str, ...]
) -> int | None:
    """The tokens of the first (input, output) pair of ``parts`` the span carries, summed; else
    its first total of ``totals``; None when it carries none (a convention file's ``tokens``).

    >>> tokens_from({"sdk.in": 30, "sdk.out": 5, "sdk.total": 35}, (("sdk.in", "sdk.out"),), ("sdk.total",))
    35
    """
    for input_key, output_key in parts:
        given, taken = attrs.get(input_key), attrs.get(output_key)
        if given is None and taken is None:
            continue
        # Counts are ints on almost every span: those skip the general reading.
        if not (type(given) is int and given >= 0):
            given = _count(given)
        if not (type(taken) is int and taken >= 0):
            taken = _count(taken)
        if given is not None or taken is not None:
            return (given or 0) + (taken or 0)
    for key in totals:
        total = _count(attrs.get(key))
        if total is not None:
            return total
    return None


def _count(value: Any) -> int | None:
    """A token count: a non-negative int (some exporters write numbers as strings or floats)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and value >= 0 and value == value:
        return int(value)
    return None
