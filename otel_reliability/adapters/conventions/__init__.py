"""Tracing conventions as data: one YAML file per convention, validated at load and compiled
into lookup tables once, so that reading a span only looks things up.

The files beside this module ship with the package; a user adds their own
(``use(["acme.yaml"])``: ``--conventions`` on ``eval``, ``inspect`` and ``serve``, the span
processor's ``conventions=``, ``OTEL_RELIABILITY_CONVENTIONS``). A rule is found by its
span name or by an attribute the span carries, so a span that no convention file speaks of
costs one set test and one dict lookup. The first rule that matches reads the span; the
files a user adds are tried before the shipped ones, which come before the conventions the
built-in adapters read.

``removed()`` reads without any convention file: what a framework's traces give with none.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import yaml
from pydantic import ValidationError

from ...input_errors import validation_problems, yaml_problem
from ...model import SpanData
from ...textfile import NotUtf8Error, read_text
from ..decoders import as_json, first_at
from .model import Convention, SpanRule, When

__all__ = ["Convention", "ConventionError", "Origin", "in_force", "load_file", "may_be_run", "paths_from", "removed", "rule_for", "use"]

FOLDER = Path(__file__).parent
SHIPPED = "shipped"  # a convention file that comes with the package
ENVIRONMENT_VARIABLE = "OTEL_RELIABILITY_CONVENTIONS"  # the user's convention files, comma-separated


def paths_from(environ: Mapping[str, str]) -> list[str]:
    """The convention files an environment names (``OTEL_RELIABILITY_CONVENTIONS``, comma-separated).

    >>> paths_from({"OTEL_RELIABILITY_CONVENTIONS": "acme.yaml, more.yaml"})
    ['acme.yaml', 'more.yaml']
    """
    return [part.strip() for part in environ.get(ENVIRONMENT_VARIABLE, "").split(",") if part.strip()]


class ConventionError(ValueError):
    """A convention file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Origin:
    """A convention in force, and where it came from (for ``otel-reliability conventions``)."""

    convention: Convention
    source: str  # the file's path, or SHIPPED

    @property
    def found_by(self) -> list[str]:
        """What a span must have for this convention to read it: its rules' names and attributes."""
        return sorted({f"span name {r.when.span_name}" if r.when.span_name else f"attribute {r.when.attribute}" for r in self.convention.spans})


