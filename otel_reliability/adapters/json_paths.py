"""Dotted paths into decoded JSON (``choices.0.message``, ``message.content.*``): where convention
files put a value inside an attribute's JSON."""

from __future__ import annotations

from typing import Any, Iterator


def at_path(value: Any, path: str | None) -> Iterator[Any]:
    """The values at a dotted ``path`` in ``value``: ``*`` steps into every element of a list,
    a number into that element (``choices.0.message``), a key into a mapping.

    >>> list(at_path({"replies": [{"calls": [1, 2]}, {"calls": [3]}]}, "replies.*.calls.*"))
    [1, 2, 3]
    """
    found = [value]
    for key in path.split(".") if path else ():
        if key == "*":
            found = [element for item in found if isinstance(item, list) for element in item]
        elif key.isdigit():
            found = [item[int(key)] for item in found if isinstance(item, list) and int(key) < len(item)]
        else:
            found = [item[key] for item in found if isinstance(item, dict) and key in item]
    return iter(found)


def first_at(value: Any, path: str | None) -> Any:
    """The first value at ``path`` (``at_path``), None when there is none.

    >>> first_at({"message": {"type": "x"}}, "message.type"), first_at({"calls": [1, 2]}, "calls.1")
    ('x', 2)
    """
    if not path:
        return value
    keys = _KEYS_ONLY.get(path)
    if keys is None:
        keys = _KEYS_ONLY[path] = () if any(key == "*" or key.isdigit() for key in path.split(".")) else tuple(path.split("."))
    if not keys:  # a path into lists
        return next(at_path(value, path), None)
    for key in keys:  # most paths name keys alone: walked without building a list a step
        if not (isinstance(value, dict) and key in value):
            return None
        value = value[key]
    return value


# each path read, as its keys when it names keys alone, else () (paths come from the files in force: few)
_KEYS_ONLY: dict[str, tuple[str, ...]] = {}
