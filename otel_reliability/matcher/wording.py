"""Small helpers shared by the sentences the checks write."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """``n`` with ``noun``, pluralised by ``s``.

    >>> plural(1, "tool call"), plural(2, "time")
    ('1 tool call', '2 times')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
