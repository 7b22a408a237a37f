"""How BFCL reads values before comparing them. Pure: no I/O.

- ``normalise_string`` — BFCL compares strings loosely: spaces and the characters
  ``, . / - _ * ^`` are dropped, letters are lower-cased and single quotes become
  double quotes, so ``"April 1, 2024"`` equals ``"april 1 2024"``.
- ``read_java`` / ``read_javascript`` — Java and JavaScript arguments arrive as
  source text (``"new int[]{1, 2}"``, ``"{method: 'GET'}"``); these turn the text
  into the Python value the declared type stands for, with the official checker's
  rules: text that does not look like the type stays a string (and then fails the
  type check), collections are read by the same regular-expression grammar, and
  the official reader's blind spots are kept in ``official`` mode. ``strict`` mode
  fixes two of them (see ``judge``): quoted elements of a Java array lose their
  quotes as they do in an ``ArrayList``, and a Java ``char`` literal ``'a'`` reads
  as ``a``.

The readers follow the official ones closely enough to give the same value for
every input; where the official reader raises, so do these (``Unjudgeable``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Unjudgeable", "normalise_string", "read_java", "read_javascript", "JAVA_TYPES", "JS_TYPES", "PYTHON_TYPES"]

_DROPPED = str.maketrans("", "", " ,./-_*^")


def normalise_string(text: str) -> str:
    """BFCL's loose form of a string.

    >>> normalise_string("New York, NY")
    'newyorkny'
    >>> normalise_string("'x'") == normalise_string('"X"')
    True
    """
    return text.translate(_DROPPED).lower().replace("'", '"')


class Unjudgeable(ValueError):
    """The case cannot be judged: the official checker raises on it (unknown type, missing doc …)."""


PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool,
    "array": list, "tuple": list, "dict": dict, "any": str,
}
"""Declared BFCL Python type → the Python type a value must have."""

JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "long": int, "float": float, "double": float,
    "boolean": bool, "char": str, "String": str, "any": str,
    "Array": list, "ArrayList": list, "Queue": list, "Stack": list, "Set": set, "HashMap": dict, "Hashtable": dict,
}
"""Declared Java type → the Python type its source text is read into."""

JS_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool,
    "dict": dict, "array": list, "any": str,
}
"""Declared JavaScript type → the Python type its source text is read into."""

# `$` (not \Z) on purpose: like the official patterns, a trailing newline is tolerated.
_WHOLE = re.compile(r"-?\d+$")
_JAVA_FLOAT = re.compile(r"(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)[fF]$")
_JAVA_DOUBLE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"(-?\d+)[lL]$")
_JAVA_CHAR = re.compile(r"'(.)'$")
_JAVA_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_JAVA_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_JAVA_ADD = re.compile(r"add\((.+?)\)")
_JAVA_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_JAVA_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_JAVA_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_JAVA_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_JAVA_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_JS_FLOAT = re.compile(r"-?\d+(?:\.\d+)?$")
_JS_BIGINT = re.compile(r"-?\d+n$")
_JS_GRID = re.compile(r"\[\s*\[.*?\]\s*(?:,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(?:,\s*\[.*?\]\s*)*\)")
_JS_ROW = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_BRACKETED = re.compile(r"\[(.*?)\]")
_JS_OBJECT = re.compile(r"\{(.*?)\}")
_JS_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


# --- Java ---------------------------------------------------------------------------


def read_java(text: str, declared: str, items: str | None = None, *, strict: bool = False) -> Any:
    """The value a Java argument's source ``text`` stands for, given its declared type.

    >>> read_java("new int[]{1, 2}", "Array", "integer"), read_java("42L", "long"), read_java("42", "long")
    ([1, 2], 42, '42')
    >>> read_java('new String[]{"a"}', "Array", "String"), read_java('new String[]{"a"}', "Array", "String", strict=True)
    (['"a"'], ['a'])
    """
    if declared in ("byte", "short", "integer"):
        return int(text) if _WHOLE.match(text) else text
    if declared == "long":
        found = _JAVA_LONG.match(text)
        return int(found.group(1)) if found else text
    if declared == "float":
        found = _JAVA_FLOAT.match(text)
        return float(found.group(1)) if found else text
    if declared == "double":
        return float(text) if _JAVA_DOUBLE.match(text) else text
    if declared == "boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "char":
        found = _JAVA_CHAR.match(text) if strict else None  # the official pattern can never match
        return found.group(1) if found else text
    if declared in ("String", "any"):
        return text
    if declared == "ArrayList":
        return _java_array_list(text, items, strict)
    if declared == "Array":
        return _java_array(text, items, strict)
    if declared == "HashMap":
        return _java_hash_map(text)
    if declared in JAVA_TYPES:
        raise Unjudgeable(f"the official checker cannot read Java {declared} values")
    raise Unjudgeable(f"unknown Java type {declared!r}")


def _java_element(text: str, items: str | None, unquote: bool) -> Any:
    if unquote and items in ("char", "String"):
        return text[1:-1]
    if items:
        return read_java(text, items)
    return _java_literal(text)


def _java_array_list(text: str, items: str | None, strict: bool) -> Any:
    found = _JAVA_AS_LIST.search(text)
    if found:
        return [_java_element(part.strip(), items, True) for part in found.group(1).split(",")]
    found = _JAVA_ADDS.search(text)
    if found:
        return [_java_element(part.strip(), items, True) for part in _JAVA_ADD.findall(found.group(1))]
    if _JAVA_EMPTY_LIST.search(text):
        return []
    return text


def _java_array(text: str, items: str | None, strict: bool) -> Any:
    found = _JAVA_ARRAY.search(text)
    if not found:
        return text
    parts = [part.strip() for part in found.group(1).split(",")]
    return [_java_element(part, items, strict) for part in parts if part]


def _java_hash_map(text: str) -> Any:
    found = _JAVA_MAP.search(text)
    if found:
        body = found.group(1)
        if not body.strip():
            return {}
        return {key: _java_literal(value.strip()) for key, value in _JAVA_PUT.findall(body)}
    if _JAVA_EMPTY_MAP.search(text):
        return {}
    return text


def _java_literal(text: str) -> Any:
    """A Java literal read without a declared type."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    found = _JAVA_FLOAT.match(text)
    if found:
        return float(found.group(1))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


