"""What a user reads when a file or a setting is wrong: the validator's and the YAML parser's
findings in the project's own words, one line each.

pydantic says "Input should be a valid dictionary or instance of ExpectationFile" and PyYAML
prints five lines about ``"<unicode string>"``; a user wants the field (or the line), what
was expected and what was found. Every boundary that validates a file, a setting or a
request body words its error here.
"""

from __future__ import annotations

from typing import Any, Callable

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

# What each kind of finding expected, by pydantic's error type.
_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "frozen_set_type": "a list",
    "none_required": "nothing (null)",
    "bytes_type": "text",
}
_BOUNDS = {
    "greater_than": "more than {gt}",
    "greater_than_equal": "at least {ge}",
    "less_than": "less than {lt}",
    "less_than_equal": "at most {le}",
    "multiple_of": "a multiple of {multiple_of}",
}
# Parts of a location that name a type the validator tried, not a field: ``str`` and
# ``list[str]`` of a union, ``function-after[...]`` of a validator.
_TYPE_NAMES = {"str", "int", "float", "bool", "list", "dict", "tuple", "set", "frozenset", "none", "bytes"}
_SHOWN = 60  # characters of a found value quoted back


def validation_problems(exc: ValidationError, top: str = "top level", rename: Callable[[str], str] = str) -> str:
    """Every finding of ``exc`` as ``where: expected …, got …``, joined by ``; ``; ``top`` names
    the document itself, and ``rename`` turns a field's dotted place into what the user set
    (an environment variable's name, say).

    >>> from pydantic import BaseModel
    >>> class Limits(BaseModel):
    ...     max_calls: int
    >>> try:
    ...     Limits.model_validate({"max_calls": "many"})
    ... except ValidationError as exc:
    ...     print(validation_problems(exc))
    max_calls: expected a whole number, got 'many'
    """
    models = _model_names()
    by_place: dict[str, list[ErrorDetails]] = {}
    for error in exc.errors():
        place = "".join(_step(part) for part in error["loc"] if not _names_a_type(part, models)).lstrip(".") or top
        by_place.setdefault(place, []).append(error)
    # A finding inside a value says which form the user meant: the other forms' type mismatches
    # at the value itself ("expected text or a list, got a mapping") are noise beside it.
    meant = {place for place in by_place if any(other.startswith((place + ".", place + "[")) for other in by_place)}
    shown = {place: errors for place, errors in by_place.items() if not (place in meant and _all_types(errors))}
    return "; ".join(f"{rename(place)}: {_finding(errors)}" for place, errors in shown.items())


def _all_types(errors: list[ErrorDetails]) -> bool:
    return all(e["type"] in _EXPECTED for e in errors)


def _finding(errors: list[ErrorDetails]) -> str:
    """What was wrong at one place: several findings there are the arms of a union."""
    expected = [_EXPECTED[e["type"]] for e in errors if e["type"] in _EXPECTED]
    if expected and len(expected) == len(errors):
        return f"expected {' or '.join(dict.fromkeys(expected))}, {_found(errors[0])}"
    return " or ".join(dict.fromkeys(_one(e) for e in errors))


def _one(error: ErrorDetails) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, {_found(error)}"
    if kind == "missing":
        return "required, but missing"
    if kind == "extra_forbidden":
        return "not a field this file takes (a typo?)"
    if kind in _BOUNDS:
        bounds = {key: int(value) if isinstance(value, float) and value.is_integer() else value for key, value in context.items()}
        return f"must be {_BOUNDS[kind].format(**bounds)}, {_found(error)}"
    if kind == "literal_error" or kind == "enum":
        return f"expected {context.get('expected', 'one of the listed values')}, {_found(error)}"
    if kind in ("string_too_short", "too_short") and context.get("min_length") == 1:
        return "must not be empty"
    if kind in ("string_too_short", "too_short"):
        return f"needs at least {context.get('min_length')}, {_found(error)}"
    if kind in ("string_too_long", "too_long"):
        return f"takes at most {context.get('max_length')}, {_found(error)}"
    if kind == "string_pattern_mismatch":
        return f"must match {context.get('pattern')}, {_found(error)}"
    if kind in ("value_error", "assertion_error") and "error" in context:
        return str(context["error"])
    return str(error["msg"]).removeprefix("Value error, ")


def _found(error: ErrorDetails) -> str:
    value = error.get("input")
    if value is None:
        return "got nothing"
    if isinstance(value, dict):
        return "got a mapping"
    if isinstance(value, (list, tuple)):
        return "got a list"
    shown = repr(value)
    return f"got {shown if len(shown) <= _SHOWN else shown[:_SHOWN] + '…'}"


def _step(part: Any) -> str:
    """One step of a place: ``.field`` or ``[index]`` (``expectations[0].tools``)."""
    return f"[{part}]" if isinstance(part, int) else f".{part}"


def _names_a_type(part: Any, models: set[str]) -> bool:
    return isinstance(part, str) and (part in _TYPE_NAMES or part in models or "[" in part)


def _model_names() -> set[str]:
    """Names of the validated models (a union of models puts the arm's class name in the location)."""
    names: set[str] = set()
    pending: list[type[BaseModel]] = [BaseModel]
    while pending:
        for sub in pending.pop().__subclasses__():  # type: type[BaseModel]
            if sub.__name__ not in names:
                names.add(sub.__name__)
                pending.append(sub)
    return names


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML parser's error in one line, at the line and column it names (1-based).

    >>> try:
    ...     yaml.safe_load("a: [1,\\n b")
    ... except yaml.YAMLError as exc:
    ...     print(yaml_problem(exc))
    line 2, column 3: expected ',' or ']', but got '<stream end>' (in a flow sequence from line 1, column 4)
    """
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    problem = f"line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1}: {exc.problem}"
    if exc.context and exc.context_mark is not None:
        context = exc.context.removeprefix("while parsing ").removeprefix("while scanning ")
        problem += f" (in {context} from line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
    return problem
