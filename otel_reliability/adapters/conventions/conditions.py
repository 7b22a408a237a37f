"""Conditions of convention files on a span: a rule's ``when`` (is this span the rule's?) and the
conditions on a span found (``failed_when``, ``not_failed_when``, ``refused_when``, ``no_call_when``)."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Mapping

from ...model import SpanData
from ..common import error_text
from ..decoders import as_json
from ..json_paths import first_at
from .model import Inside, When


def rule_matches(when: When, span_name: str, attributes: Mapping[str, Any], patterns: Mapping[str, re.Pattern[str]],
             decode: bool = True) -> re.Match[str] | bool | None:
    """Whether a span of this name and these attributes meets ``when``: False, or True / the name
    pattern's match; None (with ``decode`` False) when only decoding an attribute's JSON would tell."""
    if when.span_name is not None and span_name != when.span_name:
        return False
    # the other attributes first, a few lookups (a framework's instrumentation told apart from
    # another's on spans alike: most spans a rule finds are not its own); then the name's pattern;
    # the attribute last: a ``path`` condition decodes its JSON. ``without`` inlined: most rules
    # of a convention that others' spans carry too say it (this runs for each rule a span finds)
    if when.without and not attributes.keys().isdisjoint(when.without):
        return False
    if when.also and not _others_hold(when, attributes):
        return False
    matched = patterns[when.span_name_matches].fullmatch(span_name) if when.span_name_matches is not None else True
    if not matched or not _attributes_hold(when, attributes, None, decode, also=False, span_name=span_name):
        return False
    return None if not decode and (when.path is not None or when.inside) else matched


Test = Callable[[str, Mapping[str, Any]], "re.Match[str] | bool"]


def compiled(when: When, patterns: Mapping[str, re.Pattern[str]]) -> Test:
    """``rule_matches(when, …)`` (decoding) as one function of the span's name and attributes that
    makes only the tests ``when`` asks for, built once per rule: a span's kind finds several
    rules of a convention, most of which it fails.

    >>> test = compiled(When(attribute="k", equals=["tool"], without=["x"]), {})
    >>> test("t", {"k": "tool"}), test("t", {"k": "tool", "x": 1}), test("t", {"k": "llm"})
    (True, False, False)
    """
    if not when.model_fields_set <= _COMPILED_FIELDS:  # a condition this does not know: test it the long way
        return lambda name, attributes: rule_matches(when, name, attributes, patterns) or False
    # One function's source, its values bound as constants (``c<i>``, never written into the
    # source): a span's test is one call, its checks inline, in rule_matches' order.
    constants: dict[str, Any] = {"when": when, "holds": holds, "value_in": value_in, "_in": _in, "_same_value": _same_value,
                                 "_inside_holds": _inside_holds}

    def constant(value: Any) -> str:
        name = f"c{len(constants)}"
        constants[name] = value
        return name

    lines = []
    if when.span_name is not None:
        lines.append(f"if name != {constant(when.span_name)}: return False")
    if when.without:
        lines.append(f"if not attributes.keys().isdisjoint({constant(frozenset(when.without))}): return False")
    for key, values in when.also.items():
        key_name = constant(key)
        lines.append(f"if {key_name} not in attributes: return False")
        if values:
            lines.append(f"if not _in(attributes[{key_name}], {constant(values)}): return False")
    attribute, equals = when.attribute, when.equals
    if attribute is not None and when.path is None:
        key_name = constant(attribute)
        lines.append(f"if {key_name} not in attributes: return False")
        if equals:
            allowed = constant(equals)
            lines.append(f"value = attributes[{key_name}]")
            lines.append(f"if not ((type(value) is str and value in {allowed}) or value_in(value, {allowed})): return False")
    if when.same_value:
        lines.append(f"if not _same_value({constant(when.same_value)}, attributes): return False")
    for key, pattern in when.matches.items():  # rules name no group ``tool`` (model: only refused_when does)
        lines.append(f"value = attributes.get({constant(key)})")
        lines.append(f"if not isinstance(value, str) or {constant(_pattern(pattern))}.fullmatch(value) is None: return False")
    # then the name's pattern, and last what decodes an attribute's JSON (a path, a condition inside)
    found = "True"
    if when.span_name_matches is not None:
        lines.append(f"found = {constant(patterns[when.span_name_matches])}.fullmatch(name)")
        lines.append("if found is None: return False")
        found = "found"
    if attribute is not None and when.path is not None:
        lines.append("if not holds(when, attributes): return False")
    for condition in when.inside:
        lines.append(f"if not _inside_holds({constant(condition)}, attributes, name): return False")
    lines.append(f"return {found}")
    source = "def test(name, attributes):\n" + "".join(f"    {line}\n" for line in lines)
    exec(source, constants)  # noqa: S102  # the source is built above from the rule's own fields only
    test: Test = constants["test"]
    return test


# the fields of When that ``compiled`` tests; a field added to When (and to rule_matches) without
# being added here is tested by rule_matches, never left untested
_COMPILED_FIELDS = frozenset({"span_name", "span_name_matches", "attribute", "equals", "path", "also", "without", "same_value",
                              "matches", "inside"})


def _same_value(keys: tuple[str, ...], attributes: Mapping[str, Any]) -> bool:
    first, *others = keys
    return first in attributes and all(key in attributes and attributes[key] == attributes[first] for key in others)


def condition_holds(when: When, span: SpanData, tool_name: str | None = None) -> bool:
    """Whether a condition on a span found (``failed_when``, ``not_failed_when``,
    ``refused_when``) holds: on its attributes, or on those of its first ``event`` of that name;
    ``tool_name``: what a ``matches`` (or ``error_matches``) group named ``tool`` must be."""
    if when.span_name is not None and span.name != when.span_name:
        return False
    if when.error_matches is not None and not _error_matches(when.error_matches, span, tool_name):
        return False
    if when.span_name_matches is not None and not _pattern(when.span_name_matches).fullmatch(span.name):
        return False
    attributes: Mapping[str, Any] | None = span.attributes
    if when.event is not None:
        attributes = next((e.attributes for e in span.events if e.name == when.event), None)
    return attributes is not None and _attributes_hold(when, attributes, tool_name, True, span_name=span.name)


def _error_matches(pattern: str, span: SpanData, tool_name: str | None) -> bool:
    """Whether the span's error text matches ``pattern`` whole (a group named ``tool``: the tool's name)."""
    found = _pattern(pattern).fullmatch(error_text(span) or "")
    return found is not None and ("tool" not in found.re.groupindex or found.group("tool") == tool_name)


def _others_hold(when: When, attributes: Mapping[str, Any]) -> bool:
    """``when``'s ``also`` and ``without``: the attributes the span must and must not carry."""
    if when.also and not all(key in attributes and (not values or _in(attributes[key], values))
                             for key, values in when.also.items()):
        return False
    return not when.without or attributes.keys().isdisjoint(when.without)


