"""Issue 32, item 2: a convention lives in its file alone. The reader's code names no key a
shipped convention file names, and the generated code that chooses a span's rule chooses the one
its conditions, tested one by one, choose."""

from __future__ import annotations

import contextlib
import dataclasses
import random
import re
from pathlib import Path

import pytest

from otel_reliability.adapters import any_span, conventions, knowledge, to_record
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS

ROOT = Path(__file__).resolve().parent.parent


# The reader's code: every module of it (no convention is read by code any more)
READER_CODE = [path for folder in ("adapters", "assembly", "sources") for path in (ROOT / "otel_reliability" / folder).rglob("*.py")]
# A backend that stores a convention's key out of the attributes puts it back: it reads no convention.
RESTORED_BY_BACKEND = {"otel_reliability/sources/phoenix.py": {"openinference.span.kind"}}
# OpenTelemetry's own trace semantics, which every convention shares and the reader reads for any
# span: how a span records an exception and the type of its error (``adapters.common.error_text``).
OPENTELEMETRY_KEYS = {"exception", "exception.message", "exception.type", "error.type"}
# Where a convention file names attributes, events and span names: fields whose value is one,
# fields that list them, and fields whose keys are them.
_NAMING, _LISTING, _KEYED = ({"attribute", "event", "or_events", "events", "after_event", "turn", "name_attribute", "span_name"},
                             {"without", "same_value", "totals", "parts"}, {"also", "matches"})