# --- JavaScript -----------------------------------------------------------------------


def read_javascript(text: str, declared: str, items: str | None = None) -> Any:
    """The value a JavaScript argument's source ``text`` stands for, given its declared type.

    >>> read_javascript("'GET'", "String"), read_javascript("[1, 2]", "array", "integer"), read_javascript("{a: 'x'}", "dict")
    ('GET', [1, 2], {'a': 'x'})
    """
    if declared == "String":
        if len(text) and text[0] == text[-1] and text[0] in "'\"":
            return text[1:-1]
        return text
    if declared == "integer":
        return int(text) if _WHOLE.match(text) else text
    if declared == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if declared == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if declared == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "any":
        return text
    if declared == "array":
        return _js_array(text, items)
    if declared == "dict":
        return _js_object(text)
    raise Unjudgeable(f"unknown JavaScript type {declared!r}")


def _js_array(text: str, items: str | None) -> Any:
    code = text.strip()
    try:
        grid = _JS_GRID.match(code)
        if grid:
            rows = []
            for index, row in enumerate(_BRACKETED.findall(grid.group(0))):
                row = row.strip()
                if index == 0 and row.startswith("["):
                    row = row[1:]
                rows.append([_js_literal(part.strip()) for part in row.split(",")])
            return rows
        found = _JS_ROW.match(code)
        if not found:
            return code
        body = found.group(1) if found.group(1) is not None else found.group(2)
        body = body.strip()
        parts = body.split(",") if body else []
        if items:
            return [read_javascript(part.strip(), items) for part in parts]
        return [_js_literal(part.strip()) for part in parts]
    except (ValueError, Unjudgeable):
        return code


def _js_object(text: str) -> Any:
    code = text.strip()
    if code == "{}":
        return {}
    found = _JS_OBJECT.match(code)
    if not found:
        return code
    result: dict[str, Any] = {}
    try:
        for key, value in _JS_PAIR.findall(found.group(1)):
            key = key.strip().strip("'\"")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                result[key] = _js_array(value, None)
            elif value.startswith("{") and value.endswith("}"):
                result[key] = _js_object(value)
            else:
                result[key] = _js_literal(value.strip("'\""))
    except ValueError:
        return code
    return result


def _js_literal(text: str) -> Any:
    """A JavaScript literal read without a declared type."""
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    if len(text) and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return _number_or_text(text)
