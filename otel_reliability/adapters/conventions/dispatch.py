"""The rules a span of one shape may be read by, tried by one generated function.

A span's shape is what decides which rules are its candidates: its name when rules are found
by that name, and for each selector key it carries, its text value when some rule asks for that
value (any other text value finds the same rules). Shapes are few (a convention's kinds and
operations), so each gets, once, one function that tries its candidates in order with their
checks inline: the check a candidate was found by (its attribute present with that value) is
not made again, and a ``without`` several candidates share is tested once. A span whose
selector values are not all plain text (a number, a JSON string's text) is left to the
candidate-by-candidate path (``rule_for``'s caller).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

from .conditions import _COMPILED_FIELDS, _in, _inside_holds, _pattern, _same_value, holds, value_in
from .model import SpanRule

Found = tuple[SpanRule, str, "re.Match[str] | None"]
Pick = Callable[[str, Mapping[str, Any]], "Found | None"]
# a candidate: the rule, its convention's name, the values its attribute must have when that
# is all it asks (None when it asks more), its test (``conditions.compiled``)
Candidate = tuple[SpanRule, str, "tuple[Any, ...] | None", Callable[[str, Mapping[str, Any]], Any]]


def pick_for(candidates: list[Candidate], found_by: Sequence[str | None], patterns: Mapping[str, re.Pattern[str]]) -> Pick:
    """One function that returns the first of ``candidates`` that reads a span, as ``rule_for``
    does. ``found_by``: for each candidate, the key it was found by (None: by the span's name);
    the span carries that key with a value the candidate asks it for (or any, when it asks none):
    its own attribute's ``equals``, or the values its ``also`` asks of that key."""
    constants: dict[str, Any] = {"holds": holds, "value_in": value_in, "_in": _in, "_same_value": _same_value,
                                 "_inside_holds": _inside_holds, "Match": re.Match}

    def constant(value: Any) -> str:
        name = f"c{len(constants)}"
        constants[name] = value
        return name

    withouts: dict[frozenset[str], str] = {}  # each tested once, on its own line before the first candidate that asks it
    lines: list[str] = []
    for (rule, name, values, test), key in zip(candidates, found_by, strict=True):
        when = rule.when
        by_attribute = key is not None and key == when.attribute  # found by its own attribute
        found = constant((rule, name, None))
        if by_attribute and values is not None:  # its attribute's value is all it asks, and the span has it
            lines.append(f"return {found}")
            break
        if not when.model_fields_set <= _COMPILED_FIELDS:
            lines.append(f"m = {constant(test)}(name, attributes)")
            lines.append(f"if m is not False: return ({constant(rule)}, {constant(name)}, m if isinstance(m, Match) else None)")
            continue
        checks = []
        if key is not None and not by_attribute and when.attribute is not None:  # found by an ``also`` key:
            checks.append(f"{constant(when.attribute)} in attributes")  # its own attribute, most often absent, first
        if when.span_name is not None:
            checks.append(f"name == {constant(when.span_name)}")
        if when.without:
            keys = frozenset(when.without)
            if keys not in withouts:
                withouts[keys] = f"w{len(withouts)}"
                lines.append(f"{withouts[keys]} = attributes.keys().isdisjoint({constant(keys)})")
            checks.append(withouts[keys])
        for other, allowed in when.also.items():
            if other != key:  # the key it was found by holds one of its values
                checks.append(f"{constant(other)} in attributes")
                if allowed:
                    checks.append(f"_in(attributes[{constant(other)}], {constant(allowed)})")
        if when.attribute is not None and when.path is None and not by_attribute:
            if key is None:
                checks.append(f"{constant(when.attribute)} in attributes")
            if when.equals:
                equals = constant(when.equals)
                # a text not written as a JSON string's (most often) is one of them only as itself: one test
                checks.append(f"(v in {equals} if type(v := attributes[{constant(when.attribute)}]) is str and v[:1] != '\"' else value_in(v, {equals}))")
        if when.same_value:
            checks.append(f"_same_value({constant(when.same_value)}, attributes)")
        for matched, pattern in when.matches.items():
            checks.append(f"isinstance(v := attributes.get({constant(matched)}), str) and {constant(_pattern(pattern))}.fullmatch(v) is not None")
        returned = found
        if when.span_name_matches is not None:
            checks.append(f"(m := {constant(patterns[when.span_name_matches])}.fullmatch(name)) is not None")
            returned = f"({constant(rule)}, {constant(name)}, m)"
        if when.attribute is not None and when.path is not None:
            checks.append(f"holds({constant(when)}, attributes)")
        for condition in when.inside:
            checks.append(f"_inside_holds({constant(condition)}, attributes, name)")
        if not checks:
            lines.append(f"return {returned}")
            break
        lines.append(f"if {' and '.join(checks)}: return {returned}")
    else:
        lines.append("return None")
    source = "def pick(name, attributes):\n" + "".join(f"    {line}\n" for line in lines)
    exec(source, constants)  # noqa: S102  # the source is built above from the rules' own fields only
    pick: Pick = constants["pick"]
    return pick