def _names_in(value, field=None):
    """Every attribute key, event name and span name a convention file's data names."""
    if isinstance(value, dict):
        found = set(value) if field in _KEYED else set()
        return found.union(*(_names_in(item, key) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return set().union(*(_names_in(item, field) for item in value))
    if isinstance(value, str) and (field in _NAMING or field in _LISTING):
        return {value}
    return set()


@pytest.mark.parametrize("origin", conventions.in_force(), ids=lambda origin: origin.convention.name)
def test_no_reader_code_names_a_key_a_shipped_convention_file_names(origin):
    # Issue 32, item 2: a convention lives in its file alone. Every attribute, event and span name
    # the file names anywhere (what finds a span, where its fields and messages are, its token
    # counts, its conditions) is absent from the reader's code, except OpenTelemetry's own. A bare
    # word (Logfire's ``name``, a legacy event's ``content``) is a message format's field name too,
    # so only namespaced names are sought.
    names = {name for name in _names_in(origin.convention.model_dump()) - OPENTELEMETRY_KEYS if re.search(r"[.:]", name)}
    assert names, "the walk found no name: it no longer knows the file's fields"
    naming = {}
    for path in READER_CODE:
        text, restored = path.read_text(encoding="utf-8"), RESTORED_BY_BACKEND.get(str(path.relative_to(ROOT)), set())
        if found := sorted(name for name in names - restored if f'"{name}"' in text or f"'{name}'" in text):
            naming[str(path.relative_to(ROOT))] = found
    assert naming == {}


def test_no_reader_code_names_a_key_any_span_may_carry():
    # The keys read for every span whichever convention reads it are data too (``any_span.yaml``).
    names = {key for keys in any_span.KEYS.model_dump().values() for key in keys}
    naming = {str(path.relative_to(ROOT)): found for path in READER_CODE
              if (found := sorted(name for name in names if f'"{name}"' in path.read_text(encoding="utf-8")))}
    assert naming == {}


def _first_rule_matching(span):
    """The rule that reads ``span`` found the long way: every candidate tested by rule_matches."""
    active = conventions._active
    for rule, name, _, _ in conventions._candidates(active, span.name, span.attributes):
        matched = conventions.rule_matches(rule.when, span.name, span.attributes, active.patterns)
        if matched is not False:
            return rule, name, matched.group(0) if isinstance(matched, re.Match) else None
    return None


def test_every_corpus_span_is_read_by_the_rule_its_conditions_choose_warm_and_cold():
    # rule_for tries a span's candidates with generated code (conditions.compiled, dispatch): it
    # must choose the rule that testing every candidate's conditions one by one chooses
    spans = [span for path in sorted(CORPUS.glob("*/*.json")) if not path.name.endswith((".truth.json", ".verdict.json", ".runoutput.json"))
             for span in read_telemetry(path).spans]
    for cold in (False, True):
        with knowledge.removed() if cold else contextlib.nullcontext():
            chosen = [(found[0], found[1], found[2].group(0) if found[2] else None) if (found := conventions.rule_for(span)) else None
                      for span in spans]
            assert chosen == [_first_rule_matching(span) for span in spans]


def test_the_span_processor_holds_back_a_corpus_span_exactly_when_may_be_run_says_it_may_be_a_run():
    # holds_back answers from a span's shape alone when none of its candidate rules makes runs; it
    # must hold back what may_be_run, testing the candidates' conditions, would
    spans = [span for path in sorted(CORPUS.glob("*/*.json")) if not path.name.endswith((".truth.json", ".verdict.json", ".runoutput.json"))
             for span in read_telemetry(path).spans]
    for cold in (False, True):
        with knowledge.removed() if cold else contextlib.nullcontext():
            for local_root in (False, True):
                held = [conventions.holds_back(span.name, span.attributes, local_root) for span in spans]
                assert held == [bool(conventions.may_be_run(span.name, span.attributes, local_root)) for span in spans]
                assert any(held) and not all(held)


class _Text(str):
    """A str subclass, as a span processor sees the attributes of an SDK that writes a str enum
    (agent_framework's ``OtelAttr``: keys and values) before any exporter turns them into text."""


def test_a_span_whose_keys_and_values_are_a_str_enum_reads_as_the_same_span_in_plain_text():
    spans = [span for path in sorted(CORPUS.glob("*/*.json")) if not path.name.endswith((".truth.json", ".verdict.json", ".runoutput.json"))
             for span in read_telemetry(path).spans]
    enums = [dataclasses.replace(span, attributes={_Text(k): _Text(v) if isinstance(v, str) else v for k, v in span.attributes.items()})
             for span in spans]
    assert [to_record(span) for span in enums] == [to_record(span) for span in spans]
    assert ([conventions.holds_back(span.name, span.attributes, True) for span in enums]
            == [conventions.holds_back(span.name, span.attributes, True) for span in spans])


def _first_rule_in_the_files(span):
    """The rule that reads ``span`` found with no index: every rule in force tested in the order
    rules are tried (those found by the span's name, then by attribute key, each key's rules in
    the files' order and the keys in the order the files first name them)."""
    rules = [(rule, origin.convention.name) for origin in conventions.in_force() for rule in origin.convention.spans]
    by_attribute = [(rule, name) for rule, name in rules if not rule.when.span_name]
    keys = dict.fromkeys(rule.when.attribute for rule, _ in by_attribute)
    ordered = [(rule, name) for rule, name in rules if rule.when.span_name == span.name]
    ordered += [(rule, name) for key in keys for rule, name in by_attribute if rule.when.attribute == key]
    for rule, name in ordered:
        matched = conventions.rule_matches(rule.when, span.name, span.attributes, conventions._active.patterns)
        if matched is not False:
            return rule, name, matched.group(0) if isinstance(matched, re.Match) else None
    return None


def test_a_span_carrying_other_conventions_keys_too_is_read_by_the_first_rule_in_the_files():
    # A rule is found by the key its ``also`` asks values of (a framework's tool rule by GenAI's
    # operation), not by its own attribute: the rule chosen must stay the first in the order
    # tried, whatever other selector keys and values a span carries beside its own
    rules = [rule for origin in conventions.in_force() for rule in origin.convention.spans]
    added = sorted({(key, value) for rule in rules for key, values in [(rule.when.attribute, rule.when.equals), *rule.when.also.items()]
                    if key for value in (*values, "another", 1, f'"{values[0] if values else "x"}"')}, key=str)
    rng = random.Random(32)
    spans = [span for path in sorted(CORPUS.glob("*/*.json")) if not path.name.endswith((".truth.json", ".verdict.json", ".runoutput.json"))
             for span in read_telemetry(path).spans]
    varied = [dataclasses.replace(span, attributes={**span.attributes, **dict(rng.sample(added, rng.randint(1, 2)))}) for span in spans]
    for cold in (False, True):
        with knowledge.removed() if cold else contextlib.nullcontext():
            chosen = [(found[0], found[1], found[2].group(0) if found[2] else None) if (found := conventions.rule_for(span)) else None
                      for span in [*spans, *varied]]
            assert chosen == [_first_rule_in_the_files(span) for span in [*spans, *varied]]
