"""Expectations: what a run should have done, validated at the boundary by pydantic.

A file holds ``{"expectations": [...]}`` in YAML, TOML or JSON::

    expectations:
      - name: weather
        match: {agent: forecaster}
        expected_tool_calls: [get_weather]
        expected_tool_call_arguments: {get_weather: {city: Paris}}
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .input_errors import validation_problems, yaml_problem

ArgumentMode = Literal["subset", "exact", "bfcl", "ignore"]
FailOn = Literal["error", "refused", "pending"]
Scope = Literal["run", "session"]


class OneOf(BaseModel):
    """A step of ``expected_chain`` that any one of its alternatives satisfies; an
    alternative is a tool name, a group (a list: parallel calls) or another ``one_of``.

    >>> OneOf(one_of=["search_web", ["fetch", "parse"]]).one_of[1]
    ['fetch', 'parse']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    one_of: list["ChainStep"] = Field(min_length=1)


GroupItem = Union[str, OneOf]
ChainStep = Union[str, OneOf, list[GroupItem]]
"""A tool name, a group of calls made in any order (a list, which may hold ``one_of`` items), or ``one_of``."""
OneOf.model_rebuild()


class Match(BaseModel):
    """Selects the runs an expectation applies to; every given field must match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str | None = None
    span_name: str | None = None
    attributes: dict[str, Any] | None = None

    def matches(self, agent: str, span_name: str, attributes: Mapping[str, Any]) -> bool:
        if self.agent is not None and self.agent != agent:
            return False
        if self.span_name is not None and self.span_name != span_name:
            return False
        if self.attributes:
            for key, value in self.attributes.items():
                actual = attributes.get(key)
                if isinstance(actual, tuple):
                    actual = list(actual)
                if actual != value:
                    return False
        return True


class ExpectedOutput(BaseModel):
    """Facts the run's final output (as its span records it) must state.

    Each fact is one piece of ``sidq`` (factual consistency) evidence for the agent's
    reputation; the verdict itself does not look at them. A single string may stand
    for a one-item list.

    >>> ExpectedOutput(contains="25°C", regex=[r"\\bsunny\\b"]).contains
    ['25°C']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    contains: list[str] = Field(default_factory=list)
    regex: list[str] = Field(default_factory=list)
    equals: str | None = None

    @field_validator("contains", "regex", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"regex {pattern!r} does not compile: {exc}") from exc
        return patterns