def _attributes_hold(when: When, attributes: Mapping[str, Any], tool_name: str | None, decode: bool, also: bool = True,
                     span_name: str = "") -> bool:
    """``when``'s conditions on attributes: its attribute (its JSON ``path`` only with ``decode``),
    ``also`` and ``without`` (unless ``also`` is False: tested already), ``same_value``, ``matches``
    and ``inside`` (only with ``decode``: else it may hold)."""
    attribute = when.attribute
    if attribute is not None and when.path is None:  # holds(), inlined for its most common case
        value = attributes.get(attribute)
        if value is None or (when.equals and not (value in when.equals if type(value) is str else False) and not value_in(value, when.equals)):
            return False
    elif attribute is not None and not (holds(when, attributes) if decode else attribute in attributes):
        return False
    if also and not _others_hold(when, attributes):
        return False
    if when.same_value and not _same_value(when.same_value, attributes):
        return False
    for key, pattern in when.matches.items():
        value = attributes.get(key)
        found = _pattern(pattern).fullmatch(value) if isinstance(value, str) else None
        if found is None or ("tool" in found.re.groupindex and found.group("tool") != tool_name):
            return False
    return not (when.inside and decode) or all(_inside_holds(condition, attributes, span_name) for condition in when.inside)


def _inside_holds(condition: Inside, attributes: Mapping[str, Any], span_name: str) -> bool:
    """Whether the value at ``condition.path`` in its attribute's JSON exists (and is one of its
    ``equals``, or the span's name), or with ``present`` false does not; text that names none of
    the string values it may equal, or not the path's last key, is not decoded."""
    raw = attributes.get(condition.attribute)
    if raw is None:
        return not condition.present
    equals = condition.equals
    if isinstance(raw, str):
        texts = condition.texts
        if (texts is not None and not any(text in raw for text in texts)) or condition.key_text not in raw:
            return not condition.present
    value = first_at(decoded(raw), condition.path)
    if value is None or not condition.present:
        return value is None and not condition.present
    if condition.is_span_name:
        return value == span_name
    return not equals or value_in(value, equals)


# the last attribute text decoded and its value: the conditions of several rules often look inside
# one attribute of a span (a graph's metadata), and a rule may read several fields from the text
# its condition looked inside (a runtime's message); one tuple, swapped whole. Readers of the
# value never change it.
_last_decoded: tuple[Any, Any] = (None, None)


def decoded(raw: Any) -> Any:
    """``as_json(raw)``, decoded once for the same text object read again (see ``_last_decoded``)."""
    global _last_decoded
    last = _last_decoded
    if last[0] is raw:
        return last[1]
    value = as_json(raw)
    _last_decoded = (raw, value)
    return value


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str]:
    """A condition's regular expression, compiled once (they come from the files in force)."""
    return re.compile(pattern)


def holds(when: When, attributes: Mapping[str, Any]) -> bool:
    """``when``'s attribute condition: present (with ``path``: a value there in its JSON), and
    (with ``equals``) one of its values."""
    if when.attribute is None or when.attribute not in attributes:
        return False
    value = attributes[when.attribute]
    if when.path is not None:
        if isinstance(value, str) and when.equals and "\\u" not in value and all(isinstance(text, str) and _spelled_literally(text) and text not in value for text in when.equals):
            return False  # a JSON text without \u escapes spells such a value literally: one that names none cannot hold it
        value = first_at(as_json(value), when.path)
        if value is None:
            return False
    return not when.equals or value_in(value, when.equals)


def _spelled_literally(value: str) -> bool:
    """Whether a JSON text without ``\\u`` escapes can spell this string value only as it is."""
    return value.isascii() and value.isprintable() and '"' not in value and "\\" not in value


def value_in(value: Any, equals: tuple[Any, ...]) -> bool:
    """Whether ``value`` is one of ``equals``, or is a JSON string's text of one ("\"TOOL\"", as
    MLflow writes span types)."""
    return _in(value, equals) or (isinstance(value, str) and value.startswith('"') and _in(value.strip('"'), equals))


def _in(value: Any, equals: tuple[Any, ...]) -> bool:
    if isinstance(value, (list, dict, tuple)):
        return False
    # of the same type (1 is not True); a text of a str subclass (an SDK's str enum, as a span
    # processor sees attributes in process) is the text an exporter would send
    kind = str if isinstance(value, str) else type(value)
    for candidate in equals:  # a loop, not any(): this runs for each rule a span's kind finds
        if value == candidate and kind is type(candidate):
            return True
    return False
