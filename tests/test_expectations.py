"""Expectation selection and the published JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_reliability.expectations import Expectation, ExpectationError, Match, json_schema, select

SCHEMA = Path(__file__).parent.parent / "schema" / "expectations.schema.json"

RULES = [
    Expectation(name="by-agent", match=Match(agent="calculator")),
    Expectation(name="by-span-name", match=Match(span_name="Team.run")),
    Expectation(name="by-attribute", match=Match(attributes={"deployment": "canary", "tags": ["a", "b"]})),
    Expectation(name="catch-all"),
]


@pytest.mark.parametrize(
    ("agent", "span_name", "attributes", "chosen"),
    [
        pytest.param("calculator", "x", {}, "by-agent", id="agent-name"),
        pytest.param("other", "Team.run", {}, "by-span-name", id="span-name"),
        pytest.param("other", "x", {"deployment": "canary", "tags": ("a", "b")}, "by-attribute", id="attribute-array-equality"),
        pytest.param("other", "x", {"deployment": "canary"}, "catch-all", id="every-attribute-must-match"),
        pytest.param("calculator", "Team.run", {}, "by-agent", id="first-matching-rule-wins"),
        pytest.param("other", "x", {"reliability.expect.case": "by-span-name"}, "by-span-name", id="span-names-a-case"),
    ],
)
def test_the_first_matching_rule_is_chosen_unless_the_span_names_one(agent, span_name, attributes, chosen):
    assert select(RULES, agent, span_name, attributes).name == chosen


def test_span_attribute_tool_calls_make_an_expectation_of_their_own():
    chosen = select(RULES, "calculator", "x", {"reliability.expect.tool_calls": ("multiply", "add")})
    assert (chosen.name, chosen.expected_tool_calls) == ("span-attributes", ["multiply", "add"])


def test_a_span_naming_an_unknown_case_is_an_error_naming_the_case():
    with pytest.raises(ExpectationError, match="'nope'"):
        select(RULES, "a", "b", {"reliability.expect.case": "nope"})


def test_published_json_schema_matches_the_models():
    assert json.loads(SCHEMA.read_text()) == json_schema()
