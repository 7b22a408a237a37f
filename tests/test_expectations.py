"""Expectation selection and the published JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_reliability.expectations import Expectation, ExpectationError, Match, json_schema, select

ROOT = Path(__file__).parent.parent
# The schema for editors at the top of the checkout, and the copy the wheel ships.
SCHEMAS = [ROOT / "schema" / "expectations.schema.json", ROOT / "otel_reliability" / "schema" / "expectations.schema.json"]
REGENERATE = (
    "python -c 'import json; from otel_reliability.expectations import json_schema; "
    "t = json.dumps(json_schema(), indent=2) + \"\\n\"; "
    "[open(p, \"w\").write(t) for p in (\"schema/expectations.schema.json\", \"otel_reliability/schema/expectations.schema.json\")]'"
)

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


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: str(p.relative_to(ROOT)))
def test_published_json_schema_is_the_models_schema(path):
    assert path.read_text() == json.dumps(json_schema(), indent=2) + "\n", f"{path} is stale; regenerate: {REGENERATE}"