def load_file(path: str | Path) -> Convention:
    """One convention file, validated (``ConventionError`` in one line naming it otherwise)."""
    path = Path(path)
    try:
        text = read_text(path)
    except NotUtf8Error as exc:
        raise ConventionError(f"convention file {exc}") from None
    except OSError as exc:
        raise ConventionError(f"convention file {path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConventionError(f"convention file {path}: not valid YAML: {yaml_problem(exc)}") from None
    if data is None:
        raise ConventionError(f"convention file {path}: the file is empty: expected name, description and spans")
    try:
        return Convention.model_validate(data)
    except ValidationError as exc:
        raise ConventionError(f"convention file {path}: {validation_problems(exc)}") from None


class _Compiled:
    """The conventions in force as lookup tables: rules by span name and by attribute key,
    each list in the order it is tried."""

    def __init__(self, origins: Sequence[Origin]) -> None:
        names = [o.convention.name for o in origins]
        if len(set(names)) != len(names):
            raise ConventionError(f"two conventions share a name: {sorted({n for n in names if names.count(n) > 1})}")
        self.origins = tuple(origins)
        self.by_span_name: dict[str, list[tuple[SpanRule, str]]] = {}
        self.by_attribute: dict[str, list[tuple[SpanRule, str]]] = {}
        for origin in origins:
            for rule in origin.convention.spans:
                table, key = (self.by_span_name, rule.when.span_name) if rule.when.span_name else (self.by_attribute, rule.when.attribute)
                table.setdefault(str(key), []).append((rule, origin.convention.name))
        self.attribute_keys = frozenset(self.by_attribute)
        self.attribute_order = tuple(self.by_attribute)  # rules are tried in the files' order, never a set's
        runs = [r.when for o in origins for r in o.convention.spans if r.role == "agent_run"]
        self.run_names = frozenset(w.span_name for w in runs if w.span_name)
        self.run_keys = frozenset(w.attribute for w in runs if w.attribute and not w.span_name)
        # a run key's values, where every rule it finds runs by asks for some (a kind's value):
        # any other value of it marks no run
        self.run_values: dict[str, frozenset[Any]] = {}
        for key in self.run_keys:
            found_by = [w for w in runs if w.attribute == key and not w.span_name]
            if all(w.equals and not w.path for w in found_by):
                self.run_values[key] = frozenset(v for w in found_by for v in w.equals)
        self.patterns = {pattern: re.compile(pattern) for origin in origins for rule in origin.convention.spans
                         if (pattern := rule.when.span_name_matches) is not None}


def _shipped() -> list[Origin]:
    return [Origin(load_file(path), SHIPPED) for path in sorted(FOLDER.glob("*.yaml"))]


_SHIPPED = _shipped()
_active = _Compiled(_SHIPPED)


def use(paths: Iterable[str | Path]) -> None:
    """Read with the user's convention files in ``paths`` (tried before the shipped ones) from
    now on, in this process; an empty list leaves only the shipped ones. Every file is
    validated before any takes effect (``ConventionError``).

    >>> use([]); [o.convention.name for o in in_force()] == [o.convention.name for o in _SHIPPED]
    True
    """
    global _active
    users = [Origin(load_file(path), str(path)) for path in paths]
    _active = _Compiled([*users, *_SHIPPED])


def in_force() -> tuple[Origin, ...]:
    """The conventions read with now, in the order they are tried."""
    return _active.origins


@contextmanager
def removed() -> Iterator[None]:
    """Read with no convention file at all while the block runs."""
    global _active
    kept, _active = _active, _Compiled(())
    try:
        yield
    finally:
        _active = kept


def rule_for(span: SpanData) -> tuple[SpanRule, str, re.Match[str] | None] | None:
    """The first rule that reads ``span``, the name of its convention and the match of its
    ``span_name_matches`` (for fields read from the name's groups); None when no rule does."""
    active = _active
    candidates = active.by_span_name.get(span.name)
    if not active.attribute_keys.isdisjoint(span.attributes):
        found = [pair for key in active.attribute_order if key in span.attributes for pair in active.by_attribute[key]]
        candidates = [*(candidates or ()), *found]
    for rule, name in candidates or ():
        matched = _matches(rule.when, span, active.patterns)
        if matched is not False:
            return rule, name, matched if isinstance(matched, re.Match) else None
    return None


def may_be_run(span_name: str, attributes: Mapping[str, Any]) -> bool:
    """A cheap, conservative test for spans a convention file may read as an agent run (for
    the span processor's hot path, which holds such spans back until judged).

    >>> may_be_run("work", {})
    False
    """
    active = _active
    if span_name in active.run_names:
        return True
    if active.run_keys.isdisjoint(attributes):
        return False
    values = active.run_values
    return any(key not in values or _hashable_in(attributes[key], values[key]) for key in active.run_keys if key in attributes)


def _hashable_in(value: Any, values: frozenset[Any]) -> bool:
    """Whether ``value`` is one of ``values`` (a value that cannot be hashed may be any: kept)."""
    try:
        return value in values or (isinstance(value, str) and value.strip('"') in values)
    except TypeError:
        return True


def _matches(when: When, span: SpanData, patterns: Mapping[str, re.Pattern[str]]) -> re.Match[str] | bool:
    """Whether ``span`` meets ``when``: False, or True / the name pattern's match."""
    if when.span_name is not None and span.name != when.span_name:
        return False
    # the name's pattern before the attribute: a ``path`` condition decodes the attribute's JSON
    matched = patterns[when.span_name_matches].fullmatch(span.name) if when.span_name_matches is not None else True
    if not matched or (when.attribute is not None and not holds(when, span.attributes)):
        return False
    if when.also and not all(key in span.attributes and (not values or _in(span.attributes[key], values))
                             for key, values in when.also.items()):
        return False
    if when.without and not span.attributes.keys().isdisjoint(when.without):
        return False
    return matched


def holds(when: When, attributes: Mapping[str, Any]) -> bool:
    """``when``'s attribute condition: present (with ``path``: a value there in its JSON), and
    (with ``equals``) one of its values."""
    if when.attribute is None or when.attribute not in attributes:
        return False
    value = attributes[when.attribute]
    if when.path is not None:
        value = first_at(as_json(value), when.path)
        if value is None:
            return False
    if not when.equals:
        return True
    if _in(value, when.equals):
        return True
    # a JSON string's text ("\"TOOL\"", as MLflow writes span types) compared as its value
    return isinstance(value, str) and value.startswith('"') and _in(value.strip('"'), when.equals)


def _in(value: Any, equals: tuple[Any, ...]) -> bool:
    return not isinstance(value, (list, dict, tuple)) and any(value == v and type(value) is type(v) for v in equals)
