"""Tracing conventions as data: one YAML file per convention, validated at load and compiled
into lookup tables once, so that reading a span only looks things up.

The files beside this module ship with the package; a user adds their own
(``use(["acme.yaml"])``: ``--conventions`` on ``eval``, ``inspect`` and ``serve``, the span
processor's ``conventions=``, ``OTEL_RELIABILITY_CONVENTIONS``). A rule is found by its
span name or by an attribute the span carries, so a span that no convention file speaks of
costs one set test and one dict lookup. The first rule that matches reads the span; the
files a user adds are tried before the shipped ones, which come before the conventions the
built-in adapters read, and a file is tried before the conventions it ``refines`` (``files``:
GenAI's, which many instrumentations write beside their own keys, is tried last). A file of
framework knowledge (``framework:``) is left out of a cold reading (``frameworks_removed``).
A convention whose events are written as log records too says so (``log_events``: GenAI's).

``removed()`` reads without any convention file: what a framework's traces give with none.
"""

from __future__ import annotations

import functools
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ...model import SpanData
from ..common import error_text
from ..decoders import as_json, first_at
from .files import ENVIRONMENT_VARIABLE, SHIPPED, ConventionError, Origin, load_file, paths_from, refining_first
from .model import Convention, LogEvents, SpanRule, When

__all__ = [
    "ENVIRONMENT_VARIABLE", "SHIPPED", "Convention", "ConventionError", "Origin", "condition_holds", "in_force", "load_file", "log_events", "may_be_run", "paths_from",
    "frameworks_removed", "removed", "rule_for", "use",
]

FOLDER = Path(__file__).parent
# roles that make, or may make, a span a run: the span processor holds such spans back
_MAY_BE_RUN = frozenset({"agent_run", "names_agent"})


class _Compiled:
    """The conventions in force as lookup tables: rules by span name and by attribute key,
    each list in the order it is tried, and by the key's value: the rules that ask for that
    value (``equals``) and those that ask for none, so that a kind's value finds its rules
    without testing the others."""

    def __init__(self, origins: Sequence[Origin]) -> None:
        names = [o.convention.name for o in origins]
        if len(set(names)) != len(names):
            raise ConventionError(f"two conventions share a name: {sorted({n for n in names if names.count(n) > 1})}")
        self.origins = origins = refining_first(origins)
        self.by_span_name: dict[str, list[_Candidate]] = {}
        self.by_attribute: dict[str, list[_Candidate]] = {}
        for origin in origins:
            for rule in origin.convention.spans:
                table, key = (self.by_span_name, rule.when.span_name) if rule.when.span_name else (self.by_attribute, rule.when.attribute)
                table.setdefault(str(key), []).append((rule, origin.convention.name, _only_values(rule.when)))
        self.attribute_keys = frozenset(self.by_attribute)
        self.attribute_order = tuple(self.by_attribute)  # rules are tried in the files' order, never a set's
        self.attribute_rank = {key: rank for rank, key in enumerate(self.attribute_order)}
        # key -> (value -> its rules, the rules of any other value); a value's list may hold a rule
        # that then does not match (1 == True), never leave out one that would
        self.by_value: dict[str, tuple[dict[Any, list[_Candidate]], list[_Candidate]]] = {}
        for key, found in self.by_attribute.items():
            valued = [c for c in found if c[0].when.equals and c[0].when.path is None]
            values = {value: [c for c in found if c not in valued or value in c[0].when.equals]
                      for rule, *_ in valued for value in rule.when.equals}
            self.by_value[key] = values, [c for c in found if c not in valued]
        self.patterns = {pattern: re.compile(pattern) for origin in origins for rule in origin.convention.spans
                         if (pattern := rule.when.span_name_matches) is not None}
        self.log_events = tuple(o.convention.log_events for o in origins if o.convention.log_events is not None)
        self._cold: _Compiled | None = None

    def without_frameworks(self) -> _Compiled:
        """These conventions without the files of framework knowledge, compiled once."""
        if self._cold is None:
            kept = [origin for origin in self.origins if origin.convention.framework is None]
            self._cold = self if len(kept) == len(self.origins) else _Compiled(kept)
        return self._cold


