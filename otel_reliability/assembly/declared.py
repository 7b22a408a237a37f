"""Whether a failed call's arguments fit the parameters its tool declares (issue 31, point 6).

A framework that validates a call's arguments before the body runs refuses a call that does
not fit, and many record that refusal exactly as a body that raised: a failed tool span. So a
failed call whose arguments do not fit its tool's declared parameters (a required one missing,
one of another JSON type, one the tool does not take), or of a tool the model was not offered,
may have been refused: ``misfit`` says how it does not fit, and the witnesses open it.

The declarations are kept raw on the records (``SpanRecord.parameters`` on a tool span,
``SpanRecord.tool_definitions`` on a model call or a run span: a JSON list of definitions, or
one definition an item) and read here only for a failed call. A definition is
``{"name", "parameters"}``, ``{"function": {"name", "parameters"}}`` or ``{"name", "inputSchema"}``;
a schema the reader does not follow (``anyOf``, ``$ref``, no ``properties``) fits anything.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..adapters.common import loads

# JSON Schema's types, as the arguments a model sends decode to them (a bool is no number)
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "boolean": (bool,), "array": (list, tuple), "object": (dict,), "null": (type(None),),
    "number": (int, float), "integer": (int, float),
}


def declared_tools(raw: Iterable[Any]) -> dict[str, Mapping[str, Any] | None]:
    """Each tool the raw ``tool_definitions`` declare, with its parameters' schema (None: none given)."""
    tools: dict[str, Mapping[str, Any] | None] = {}
    for value in raw:
        items = loads(value)
        for item in items if isinstance(items, (list, tuple)) else (items,):
            definition = loads(item)
            if not isinstance(definition, dict):
                continue
            function = definition.get("function")
            if isinstance(function, dict):
                definition = function
            name = definition.get("name")
            if isinstance(name, str) and name:
                tools.setdefault(name, schema_of(definition.get("parameters", definition.get("inputSchema"))))
    return tools


def schema_of(raw: Any) -> Mapping[str, Any] | None:
    """A parameters schema the reader can check arguments against (an object with ``properties``), else None."""
    schema = loads(raw)
    if isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict):
        return schema
    return None


def misfit(tool: str, arguments: Mapping[str, Any], parameters: Any, declared: Mapping[str, Mapping[str, Any] | None]) -> str | None:
    """How a call of ``tool`` with ``arguments`` does not fit what is declared: its own span's
    ``parameters`` (raw) else the tools ``declared`` to the model; None when it fits, or when
    nothing is declared.

    >>> schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    >>> misfit("multiply", {"a": "ten"}, schema, {}), misfit("multiply", {"a": 10}, schema, {})
    ('a is a string, declared integer', None)
    >>> misfit("format_disk", {}, None, {"multiply": schema})
    'format_disk is not among the tools declared to the model (multiply)'
    """
    schema = schema_of(parameters)
    if schema is None and declared:
        if tool not in declared:
            return f"{tool} is not among the tools declared to the model ({', '.join(sorted(declared))})"
        schema = declared[tool]
    if schema is None:
        return None
    properties = schema["properties"]
    missing = [name for name in schema.get("required") or () if isinstance(name, str) and name not in arguments]
    if missing:
        return f"missing required {', '.join(missing)}"
    for name, value in arguments.items():
        declared_as = properties.get(name)
        if declared_as is None:
            if schema.get("additionalProperties") is False:
                return f"{name} is not a declared parameter"
            continue
        wanted = declared_as.get("type") if isinstance(declared_as, dict) else None
        if isinstance(wanted, str) and wanted in _TYPES and not _is(value, wanted):
            return f"{name} is {_article(value)}, declared {wanted}"
    return None


def _is(value: Any, wanted: str) -> bool:
    if isinstance(value, bool) and wanted in ("number", "integer"):
        return False
    if wanted == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[wanted])


def _article(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
