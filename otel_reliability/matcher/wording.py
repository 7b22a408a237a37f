"""Small helpers shared by the sentences the checks write."""

from __future__ import annotations

from otel_reliability.model import Verdict


def plural(n: int, noun: str) -> str:
    """``n`` with ``noun``, pluralised by ``s``.

    >>> plural(1, "tool call"), plural(2, "time")
    ('1 tool call', '2 times')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def name_problems(verdict: Verdict) -> list[str]:
    """What the name and argument checks found wrong, one phrase per kind, each name once.

    >>> name_problems(Verdict("FAILED", "e", missing_tool_calls=["a", "a"], failed_tool_calls=["b"]))
    ['missing a', 'unexpected b']
    """
    return [
        f"{label} {', '.join(dict.fromkeys(entries))}"
        for label, entries in (
            ("missing", verdict.missing_tool_calls),
            ("unexpected", verdict.failed_tool_calls),
            ("argument check failed for", verdict.failed_argument_checks),
        )
        if entries
    ]