# a rule, its convention's name, and the values its attribute must have when that is all it asks
# (an empty tuple: any), None when it asks more: such a rule is tested without _matches
_Candidate = tuple[SpanRule, str, "tuple[Any, ...] | None"]


def _only_values(when: When) -> tuple[Any, ...] | None:
    """``when``'s values of its attribute when its attribute is all it asks for, else None."""
    asks_more = (when.span_name, when.span_name_matches, when.path, when.event) != (None,) * 4 or when.also or when.without
    return None if asks_more or when.same_value or when.matches or when.attribute is None else when.equals


def _shipped() -> list[Origin]:
    return [Origin(load_file(path), SHIPPED) for path in sorted(FOLDER.glob("*.yaml"))]


_SHIPPED = _shipped()
_active = _Compiled(_SHIPPED)


def use(paths: Iterable[str | Path]) -> None:
    """Read with the user's convention files in ``paths`` (tried before the shipped ones) from
    now on, in this process; an empty list leaves only the shipped ones. Every file is
    validated before any takes effect (``ConventionError``).

    >>> use([]); sorted(o.convention.name for o in in_force()) == sorted(o.convention.name for o in _SHIPPED)
    True
    """
    global _active
    users = [Origin(load_file(path), str(path)) for path in paths]
    _active = _Compiled([*users, *_SHIPPED])


def in_force() -> tuple[Origin, ...]:
    """The conventions read with now, in the order they are tried."""
    return _active.origins


def log_events() -> tuple[LogEvents, ...]:
    """The conventions in force whose events are written as log records too, in the order they are tried."""
    return _active.log_events


@contextmanager
def removed() -> Iterator[None]:
    """Read with no convention file at all while the block runs."""
    global _active
    kept, _active = _active, _Compiled(())
    try:
        yield
    finally:
        _active = kept


@contextmanager
def frameworks_removed() -> Iterator[None]:
    """Read without the files that state a framework's knowledge (``framework:``) while the block
    runs: the cold reading (``knowledge.removed()``)."""
    global _active
    kept, _active = _active, _active.without_frameworks()
    try:
        yield
    finally:
        _active = kept


def _candidates(active: _Compiled, span_name: str, attributes: Mapping[str, Any]) -> Sequence[_Candidate]:
    """The rules that may read a span of this name and these attributes, in the order they are tried."""
    candidates = active.by_span_name.get(span_name, ())
    keys = active.attribute_keys.intersection(attributes)  # the span's keys, walked in C
    if not keys:
        return candidates
    if len(keys) == 1:
        [key] = keys
        found = _valued(active, key, attributes[key])
    else:  # most keys' values find no rule (a tool's type that marks nothing): ordered only when two do
        found, finding = [], []
        for key in keys:
            if rules := _valued(active, key, attributes[key]):
                found = rules
                finding.append(key)
        if len(finding) > 1:
            found = [c for key in sorted(finding, key=active.attribute_rank.__getitem__) for c in _valued(active, key, attributes[key])]
    return [*candidates, *found] if candidates else found


def _valued(active: _Compiled, key: str, value: Any) -> list[_Candidate]:
    """The rules found by ``key`` that may read a span whose ``key`` has this value."""
    values, others = active.by_value[key]
    if type(value) is str:
        if value.startswith('"'):  # a JSON string's text may be compared as its value: every rule
            return active.by_attribute[key]
        return values.get(value, others)
    try:
        return values.get(value, others)
    except TypeError:  # a list's value: no rule's equals holds it
        return others


def rule_for(span: SpanData) -> tuple[SpanRule, str, re.Match[str] | None] | None:
    """The first rule that reads ``span``, the name of its convention and the match of its
    ``span_name_matches`` (for fields read from the name's groups); None when no rule does."""
    active = _active
    attributes = span.attributes
    for rule, name, values in _candidates(active, span.name, attributes):
        if values is not None:  # its attribute's value is all it asks (found by that attribute: present)
            if not values:
                return rule, name, None
            value = attributes[rule.when.attribute]  # type: ignore[index]  # found by it: never None
            if (type(value) is str and value in values) or _value_in(value, values):  # a text: one test
                return rule, name, None
            continue
        matched = _matches(rule.when, span.name, attributes, active.patterns)
        if matched is not False:
            return rule, name, matched if isinstance(matched, re.Match) else None
    return None


