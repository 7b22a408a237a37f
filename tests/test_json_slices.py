"""``loads_in_slices`` gives what ``json.loads`` gives, value or error, for any text.

It parses big OTLP/JSON bodies a value at a time (so the receiver's other threads run
between two spans); nothing a user sees may differ from one ``json.loads``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_reliability.sources.json_slices import loads_in_slices

from .test_sources_fuzz import json_values

FIXTURE = Path(__file__).parent / "fixtures" / "corpus" / "pydantic_ai" / "error_fatal.json"
FUZZ = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(parse, text: str):
    try:
        return "value", parse(text)
    except json.JSONDecodeError as exc:
        return "error", exc.msg, exc.pos


DOCUMENTS = {
    "a corpus trace": FIXTURE.read_text(encoding="utf-8"),
    "empty": "",
    "whitespace": " \n",
    "an empty object": "{}",
    "an array at the top": '[{"resourceSpans": []}]',
    "spans not an array": '{"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]}',
    "levels holding non-objects": '{"resourceSpans": [1, "x", null, {"scopeSpans": [[], {}]}]}',
    "a duplicate key (the last wins)": '{"resourceSpans": [], "resourceSpans": [{"a": 1}]}',
    "snake_case and the pre-0.19 name": '{"resource_spans": [{"instrumentation_library_spans": [{"spans": [{}]}]}]}',
    "levels nested deeper than a request": '{"spans": [{"spans": [{"spans": [{"spans": [{"spans": [1]}]}]}]}]}',
    "extra data": '{"resourceSpans": []} {}',
    "a missing colon": '{"resourceSpans" []}',
    "a trailing comma in an object": '{"resourceSpans": [],}',
    "a trailing comma in a level array": '{"resourceSpans": [{},]}',
    "a missing comma between spans": '{"resourceSpans": [{"scopeSpans": [{"spans": [{} {}]}]}]}',
    "an unterminated array": '{"resourceSpans": [{"scopeSpans": [',
    "a bad value in a span": '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": tru}]}]}]}',
    "a byte-order mark": '\ufeff{"resourceSpans": []}',
    "NaN and big numbers": '{"resourceSpans": [{"x": NaN, "y": 1e400, "z": 123456789012345678901234567890}]}',
}


@pytest.mark.parametrize("text", list(DOCUMENTS.values()), ids=list(DOCUMENTS))
def test_slices_parse_as_json_loads_does(text):
    assert outcome(loads_in_slices, text) == outcome(json.loads, text)


@FUZZ
@given(value=json_values)
def test_any_json_document_parses_to_the_same_value(value):
    text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [value]}]}, value]})
    assert loads_in_slices(text) == json.loads(text)


@FUZZ
@given(data=st.data())
def test_damaged_documents_fail_in_the_same_place_with_the_same_message(data):
    text = DOCUMENTS["a corpus trace"]
    start = data.draw(st.integers(0, len(text) - 1))
    length = data.draw(st.integers(0, 3))
    damaged = text[:start] + data.draw(st.sampled_from(["", "{", "}", "[", "]", ",", ":", '"', " ", "x"])) + text[start + length:]
    assert outcome(loads_in_slices, damaged) == outcome(json.loads, damaged)
