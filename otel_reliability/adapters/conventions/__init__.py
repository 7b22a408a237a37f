"""Tracing conventions as data: one YAML file per convention, validated at load and compiled
into lookup tables once, so that reading a span only looks things up.

The files beside this module ship with the package; a user adds their own
(``use(["acme.yaml"])``: ``--conventions`` on ``eval``, ``inspect`` and ``serve``, the span
processor's ``conventions=``, ``OTEL_RELIABILITY_CONVENTIONS``). A rule is found by its
span name or by an attribute the span carries, so a span that no convention file speaks of
costs one set test and one dict lookup. The first rule that matches reads the span; the
files a user adds are tried before the shipped ones, and a file is tried before the
conventions it ``refines`` (``files``:
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
from .conditions import Test, compiled, condition_holds, rule_matches, value_in
from .dispatch import Pick, pick_for
from .files import ENVIRONMENT_VARIABLE, SHIPPED, ConventionError, Origin, load_file, paths_from, refining_first
from .model import Convention, LogEvents, SpanRule, When

__all__ = [
    "ENVIRONMENT_VARIABLE", "SHIPPED", "Convention", "ConventionError", "Origin", "condition_holds", "in_force", "load_file", "log_events", "may_be_run", "paths_from",
    "frameworks_removed", "holds_back", "removed", "rule_for", "use",
]

FOLDER = Path(__file__).parent
# roles that make, or may make, a span a run: the span processor holds such spans back
_MAY_BE_RUN = frozenset({"agent_run", "names_agent"})


class _Compiled:
    """The conventions in force as lookup tables: rules by span name and by attribute key,
    each list in the order it is tried, and by the key's value: the rules that ask for that
    value and those that ask for none, so that a kind's value finds its rules without testing
    the others.

    A rule is tried in the order its own attribute gives it (rules found by the key first named
    in the files first, each key's rules in the files' order), but is found by the selector key
    of its ``also`` with values when there is one (``_finding_key``): a framework's variant of a
    kind (GenAI's tool span whose ``error.type`` is a framework's) is then found by the kind's
    key, and a span of that kind carries one selector key, not two. Candidates found by several
    keys are merged back into the order tried, so no span's rule changes."""

    def __init__(self, origins: Sequence[Origin]) -> None:
        names = [o.convention.name for o in origins]
        if len(set(names)) != len(names):
            raise ConventionError(f"two conventions share a name: {sorted({n for n in names if names.count(n) > 1})}")
        self.origins = origins = refining_first(origins)
        self.patterns = {pattern: re.compile(pattern) for origin in origins for rule in origin.convention.spans
                         if (pattern := rule.when.span_name_matches) is not None}
        self.by_span_name: dict[str, list[_Candidate]] = {}
        by_own_attribute: dict[str, list[_Candidate]] = {}
        for origin in origins:
            for rule in origin.convention.spans:
                table, key = (self.by_span_name, rule.when.span_name) if rule.when.span_name else (by_own_attribute, rule.when.attribute)
                table.setdefault(str(key), []).append((rule, origin.convention.name, _only_values(rule.when),
                                                       compiled(rule.when, self.patterns)))
        tried = [candidate for found in by_own_attribute.values() for candidate in found]
        self.rank = {id(candidate): rank for rank, candidate in enumerate(tried)}  # a candidate's place in the order tried
        # key -> the rules it finds, in the order tried, each with the values of the key it asks for (empty: any)
        self.by_attribute: dict[str, list[_Candidate]] = {}
        asking: dict[str, list[tuple[_Candidate, tuple[Any, ...]]]] = {}
        for candidate in tried:
            key, asks = _finding_key(candidate[0].when, by_own_attribute)
            self.by_attribute.setdefault(key, []).append(candidate)
            asking.setdefault(key, []).append((candidate, asks))
        self.found_by = {id(candidate): key for key, found in self.by_attribute.items() for candidate in found}
        self.attribute_keys = frozenset(self.by_attribute)
        self.attribute_order = tuple(self.by_attribute)  # a span's selector keys in one order: its shape's
        self.attribute_rank = {key: rank for rank, key in enumerate(self.attribute_order)}
        self.many_attributes = 4 * len(self.attribute_order)  # more than this: the selector keys looked up, not intersected
        # key -> (value -> its rules, the rules of any other value); a value's list may hold a rule
        # that then does not match (1 == True), never leave out one that would
        self.by_value: dict[str, tuple[dict[Any, list[_Candidate]], list[_Candidate]]] = {}
        for key, found_asking in asking.items():
            values = {value: [c for c, asked in found_asking if not asked or value in asked] for _, asked in found_asking for value in asked}
            self.by_value[key] = values, [c for c, asked in found_asking if not asked]
        self.log_events = tuple(o.convention.log_events for o in origins if o.convention.log_events is not None)
        self.asked = {key: values for key, (values, _) in self.by_value.items()}  # the values rules ask each key for
        self.picks: dict[tuple[Any, ...], Pick] = {}  # a span's shape -> what tries its candidates (``dispatch``)
        self.shapes_may_run: dict[tuple[Any, ...], list[_Candidate]] = {}  # a shape -> its candidates, [] when none makes runs
        self.orders: dict[frozenset[str], tuple[str, ...]] = {}  # selector keys a span carries, in one order
        # a span with no rule found by its name and one selector key: key -> its text value -> the pick
        self.one_key = {key: _ValuePicks(self, key) for key in self.attribute_order}
        self.besides = {key: self.attribute_keys - {key} for key in self.attribute_order}  # the other selector keys
        # the selector key of the last span that carried only it (``rule_for``); with no selector
        # key, one no span passes for (a span carrying it is not disjoint from it)
        self.last_key = self.attribute_order[0] if self.attribute_order else ""
        self.besides.setdefault(self.last_key, frozenset({self.last_key}))
        self._cold: _Compiled | None = None

    def without_frameworks(self) -> _Compiled:
        """These conventions without the files of framework knowledge, compiled once."""
        if self._cold is None:
            kept = [origin for origin in self.origins if origin.convention.framework is None]
            self._cold = self if len(kept) == len(self.origins) else _Compiled(kept)
        return self._cold

    def in_order_tried(self, candidates: Iterable[_Candidate]) -> list[_Candidate]:
        """Candidates found by several selector keys, in the order they are tried."""
        return sorted(candidates, key=lambda candidate: self.rank[id(candidate)])