def may_be_run(span_name: str, attributes: Mapping[str, Any]) -> bool | None:
    """A cheap, conservative test for the span processor's hot path, which holds back the spans
    that may be read as an agent run until they are judged: True when the rule that reads the
    span may make it a run (or name the agent of one), False when it reads it as something else,
    None when no rule reads it (the built-in adapters decide). A condition inside an attribute's
    JSON (``path``) is not decoded here: such a rule may match.

    >>> may_be_run("work", {}) is None
    True
    """
    active = _active
    for rule, _, values in _candidates(active, span_name, attributes):
        if values is not None:
            matched: re.Match[str] | bool | None = not values or _value_in(attributes[str(rule.when.attribute)], values)
        else:
            matched = _matches(rule.when, span_name, attributes, active.patterns, decode=False)
        if matched is False:
            continue
        if rule.role in _MAY_BE_RUN:
            return True
        if matched is not None:  # surely this rule's: no later rule reads the span
            return False
    return None


def _matches(when: When, span_name: str, attributes: Mapping[str, Any], patterns: Mapping[str, re.Pattern[str]],
             decode: bool = True) -> re.Match[str] | bool | None:
    """Whether a span of this name and these attributes meets ``when``: False, or True / the name
    pattern's match; None (with ``decode`` False) when only decoding an attribute's JSON would tell."""
    if when.span_name is not None and span_name != when.span_name:
        return False
    # the other attributes first, a few lookups (a framework's instrumentation told apart from
    # another's on spans alike: most spans a rule finds are not its own); then the name's pattern;
    # the attribute last: a ``path`` condition decodes its JSON
    if not _others_hold(when, attributes):
        return False
    matched = patterns[when.span_name_matches].fullmatch(span_name) if when.span_name_matches is not None else True
    if not matched or not _attributes_hold(when, attributes, None, decode, also=False):
        return False
    return None if not decode and when.path is not None else matched


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
    return attributes is not None and _attributes_hold(when, attributes, tool_name, True)


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


def _attributes_hold(when: When, attributes: Mapping[str, Any], tool_name: str | None, decode: bool, also: bool = True) -> bool:
    """``when``'s conditions on attributes: its attribute (its JSON ``path`` only with ``decode``),
    ``also`` and ``without`` (unless ``also`` is False: tested already), ``same_value`` and ``matches``."""
    if when.attribute is not None and not (holds(when, attributes) if decode or when.path is None else when.attribute in attributes):
        return False
    if also and not _others_hold(when, attributes):
        return False
    if when.same_value:
        first, *others = when.same_value
        if first not in attributes or not all(key in attributes and attributes[key] == attributes[first] for key in others):
            return False
    for key, pattern in when.matches.items():
        value = attributes.get(key)
        found = _pattern(pattern).fullmatch(value) if isinstance(value, str) else None
        if found is None or ("tool" in found.re.groupindex and found.group("tool") != tool_name):
            return False
    return True


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
    return not when.equals or _value_in(value, when.equals)


def _spelled_literally(value: str) -> bool:
    """Whether a JSON text without ``\\u`` escapes can spell this string value only as it is."""
    return value.isascii() and value.isprintable() and '"' not in value and "\\" not in value


def _value_in(value: Any, equals: tuple[Any, ...]) -> bool:
    """Whether ``value`` is one of ``equals``, or is a JSON string's text of one ("\"TOOL\"", as
    MLflow writes span types)."""
    return _in(value, equals) or (isinstance(value, str) and value.startswith('"') and _in(value.strip('"'), equals))


def _in(value: Any, equals: tuple[Any, ...]) -> bool:
    if isinstance(value, (list, dict, tuple)):
        return False
    kind = type(value)
    for candidate in equals:  # a loop, not any(): this runs for each rule a span's kind finds
        if value == candidate and kind is type(candidate):
            return True
    return False
