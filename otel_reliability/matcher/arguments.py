"""How one expected-arguments spec is compared with the arguments of one call.

Four modes, chosen by ``Expectation.argument_match`` and overridden per tool by
``Expectation.argument_match_by_tool``:

- ``subset`` (the default, Agno's rule): every key of the spec is present in the
  call with an equal value under Python ``==`` (``10 == 10.0``, ``True == 1``,
  ``"10" != 10``); extra keys in the call are fine; nested values compare whole.
- ``exact``: the call has exactly the spec's keys, with equal values.
- ``bfcl``: the Berkeley Function Calling Leaderboard's rules, as its strict judge
  applies them (``otel_reliability.matcher.bfcl.judge.arguments_match``): each spec value
  is a list of allowed values, ``""`` in it meaning "may be left out"; no unknown
  keys; strings compared after BFCL's normalisation; ``int`` fits ``float`` but
  ``bool`` is not a number; lists and dicts compared recursively.
- ``ignore``: any spec matches any call, so a tool's argument check passes as soon
  as the tool has one clean execution. It keeps "was this tool called cleanly"
  in the argument lists when the values are too volatile to pin (timestamps, ids).
"""

from __future__ import annotations

from typing import Any, Mapping

from otel_reliability.matcher.bfcl.values import arguments_match
from otel_reliability.expectations import ArgumentMode, Expectation


def argument_mode(expectation: Expectation, tool: str) -> ArgumentMode:
    """The comparison mode for ``tool``: its per-tool override, else the expectation's mode."""
    return expectation.argument_match_by_tool.get(tool, expectation.argument_match)


def spec_matches(spec: Mapping[str, Any], arguments: Mapping[str, Any], mode: ArgumentMode) -> bool:
    """Whether one call's parsed ``arguments`` satisfy one expected-arguments ``spec``.

    >>> spec_matches({"a": 10}, {"a": 10.0, "b": 5}, "subset")
    True
    >>> spec_matches({"a": 10}, {"a": 10.0, "b": 5}, "exact")
    False
    >>> spec_matches({"city": ["New York", "NYC"], "unit": ["", "C"]}, {"city": "new york"}, "bfcl")
    True
    """
    if mode == "ignore":
        return True
    if mode == "exact":
        return dict(arguments) == dict(spec)
    if mode == "bfcl":
        return arguments_match(arguments, spec)
    return all(key in arguments and arguments[key] == value for key, value in spec.items())