def _finding_key(when: When, by_own_attribute: Mapping[str, Sequence[_Candidate]]) -> tuple[str, tuple[Any, ...]]:
    """The selector key a rule found by its attribute is found by, and the values of it the rule
    asks for: of its ``also`` keys with values that rules are found by, the one most rules are;
    else its own attribute (with its ``equals``, unless a ``path`` asks them of a value inside)."""
    shared = [key for key, values in when.also.items() if values and key in by_own_attribute]
    if shared:
        key = max(shared, key=lambda key: len(by_own_attribute[key]))  # the first of the most found
        return key, when.also[key]
    return str(when.attribute), when.equals if when.path is None else ()


class _ValuePicks(dict[str, Pick]):
    """One selector key's picks by its text value, for a span with no rule found by its name and
    no other selector key: made on the first span of each value (a value no rule asks for gets
    the pick of any other value, a JSON string's text the test of each candidate; at most
    ``_MOST_SHAPES`` values are kept)."""

    __slots__ = ("active", "key")

    def __init__(self, active: _Compiled, key: str) -> None:
        super().__init__()
        self.active, self.key = active, key

    def __missing__(self, value: str) -> Pick:
        if len(self) > _MOST_SHAPES:
            self.clear()
        pick: Pick
        if value.startswith('"'):  # a JSON string's text may be compared as its value: every candidate tested
            pick = functools.partial(_tried_one_by_one, self.active)
        else:
            pick = _pick_of(self.active, (None, self.key, value if value in self.active.asked[self.key] else _OTHER_VALUE))
        self[value] = pick
        return pick


# a rule, its convention's name, the values its attribute must have when that is all it asks
# (an empty tuple: any; None when it asks more), and its test (``conditions.compiled``)
_Candidate = tuple[SpanRule, str, "tuple[Any, ...] | None", Test]


