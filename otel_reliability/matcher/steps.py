"""The steps of ``expected_chain``, read the same way by the order check and by ``lcs_f1``.

A step is a tool name, a group (a list: calls made in parallel, in any order, which may
hold ``one_of`` items) or ``{one_of: [...]}`` (any one alternative; an alternative is a
name, a group or another ``one_of``). Every step stands for a set of *expansions*: the
tool-name multisets that satisfy it, each as a tuple in written order. A name has one
expansion; a group, the concatenations of one expansion of each item; a ``one_of``, the
expansions of all its alternatives.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from otel_reliability.expectations import ChainStep, OneOf

Expansion = tuple[str, ...]


def expansions(step: ChainStep) -> list[Expansion]:
    """Every tool-name multiset that satisfies ``step``, each once, in written order.

    >>> expansions(["fetch", OneOf(one_of=["parse", ["scan", "ocr"]])])
    [('fetch', 'parse'), ('fetch', 'scan', 'ocr')]
    """
    if isinstance(step, str):
        return [(step,)]
    if isinstance(step, OneOf):
        found = [e for alternative in step.one_of for e in expansions(alternative)]
    else:
        found = [()]
        for item in step:  # one expansion of each item, concatenated
            found = [head + tail for head in found for tail in expansions(item)]
    unique: dict[tuple[str, ...], Expansion] = {}
    for expansion in found:
        unique.setdefault(tuple(sorted(expansion)), expansion)
    return list(unique.values())


def overlap(names: Sequence[str], expansion: Expansion) -> int:
    """How many of ``expansion``'s calls ``names`` holds, one name for one call.

    >>> overlap(["search", "summarize", "summarize"], ("search", "search", "summarize"))
    2
    """
    return sum((Counter(names) & Counter(expansion)).values())


def describe(step: ChainStep) -> str:
    """A step in words, e.g. ``"one of search_web or search_docs"``.

    >>> describe(["fetch", OneOf(one_of=["parse", "scan"])])
    'fetch and (one of parse or scan) in any order'
    """
    if isinstance(step, str):
        return step
    if isinstance(step, OneOf):
        if len(step.one_of) == 1:
            return describe(step.one_of[0])
        words = [_nested(alternative) for alternative in step.one_of]
        return f"one of {', '.join(words[:-1])} or {words[-1]}"
    if len(step) == 1:
        return describe(step[0])
    words = [_nested(item) for item in step]
    return f"{', '.join(words[:-1])} and {words[-1]} in any order"


def _nested(step: ChainStep) -> str:
    """``describe``, in parentheses when the words would run into the enclosing step's."""
    text = describe(step)
    return text if isinstance(step, str) or text == _single(step) else f"({text})"


def _single(step: ChainStep) -> str | None:
    while not isinstance(step, str):
        items = step.one_of if isinstance(step, OneOf) else step
        if len(items) != 1:
            return None
        step = items[0]
    return step
