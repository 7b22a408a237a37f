"""Eval sets: one file of cases, each an id, the input the agent is given, the trace that
input produced, and the expectation its runs must meet.

A YAML (or JSON) file::

    cases:
      - id: multiply
        input: What is 10 times 5?
        trace: traces/single_tool.json        # relative to this file; a list for spans and logs
        expectation:                          # an expectation; its name is the case's id
          expected_tool_calls: [multiply]
          expected_tool_call_arguments: {multiply: {a: 10, b: 5}}

``eval --cases FILE [PATH…]`` judges each case's runs: those in its ``trace`` files, in the
trace ``trace_id`` names (among the PATHs), and those whose run span says
``reliability.expect.case: <id>``. The pytest plugin makes one test per case
(``reliability_case``). A case none of whose traces can be found is reported missing, never
skipped.

>>> EvalCase(id="calc", expectation={"expected_tool_calls": ["multiply"]}).expectation.name
'calc'
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from otel_reliability.expectations import Expectation, ExpectationError
from otel_reliability.input_errors import validation_problems, yaml_problem

CASE_ATTRIBUTE = "reliability.expect.case"  # a run span naming the case (or expectation) it is a run of


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    input: str | None = None
    trace: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    expectation: Expectation

    @model_validator(mode="before")
    @classmethod
    def _named_by_id(cls, data: Any) -> Any:
        """The expectation's name is the case's id (a name written in the file must equal it)."""
        if isinstance(data, dict) and isinstance(data.get("expectation"), dict) and "name" not in data["expectation"]:
            # without an id, the id's own error is the one to read: the name stands in meanwhile
            name = data["id"] if isinstance(data.get("id"), str) and data["id"] else "unnamed case"
            data = {**data, "expectation": {"name": name, **data["expectation"]}}
        return data

    @field_validator("trace_id")
    @classmethod
    def _hex(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[0-9a-fA-F]{1,32}", value):
            raise ValueError(f"expected a trace id of up to 32 hex digits, got {value!r}")
        return value

    @field_validator("trace", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _name_is_id(self) -> "EvalCase":
        if self.expectation.name != self.id:
            raise ValueError(f"expectation.name {self.expectation.name!r} differs from the case's id {self.id!r}; leave it out")
        return self

    @property
    def trace_number(self) -> int | None:
        return None if self.trace_id is None else int(self.trace_id, 16)


class EvalSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: list[EvalCase] = Field(min_length=1)

    @field_validator("cases")
    @classmethod
    def _unique_ids(cls, cases: list[EvalCase]) -> list[EvalCase]:
        seen: set[str] = set()
        for case in cases:
            if case.id in seen:
                raise ValueError(f"case ids must be unique; repeated: {case.id}")
            seen.add(case.id)
        return cases


def load_eval_set(path: str | Path) -> tuple[list[EvalCase], Path]:
    """The cases of an eval set file, and the folder its ``trace`` paths are relative to;
    ``ExpectationError`` in one line naming the file and the field.

    >>> load_eval_set("no-such-cases.yaml")
    Traceback (most recent call last):
    ...
    otel_reliability.expectations.ExpectationError: no-such-cases.yaml: cannot read eval set: No such file or directory
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationError(f"{path}: cannot read eval set: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ExpectationError(f"{path}: not valid YAML: {yaml_problem(exc)}") from None
    except json.JSONDecodeError as exc:
        raise ExpectationError(f"{path}: not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict) or "cases" not in data:
        raise ExpectationError(f"{path}: expected a mapping with a 'cases' list at the top level")
    try:
        return EvalSet.model_validate(data).cases, path.parent
    except ValidationError as exc:
        raise ExpectationError(f"{path}: {validation_problems(exc)}") from None