def _only_values(when: When) -> tuple[Any, ...] | None:
    """``when``'s values of its attribute when its attribute is all it asks for, else None."""
    asks_more = (when.span_name, when.span_name_matches, when.path, when.event) != (None,) * 4 or when.also or when.without or when.inside
    return None if asks_more or when.same_value or when.matches or when.attribute is None else when.equals


_SHIPPED = [Origin(load_file(path), SHIPPED) for path in sorted(FOLDER.glob("*.yaml"))]
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
    if len(attributes) > active.many_attributes:  # a model span's many message keys: look the few up
        keys = frozenset([key for key in active.attribute_order if key in attributes])
        if not keys:
            return candidates
    elif active.attribute_keys.isdisjoint(attributes):
        return candidates
    else:
        keys = active.attribute_keys.intersection(attributes)  # the span's keys, walked in C
    if len(keys) == 1:
        [key] = keys
        found = _valued(active, key, attributes[key])
    else:  # most keys' values find no rule (a tool's type that marks nothing): merged only when two do
        found, finding = [], []
        for key in keys:
            if rules := _valued(active, key, attributes[key]):
                found = rules
                finding.append(key)
        if len(finding) > 1:
            found = active.in_order_tried(c for key in finding for c in _valued(active, key, attributes[key]))
    return [*candidates, *found] if candidates else found


def _valued(active: _Compiled, key: str, value: Any) -> list[_Candidate]:
    """The rules found by ``key`` that may read a span whose ``key`` has this value."""
    values, others = active.by_value[key]
    if isinstance(value, str):  # a str enum's text too
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
    # the common case: the span carries one selector key, a text value, and a name no rule is found
    # by. The key of the last such span is tried first (spans come in runs of one instrumentation):
    # two lookups and one set test instead of making the set of the span's selector keys
    key = active.last_key
    if key in attributes and len(attributes) <= active.many_attributes and active.besides[key].isdisjoint(attributes):
        value, name = attributes[key], span.name
        if type(value) is str and name not in active.by_span_name:
            return active.one_key[key][value](name, attributes)
    elif len(attributes) <= active.many_attributes:
        found = active.attribute_keys.intersection(attributes)
        if len(found) == 1 and span.name not in active.by_span_name:
            [key] = found
            value = attributes[key]
            if type(value) is str:
                active.last_key = key
                return active.one_key[key][value](span.name, attributes)
    shape = _shape(active, span.name, attributes)
    if shape is not None:  # one generated function tries the shape's candidates
        return _pick_of(active, shape)(span.name, attributes)
    return _tried_one_by_one(active, span.name, attributes)


def _tried_one_by_one(active: _Compiled, span_name: str, attributes: Mapping[str, Any]) -> tuple[SpanRule, str, re.Match[str] | None] | None:
    """``rule_for`` for a span whose selector values are not all plain text: each candidate tested."""
    for rule, name, values, test in _candidates(active, span_name, attributes):
        if values is not None:  # its attribute's value is all it asks (found by that attribute: present)
            if not values:
                return rule, name, None
            value = attributes[rule.when.attribute]  # type: ignore[index]  # found by it: never None
            if (type(value) is str and value in values) or value_in(value, values):  # a text: one test
                return rule, name, None
            continue
        matched = test(span_name, attributes)
        if matched is not False:
            return rule, name, matched if isinstance(matched, re.Match) else None
    return None


_OTHER_VALUE = ("another value",)  # in a shape: a text value no rule asks for (a tuple: no text equals it)
_MOST_SHAPES = 10_000  # shapes are bounded by the values rules name; a bound all the same


