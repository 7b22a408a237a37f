"""BFCL's value rules: a parameter's value against its declared type and the answer's allowed
values (the *Types* and *Values* rules of ``judge``), and ``arguments_match``, the strict
rules without function docs. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from otel_reliability.matcher.bfcl.normalise import (
    JAVA_TYPES,
    JS_TYPES,
    PYTHON_TYPES,
    Unjudgeable,
    normalise_string,
    read_java,
    read_javascript,
)
from otel_reliability.matcher.bfcl.verdicts import (
    DICT_KEY,
    DICT_UNCLEAR,
    DICT_VALUE,
    Judgement,
    LIST_DICT_COUNT,
    LIST_DICT_UNCLEAR,
    LIST_VALUE,
    OPTIONAL,
    OTHER_VALUE,
    STRING_VALUE,
    TYPE_JAVA,
    TYPE_JS,
    TYPE_NESTED,
    TYPE_SIMPLE,
)

__all__ = ["arguments_match", "judge_value"]

_ARRAY_TYPES = frozenset(("Array", "ArrayList", "array", "tuple"))


def judge_value(param: str, value: Any, prop: Mapping[str, Any], options: list, language: str, strict: bool) -> Judgement | None:
    declared = prop["type"]
    item_kind = None
    if language == "python":
        kind = PYTHON_TYPES.get(declared)
        if kind is None:
            raise Unjudgeable(f"unknown Python type {declared!r} for parameter {param!r}")
        if declared == "array" or declared == "tuple":
            item_kind = _kind(PYTHON_TYPES, prop["items"]["type"], param)
            if declared == "tuple" and type(value) is tuple:
                value = list(value)
        elif declared == "float" and type(value) is int:
            value = float(value)
    else:
        table = JAVA_TYPES if language == "java" else JS_TYPES
        kind = _kind(table, declared, param)
        if type(value) is not str:
            return Judgement(
                False, TYPE_JAVA if language == "java" else TYPE_JS,
                ("parameter {!r} must be given as {} source text, got {}", param, language, type(value).__name__),
            )
        items = None
        if declared in _ARRAY_TYPES:
            items = prop["items"]["type"]
            item_kind = _kind(table, items, param)
        if language == "java":
            value = read_java(value, declared, items, strict=strict)
        else:
            value = read_javascript(value, declared, items)

    # Type check; a value of the answer's own type (not the declared one) is a variable name.
    answer_kind = None
    for option in options:
        if option != OPTIONAL:
            answer_kind = type(option)
            break
    variable = answer_kind is not None and answer_kind is not kind
    value_kind = type(value)
    nested_failed = False
    if value_kind is kind:
        if item_kind is not None and not _items_fit(value, options, item_kind, strict):
            nested_failed = True
    elif answer_kind is not None and value_kind is answer_kind:
        variable = True
    else:
        return Judgement(False, TYPE_SIMPLE, ("parameter {!r} must be {}, got {}: {!r}", param, declared, value_kind.__name__, value))
    if nested_failed:
        if answer_kind is not None and value_kind is answer_kind:
            return Judgement(False, TYPE_NESTED, ("items of parameter {!r} must be {}: {!r}", param, prop["items"]["type"], value))
        return Judgement(False, TYPE_SIMPLE, ("parameter {!r} must be {}, got {!r}", param, declared, value))

    if not variable:
        if kind is dict:
            error = _dict_error(value, options, strict)
            return None if error is None else Judgement(False, error, ("parameter {!r}: {!r} is not an allowed value", param, value))
        if kind is list and item_kind is dict:
            error = _list_of_dicts_error(value, options, strict)
            return None if error is None else Judgement(False, error, ("parameter {!r}: {!r} is not an allowed value", param, value))
        if kind is str:
            if _string_allowed(value, options, strict):
                return None
            return Judgement(False, STRING_VALUE, ("parameter {!r}: {!r} is not an allowed value (compared case-insensitively)", param, value))
        if kind is list:
            if _list_allowed(value, options, strict):
                return None
            return Judgement(False, LIST_VALUE, ("parameter {!r}: {!r} is not an allowed value", param, value))
    if strict:
        allowed = any(option != OPTIONAL and _same(value, option) for option in options) if type(value) is not str else value in options
    else:
        allowed = value in options
    if allowed:
        return None
    return Judgement(False, OTHER_VALUE, ("parameter {!r}: {!r} is not an allowed value", param, value))


def _kind(table: Mapping[str, type], declared: str, param: str) -> type:
    kind = table.get(declared)
    if kind is None:
        raise Unjudgeable(f"unknown type {declared!r} for parameter {param!r}")
    return kind


def _answer_kind(options: Sequence[Any]) -> type | None:
    for option in options:
        if option != OPTIONAL:
            return type(option)
    return None


def _items_fit(value: list, options: Sequence[Any], item_kind: type, strict: bool) -> bool:
    """The one-level item type check: some option lets every item through."""
    for option in options:
        if type(option) is not list:
            return True  # the official check only looks inside list options
        option_kind = _answer_kind(option)
        for item in value:
            item_type = type(item)
            if item_type is item_kind or (option_kind is not None and item_type is option_kind):
                continue
            if strict and item_kind is float and item_type is int:
                continue
            break
        else:
            return True
    return False


# --- value comparisons --------------------------------------------------------------------


def _loose(value: Any) -> Any:
    return normalise_string(value) if type(value) is str else value


def _string_allowed(value: str, options: Sequence[Any], strict: bool) -> bool:
    if value in options and (value or not strict):  # equal as written: equal once normalised
        return True
    loose = normalise_string(value)
    for option in options:
        if type(option) is str and normalise_string(option) == loose:
            if strict and option == OPTIONAL:
                continue
            return True
    return False


def _list_allowed(value: list, options: Sequence[Any], strict: bool) -> bool:
    if strict:
        return any(type(option) is list and _same(value, option) for option in options)
    loose = [_loose(item) for item in value]
    for option in options:
        if type(option) is str or type(option) is list or type(option) is tuple:
            if [_loose(item) for item in option] == loose:
                return True
    return False


def _dict_error(value: dict, options: Sequence[Any], strict: bool) -> str | None:
    """``None`` when ``value`` fits one allowed dict; else the official error type."""
    error: str | None = DICT_UNCLEAR
    for option in options:
        if option == OPTIONAL:
            continue
        if type(option) is not dict:
            error = DICT_KEY
            continue
        error = None
        for key, item in value.items():
            if key not in option:
                error = DICT_KEY
                break
            choices = option[key]
            if strict:
                fits = any(choice != OPTIONAL and _same(item, choice) for choice in choices)
            else:
                loose = _loose(item)
                fits = any(_loose(choice) == loose for choice in choices)
            if not fits:
                error = DICT_VALUE
                break
        if error is None or not strict:
            for key, choices in option.items():
                if key not in value and OPTIONAL not in choices:
                    error = DICT_KEY
                    break
        if error is None:
            return None
    return error


def _list_of_dicts_error(value: list, options: Sequence[Any], strict: bool) -> str | None:
    error: str | None = LIST_DICT_UNCLEAR
    for option in options:
        if option == OPTIONAL:
            if strict:
                continue
            option = []
        if type(option) is not list or len(option) != len(value):
            error = LIST_DICT_COUNT
            continue
        for item, allowed in zip(value, option, strict=True):
            if type(item) is dict or allowed == OPTIONAL:
                error = _dict_error(item, [allowed], strict)
            elif strict:
                error = DICT_VALUE
            else:
                raise Unjudgeable("the official checker fails on a list item that is not a dict")
            if error is not None:
                break
        else:
            return None
    return error


def _same(value: Any, allowed: Any) -> bool:
    """Strict equality: strings loosely, ``bool`` apart from numbers, containers recursively."""
    value_type = type(value)
    allowed_type = type(allowed)
    if value_type is str:
        return allowed_type is str and normalise_string(value) == normalise_string(allowed)
    if value_type is bool or allowed_type is bool:
        return value_type is allowed_type and value == allowed
    if value_type is list or value_type is tuple:
        return (
            (allowed_type is list or allowed_type is tuple)
            and len(value) == len(allowed)
            and all(_same(a, b) for a, b in zip(value, allowed, strict=True))
        )
    if value_type is dict:
        if allowed_type is not dict:
            return False
        if value.keys() == allowed.keys() and all(_same(value[k], allowed[k]) for k in value):
            return True
        return _dict_error(value, [allowed], True) is None and all(type(v) is list for v in allowed.values())
    return value == allowed


def arguments_match(arguments: Mapping[str, Any], allowed: Mapping[str, Any]) -> bool:
    """Whether a call's ``arguments`` fit BFCL-style ``allowed`` values, by the strict rules.

    ``allowed`` maps each parameter to a list of allowed values (a single value
    stands for a one-item list); ``""`` in a list means the parameter may be left
    out. Without function docs, the allowed values' types stand in for declared
    types: an ``int`` fits a ``float``, ``bool`` fits only ``bool``, strings
    compare after ``normalise_string``, and a dict value may be written in BFCL's
    form (each key → list of allowed values).

    >>> arguments_match({"city": "new york", "days": 3}, {"city": ["New York, NY", "New York"], "days": [3.0], "unit": ["", "C"]})
    True
    >>> arguments_match({"city": "Paris", "verbose": 1}, {"city": ["Paris"], "verbose": [True]})
    False
    """
    for param, value in arguments.items():
        if param not in allowed:
            return False
        options = allowed[param]
        if type(options) is not list:
            options = [options]
        if not any(option != OPTIONAL and _same(value, option) for option in options):
            return False
    for param, options in allowed.items():
        if param not in arguments and (options != OPTIONAL if type(options) is not list else OPTIONAL not in options):
            return False
    return True