class Expectation(BaseModel):
    """One named expectation; the defaults reproduce Agno's ReliabilityEval exactly.

    >>> Expectation(name="calc", expected_tool_calls=["multiply"]).order
    'any'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    match: Match | None = None
    # "session": judge every top-level run of one conversation as one chain (SPEC §5.2 Sessions);
    # ``match`` then selects by the session's first run, and no single run is judged by it.
    scope: Scope = "run"
    expected_tool_calls: list[str] | None = None
    allow_additional_tool_calls: bool = False
    expected_tool_call_arguments: dict[str, dict[str, Any] | list[dict[str, Any]]] | None = None
    order: Literal["any", "exact", "in_order"] = "any"
    expected_chain: list[ChainStep] | None = None
    argument_match: ArgumentMode = "subset"
    argument_match_by_tool: dict[str, ArgumentMode] = Field(default_factory=dict)
    expected_tool_calls_by_agent: dict[str, list[str]] | None = None
    allowed_tools: list[str] | None = None
    forbidden_tools: list[str] | None = None
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_errors: int | None = Field(default=None, ge=0)
    fail_on: list[FailOn] = Field(default_factory=list)
    # budgets, measured from the spans (SPEC §5.2); the measured values are in every verdict's usage
    max_model_calls: int | None = Field(default=None, ge=0)
    max_total_tokens: int | None = Field(default=None, ge=0)
    max_duration_ms: float | None = Field(default=None, ge=0)
    max_repeated_calls: int | None = Field(default=None, ge=1)
    # the fraction of runs this expectation judges, chosen by trace id (engine.sampling)
    sample_rate: float = Field(default=1.0, gt=0, le=1)
    expected_output: ExpectedOutput | None = None  # reputation evidence only (SPEC §7)

    @field_validator("expected_chain")
    @classmethod
    def _steps_not_empty(cls, chain: list[ChainStep] | None) -> list[ChainStep] | None:
        for index, step in enumerate(chain or (), start=1):
            if _has_empty_group(step):
                raise ValueError(f"step {index} is or holds an empty group")
        return chain

    @model_validator(mode="after")
    def _order_needs_chain(self) -> "Expectation":
        if self.order != "any" and self.expected_chain is None:
            raise ValueError(
                f"order {self.order!r} needs expected_chain: it orders the steps of expected_chain, "
                "never expected_tool_calls (an unordered set, as in Agno)"
            )
        return self

    def applies_to(self, agent: str, span_name: str, attributes: Mapping[str, Any]) -> bool:
        return self.match is None or self.match.matches(agent, span_name, attributes)

    @cached_property
    def digest(self) -> str:
        """sha256 (hex) of the expectation's canonical JSON: the validated model's JSON dump
        without the fields left at their defaults, keys sorted, no whitespace, UTF-8.

        Spelling a default out, reordering keys or reformatting the file keeps the digest;
        a release that adds a field with a default keeps every digest of today.

        >>> Expectation(name="calc", expected_tool_calls=["multiply"]).digest == Expectation(
        ...     name="calc", order="any", expected_tool_calls=["multiply"]).digest
        True
        """
        canonical = json.dumps(
            self.model_dump(mode="json", exclude_defaults=True),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _has_empty_group(step: ChainStep) -> bool:
    if isinstance(step, OneOf):
        return any(_has_empty_group(alternative) for alternative in step.one_of)
    if isinstance(step, list):
        return not step or any(_has_empty_group(item) for item in step)
    return False


DEFAULT_EXPECTATION = Expectation(name="default", fail_on=["error", "refused"])
"""Applied to runs no expectation selects: errored and refused attempts fail the run."""


class ExpectationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expectations: list[Expectation]


class ExpectationError(ValueError):
    """An expectation file or inline expectation is invalid; the message names where."""


def load_expectations(paths: Sequence[str | Path]) -> list[Expectation]:
    """Read expectation files (YAML, TOML or JSON by extension) in order.

    >>> load_expectations([])
    []
    """
    loaded: list[Expectation] = []
    defined_in: dict[str, Path] = {}
    for path in map(Path, paths):
        for expectation in _load_one(path):
            if expectation.name in defined_in:
                raise ExpectationError(
                    f"{path}: expectation names must be unique; repeated: {expectation.name} "
                    f"(first defined in {defined_in[expectation.name]})"
                )
            defined_in[expectation.name] = path
            loaded.append(expectation)
    return loaded


ExpectationSources = Union[Expectation, str, Path, Sequence[Union[Expectation, str, Path]]]
"""What ``expectations=`` takes: one expectation or file, or a sequence of them."""


def load_all(expectations: ExpectationSources) -> list[Expectation]:
    """Expectation objects as given and files loaded, in order. One file name alone is one
    file: a plain string is a sequence of characters, and reading each as a file helps nobody.

    >>> [e.name for e in load_all(Expectation(name="calc"))]
    ['calc']
    >>> load_all("missing.yaml")
    Traceback (most recent call last):
    ...
    otel_reliability.expectations.ExpectationError: missing.yaml: cannot read expectation file: No such file or directory
    """
    if isinstance(expectations, (Expectation, str, Path)):
        expectations = [expectations]
    loaded: list[Expectation] = []
    files: list[str | Path] = []
    for item in expectations:
        if isinstance(item, Expectation):
            loaded.append(item)
        elif isinstance(item, (str, Path)):
            files.append(item)
        else:
            raise ExpectationError(
                f"expectations: expected an Expectation or a file path, got {type(item).__name__}"
            )
    return loaded + load_expectations(files)


def _load_one(path: Path) -> list[Expectation]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationError(f"{path}: cannot read expectation file: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text)
        else:
            raise ExpectationError(f"{path}: unknown expectation file type {suffix!r} (use .yaml, .yml, .toml or .json)")
    except yaml.YAMLError as exc:
        raise ExpectationError(f"{path}: not valid YAML: {yaml_problem(exc)}") from exc
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ExpectationError(f"{path}: not valid {suffix.lstrip('.').upper()}: {exc}") from exc
    if data is None:
        raise ExpectationError(f"{path}: the file is empty: expected a mapping with an 'expectations' list")
    try:
        return ExpectationFile.model_validate(data).expectations
    except ValidationError as exc:
        raise ExpectationError(f"{path}: {validation_problems(exc)}") from exc


def json_schema() -> dict[str, Any]:
    """The JSON Schema of an expectation file, for editors."""
    return ExpectationFile.model_json_schema()


def select(
    expectations: Sequence[Expectation],
    agent: str,
    span_name: str,
    attributes: Mapping[str, Any],
) -> Expectation | None:
    """The expectation for a run: ``reliability.expect.*`` span attributes, else the first matching file rule."""
    inline = from_span_attributes(expectations, attributes)
    if inline is not None:
        return inline
    for expectation in expectations:
        if expectation.scope == "run" and expectation.applies_to(agent, span_name, attributes):
            return expectation
    return None


def from_span_attributes(expectations: Sequence[Expectation], attributes: Mapping[str, Any]) -> Expectation | None:
    case = attributes.get("reliability.expect.case")
    if isinstance(case, str) and case:
        for expectation in expectations:
            if expectation.name == case:
                # a session rule judges the run's whole conversation, never the run alone
                return expectation if expectation.scope == "run" else None
        raise ExpectationError(f"run span names expectation case {case!r}, which no loaded file defines")
    tool_calls = attributes.get("reliability.expect.tool_calls")
    if tool_calls is None:
        return None
    if isinstance(tool_calls, str):
        tool_calls = [tool_calls]
    # A string array, as the attribute is documented; anything else (a number, bytes, a
    # mixed array) is not guessed at: the run is not judged rather than judged against
    # tool names nobody wrote.
    if not isinstance(tool_calls, (list, tuple)) or not all(isinstance(t, str) for t in tool_calls):
        raise ExpectationError(f"run span's reliability.expect.tool_calls is a {type(tool_calls).__name__}, not a string array")
    return Expectation(name="span-attributes", expected_tool_calls=list(tool_calls))