def _shape(active: _Compiled, span_name: str, attributes: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What decides a span's candidates (``dispatch``): its name when rules are found by it, and
    each selector key it carries (in ``attribute_order``), with its value when a rule asks for
    that value; None when a selector's value is not plain text."""
    named = span_name if span_name in active.by_span_name else None
    if len(attributes) > active.many_attributes:  # a model span's many message keys: look the few up
        keys: Iterable[str] = [key for key in active.attribute_order if key in attributes]
    else:
        found = active.attribute_keys.intersection(attributes)
        if len(found) == 1:  # without a list
            [key] = found
            value = attributes[key]
            if type(value) is not str or value.startswith('"'):
                return None
            return named, key, value if value in active.asked[key] else _OTHER_VALUE
        if not found:
            return (named,)
        ordered = active.orders.get(found)
        if ordered is None:  # a set of keys met for the first time: sorted once
            ordered = active.orders[found] = tuple(sorted(found, key=active.attribute_rank.__getitem__))
        keys = ordered
    shape: list[Any] = [named]
    for key in keys:
        value = attributes[key]
        if type(value) is not str or value.startswith('"'):
            return None
        shape.append(key)
        shape.append(value if value in active.asked[key] else _OTHER_VALUE)
    return tuple(shape)


def _pick_of(active: _Compiled, shape: tuple[Any, ...]) -> Pick:
    """What tries the candidates of a span of this shape: made once a shape."""
    pick = active.picks.get(shape)
    if pick is None:
        if len(active.picks) > _MOST_SHAPES:
            active.picks.clear()
            active.orders.clear()
        pick = active.picks[shape] = _pick(active, shape)
    return pick


def _pick(active: _Compiled, shape: tuple[Any, ...]) -> Pick:
    """What tries the candidates of a span of this shape, in ``_candidates``' order."""
    named, found = _shape_candidates(active, shape)
    return pick_for([*named, *found], [None] * len(named) + [active.found_by[id(c)] for c in found], active.patterns)


def _shape_candidates(active: _Compiled, shape: tuple[Any, ...]) -> tuple[list[_Candidate], list[_Candidate]]:
    """The candidates of a span of this shape: those found by its name, and those found by its attributes."""
    named = list(active.by_span_name.get(shape[0], ())) if shape[0] is not None else []
    found: list[_Candidate] = []
    for key, value in zip(shape[1::2], shape[2::2], strict=True):
        values, others = active.by_value[key]
        found.extend(others if value is _OTHER_VALUE else values[value])
    if len(shape) > 3:
        found = active.in_order_tried(found)
    return named, found


def holds_back(span_name: str, attributes: Mapping[str, Any], local_root: bool) -> bool:
    """``may_be_run`` as the span processor asks it on the app's thread (hold the span back?), with a
    shape's candidates listed once: none of them makes runs (a tool's, a model call's), none is tested."""
    active = _active
    shape = _shape(active, span_name, attributes)
    if shape is None:
        return bool(may_be_run(span_name, attributes, local_root))
    if (candidates := active.shapes_may_run.get(shape)) is None:
        if len(active.shapes_may_run) > _MOST_SHAPES:
            active.shapes_may_run.clear()
        candidates = [c for part in _shape_candidates(active, shape) for c in part]
        active.shapes_may_run[shape] = candidates = candidates if any(c[0].role in _MAY_BE_RUN for c in candidates) else []
    return bool(candidates) and bool(_may_be_run_among(candidates, span_name, attributes, local_root))


def may_be_run(span_name: str, attributes: Mapping[str, Any], local_root: bool = True) -> bool | None:
    """A cheap, conservative test for the span processor's hot path, which holds back the spans
    that may be read as an agent run until they are judged: True when the rule that reads the
    span may make it a run (or name the agent of one), False when it reads it as something else,
    None when no rule reads it (it is no run). A condition inside an attribute's JSON (``path``,
    ``inside``) is not decoded here: such a rule may match. ``local_root``: the span has no parent
    in this process (a rule ``held_back: at_local_root`` holds back only such spans).

    >>> may_be_run("work", {}) is None
    True
    """
    return _may_be_run_among(_candidates(_active, span_name, attributes), span_name, attributes, local_root)


def _may_be_run_among(candidates: Sequence[_Candidate], span_name: str, attributes: Mapping[str, Any], local_root: bool) -> bool | None:
    for rule, _, values, test in candidates:
        if values is not None:
            matched: re.Match[str] | bool | None = not values or value_in(attributes[str(rule.when.attribute)], values)
        elif rule.when.path is None and not rule.when.inside:  # nothing to decode: its compiled test says it
            matched = test(span_name, attributes)
        else:
            matched = rule_matches(rule.when, span_name, attributes, _active.patterns, decode=False)
        if matched is False:
            continue
        if rule.role in _MAY_BE_RUN and (local_root or rule.held_back == "anywhere"):
            return True
        if matched is not None:  # surely this rule's: no later rule reads the span
            return False
    return None
