"""``decode_json`` is ``json.loads`` for every text: the same value, or the same error; the
encoders write strict JSON that reads back as the value, non-finite numbers as null."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_reliability.jsontext import decode_json, encode_document, encode_stored, encode_unicode, finite

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def outcome(decode, text):
    try:
        return ("value", decode(text))
    except ValueError as exc:
        return ("error", type(exc), str(exc))


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\n", "x", "}", "]", ",1"]), st.sampled_from(["", " ", "\t"]))
def test_same_value_or_same_error_as_json_loads(value, suffix, prefix):
    text = prefix + json.dumps(value) + suffix
    assert outcome(decode_json, text) == outcome(json.loads, text)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1}', "[1, 2]", '{"a": 1}}', "[1]]", '{"a": }', "[", "{}", "[]", '{"a": [1, {"b": null}]}', "{]", "[}",
     '{"a": NaN}', "[Infinity]", '"text"', "12", " {} ", "{} x"],
)
def test_edge_texts_read_as_json_loads_reads_them(text):
    assert outcome(decode_json, text) == outcome(json.loads, text)


ANY_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
    max_leaves=12,
)


def strict_loads(text):
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@settings(max_examples=400, deadline=None)
@given(ANY_VALUES)
def test_encoders_write_strict_json_that_reads_back_as_the_value(value):
    expected = json.loads(json.dumps(finite(value)))  # keys as json writes them, tuples as lists
    for encode in (encode_stored, encode_unicode, encode_document):
        assert strict_loads(encode(value)) == expected


def test_finite_replaces_only_non_finite_numbers():
    value = {"a": [1.0, float("nan"), (float("inf"), -0.0)], 2: float("-inf"), "s": "NaN", "i": 2**80}
    assert finite(value) == {"a": [1.0, None, [None, -0.0]], 2: None, "s": "NaN", "i": 2**80}
