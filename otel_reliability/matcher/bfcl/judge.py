"""Judge decoded function calls the way BFCL's AST checker does. Pure: no I/O.

One ``Case`` in (the function docs, BFCL's possible answer, a decoded candidate),
one ``Judgement`` out: ``valid`` and, when not, the official ``error_type`` string.

**The rules** (``bfcl-eval`` 2026.3.23, read from its checker and rewritten here):

- *Shape.* The candidate must be a list of ``{function_name: {param: value}}``
  items, each with exactly one key and a dict of parameters; anything else is
  ``ast_decoder:decoder_wrong_output_format``.
- *Count.* ``simple`` categories need exactly one call, ``multiple`` as many calls
  as answers (one), ``parallel`` (and ``parallel_multiple``) as many calls as
  answers, in any order. Irrelevance categories pass when no call was made (an
  empty list, ``[{}]``, text, or anything not shaped like calls); ``live_relevance``
  passes when one was.
- *Name.* The call must use the documented name exactly — with dots written as
  underscores when ``underscore_to_dot`` is set (models whose API forbids dots).
- *Parameters.* Every required parameter present; every given parameter both
  documented and listed in the answer; every answer parameter the call leaves out
  must list ``""`` (= may be omitted).
- *Types.* A value must have the declared type; ``bool`` is not ``int``, and an
  ``int`` is accepted where a Python ``float`` is declared. Arrays check their
  items' type one level deep. A value whose type is not the declared one but is
  the answer's own type counts as a *variable* (the answer names a variable) and
  is compared as it is. Java and JavaScript values arrive as source text and are
  read into values first (``normalise.read_java`` / ``read_javascript``).
- *Values.* Each value must equal one of the allowed values: strings after
  ``normalise_string``; lists element-wise with their top-level strings
  normalised; dicts key by key, each key's value one of the answer's allowed
  values (``""`` = key may be missing); lists of dicts item by item; anything else
  by Python ``==``.
- *Parallel.* The official checker takes each answer in turn and pairs it with
  the first unused call that matches it (greedy first fit).

**``compat``.** ``official`` (the default) reproduces the official verdict and
``error_type`` exactly, quirks included. ``strict`` fixes the quirks; each
difference:

1. *Parallel calls get a true assignment.* Greedy first fit can use up the one
   call a later answer needed when an earlier answer accepts two calls; strict
   finds a complete pairing whenever one exists.
2. *``""`` only means "may be omitted".* Officially an empty string (or one of
   only spaces and punctuation) matches the marker and passes, and so does an
   empty list for an array or list-of-dicts parameter; strict needs a real
   allowed value whenever a value is given.
3. *``bool`` is never a number.* Officially ``True == 1`` inside lists, dict
   values and plain membership; strict keeps them apart at every depth.
4. *``int`` is accepted for ``float`` at every depth*, not only at the top level
   (officially ``[1, 2]`` for an array of floats is a ``type_error:nested``).
5. *Strings are normalised at every depth* — inside nested lists and dicts too.
6. *A dict's error is its first reason.* Officially a missing-key pass runs after
   a failed value comparison and overwrites its ``error_type``.
7. *Java text is read fully.* Quoted elements of ``new String[]{"a"}`` lose their
   quotes (officially only ``ArrayList`` elements do, so a correct ``String[]``
   never matches), and ``'a'`` for a ``char`` reads as ``a``.
8. *Irrelevance: a malformed call is still a call.* Officially any output not
   shaped exactly like calls counts as "no call" (``[{}, {"f": {…}}]``, an item
   with two names, parameters that are not a dict); strict counts every item
   that names a function.

Where the official checker raises instead of judging (an undocumented expected
function, an unknown declared type, a Java ``Set``…), both modes answer
``valid=False`` with ``error_type`` ``judge_error:unjudgeable``.

``arguments_match`` is the strict value rules without function docs (declared
types are taken from the allowed values); the matcher's ``argument_match: bfcl``
mode uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from otel_reliability.matcher.bfcl.normalise import (
    JAVA_TYPES,
    JS_TYPES,
    PYTHON_TYPES,
    Unjudgeable,
    normalise_string,
    read_java,
    read_javascript,
)

__all__ = ["Case", "Compat", "Judgement", "VALID", "arguments_match", "has_call", "judge", "language_of"]

Compat = Literal["official", "strict"]
COMPAT_MODES: tuple[Compat, ...] = ("official", "strict")

# error_type strings: the official checker's own, so results line up with its output.
WRONG_FORMAT = "ast_decoder:decoder_wrong_output_format"
DECODER_FAILED = "ast_decoder:decoder_failed"
IRRELEVANT_CALL = "irrelevance_error:decoder_success"
RELEVANT_NO_CALL = "relevance_error:decoder_failed"
SIMPLE_COUNT = "simple_function_checker:wrong_count"
MULTIPLE_COUNT = "multiple_function_checker:wrong_count"
PARALLEL_COUNT = "parallel_function_checker_no_order:wrong_count"
PARALLEL_NO_MATCH = "parallel_function_checker_no_order:cannot_find_match"
WRONG_NAME = "simple_function_checker:wrong_func_name"
MISSING_REQUIRED = "simple_function_checker:missing_required"
UNEXPECTED_PARAM = "simple_function_checker:unexpected_param"
MISSING_OPTIONAL = "simple_function_checker:missing_optional"
TYPE_SIMPLE = "type_error:simple"
TYPE_NESTED = "type_error:nested"
TYPE_JAVA = "type_error:java"
TYPE_JS = "type_error:js"
STRING_VALUE = "value_error:string"
LIST_VALUE = "value_error:list/tuple"
DICT_KEY = "value_error:dict_key"
DICT_VALUE = "value_error:dict_value"
DICT_UNCLEAR = "dict_checker:unclear"
LIST_DICT_COUNT = "value_error:list_dict_count"
LIST_DICT_UNCLEAR = "list_dict_checker:unclear"
OTHER_VALUE = "value_error:others"
UNJUDGEABLE = "judge_error:unjudgeable"

_ARRAY_TYPES = frozenset(("Array", "ArrayList", "array", "tuple"))
_OPTIONAL = ""


@dataclass(slots=True)
class Judgement:
    """The verdict on one case: ``error_type`` is ``None`` exactly when ``valid``.

    ``detail`` says why in words: a string, or ``(template, *arguments)`` that
    ``error`` formats only when asked — parallel matching discards most failures.
    Not frozen, because frozen dataclasses are slow to build; treat it as
    read-only (``VALID`` is shared).
    """

    valid: bool
    error_type: str | None = None
    detail: str | tuple | None = None

    @property
    def error(self) -> str | None:
        """The reason in words, ``None`` when valid."""
        detail = self.detail
        if detail is None or isinstance(detail, str):
            return detail
        return detail[0].format(*detail[1:])

    def to_json(self, case_id: Any) -> dict[str, Any]:
        """The ``bfcl judge`` output line (SPEC §10)."""
        return {"id": case_id, "valid": self.valid, "error_type": self.error_type}


VALID = Judgement(True)


@dataclass(slots=True, frozen=True)
class Case:
    """One ``bfcl judge`` input line, in the shapes ``bfcl-eval`` uses.

    ``function`` is the entry's function docs; ``possible_answer`` one
    ``{name: {param: [allowed, …]}}`` per expected call, ``None`` for irrelevance;
    ``candidate`` the decoded model output.
    """

    id: Any
    category: str
    language: str
    function: Sequence[Mapping[str, Any]]
    possible_answer: Sequence[Mapping[str, Any]] | None
    candidate: Any
    underscore_to_dot: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Case:
        """Read one input line's object; a missing field raises ``ValueError`` naming it.

        >>> Case.from_json({"id": 1, "category": "irrelevance", "function": [], "candidate": []}).language
        'python'
        """
        for key in ("id", "category", "function", "candidate"):
            if key not in data:
                raise ValueError(f"missing field {key!r}")
        category = data["category"]
        if not isinstance(category, str):
            raise ValueError("field 'category' must be a string")
        function = data["function"]
        if isinstance(function, Mapping):
            function = [function]
        if not isinstance(function, list):
            raise ValueError("field 'function' must be a list of function docs")
        answer = data.get("possible_answer")
        if answer is not None and not isinstance(answer, list):
            raise ValueError("field 'possible_answer' must be a list or null")
        if answer is None and not _is_relevance(category):
            raise ValueError(f"category {category!r} needs a possible_answer")
        language = data.get("language") or language_of(category)
        if language not in ("python", "java", "javascript"):
            raise ValueError(f"unknown language {language!r}")
        return cls(data["id"], category, language, function, answer, data["candidate"], bool(data.get("underscore_to_dot")))


def language_of(category: str) -> str:
    """The language BFCL judges a category in.

    >>> language_of("simple_java"), language_of("simple_javascript"), language_of("live_simple")
    ('java', 'javascript', 'python')
    """
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"


def _is_relevance(category: str) -> bool:
    return "relevance" in category


# --- entry points -------------------------------------------------------------------


def judge(case: Case, compat: Compat = "official") -> Judgement:
    """Judge one case.

    >>> doc = {"name": "math.factorial", "parameters": {"type": "dict",
    ...        "properties": {"number": {"type": "integer"}}, "required": ["number"]}}
    >>> answer = [{"math.factorial": {"number": [5]}}]
    >>> judge(Case(0, "simple_python", "python", [doc], answer, [{"math.factorial": {"number": 5}}]))
    Judgement(valid=True, error_type=None, detail=None)
    >>> judge(Case(0, "simple_python", "python", [doc], answer, [{"math.factorial": {"number": True}}])).error_type
    'type_error:simple'
    """
    strict = compat == "strict"
    category = case.category
    candidate = case.candidate
    if "relevance" in category:
        called = has_call(candidate, strict=strict)
        if "irrelevance" in category:
            return Judgement(False, IRRELEVANT_CALL, "a function was called where none fits") if called else VALID
        return VALID if called else Judgement(False, RELEVANT_NO_CALL, "no function was called")
    if not _shaped_like_calls(candidate):
        return Judgement(False, WRONG_FORMAT, "the output is not a list of {function: {parameter: value}} calls")
    answers = case.possible_answer or ()
    try:
        if "parallel" in category:
            return _judge_parallel(case, candidate, answers, strict)
        if "multiple" in category:
            if len(candidate) != len(answers):
                return _count_error(MULTIPLE_COUNT, len(answers), len(candidate))
            return _judge_one(case, _doc_for(case, _name_of(answers[0])), candidate[0], answers[0], strict)
        if len(candidate) != 1:
            return _count_error(SIMPLE_COUNT, 1, len(candidate))
        return _judge_one(case, case.function[0], candidate[0], answers[0], strict)
    except Unjudgeable as exc:
        return Judgement(False, UNJUDGEABLE, str(exc))
    except (LookupError, TypeError, ValueError, AttributeError) as exc:
        return Judgement(False, UNJUDGEABLE, f"malformed case: {type(exc).__name__}: {exc}")


def has_call(candidate: Any, *, strict: bool = False) -> bool:
    """Whether a decoded output calls a function, for the (ir)relevance categories.

    >>> has_call([]), has_call([{}]), has_call([{"f": {}}]), has_call("I cannot help")
    (False, False, True, False)
    >>> has_call([{}, {"f": {"x": 1}}]), has_call([{}, {"f": {"x": 1}}], strict=True)
    (False, True)
    """
    if strict:
        return type(candidate) is list and any(type(item) is dict and item for item in candidate)
    if not _shaped_like_calls(candidate) or not candidate:
        return False
    return not (len(candidate) == 1 and not candidate[0])


def _shaped_like_calls(candidate: Any) -> bool:
    if type(candidate) is not list:
        return False
    for item in candidate:
        if type(item) is not dict or len(item) != 1:
            return False
        for params in item.values():
            if type(params) is not dict:
                return False
    return True


def _count_error(error_type: str, expected: int, got: int) -> Judgement:
    return Judgement(False, error_type, ("expected {} call(s), got {}", expected, got))


class _Names:
    """A call's function names, formatted only if a message is wanted."""

    __slots__ = ("call",)

    def __init__(self, call: Mapping[str, Any]) -> None:
        self.call = call

    def __format__(self, spec: str) -> str:
        return ", ".join(map(repr, self.call)) or "nothing"


def _name_of(answer: Mapping[str, Any]) -> str:
    return next(iter(answer))


def _doc_for(case: Case, name: str) -> Mapping[str, Any]:
    docs = case.function
    if type(docs) is dict:
        return docs
    for doc in docs:
        if doc["name"] == name:
            return doc
    raise Unjudgeable(f"no function doc for the expected function {name!r}")


# --- parallel ---------------------------------------------------------------------------


def _judge_parallel(case: Case, calls: list, answers: Sequence[Mapping[str, Any]], strict: bool) -> Judgement:
    if len(calls) != len(answers):
        return _count_error(PARALLEL_COUNT, len(answers), len(calls))
    if strict:
        return _assign(case, calls, answers, [_doc_for(case, _name_of(answer)) for answer in answers])
    used: set[int] = set()
    for position, answer in enumerate(answers):
        doc = _doc_for(case, _name_of(answer))  # looked up in turn: an earlier mismatch ends the check first
        failure: Judgement | None = None
        for index, call in enumerate(calls):
            if index in used:
                continue
            failure = _judge_one(case, doc, call, answer, False)
            if failure is VALID:
                used.add(index)
                break
        if failure is not VALID:
            return Judgement(False, PARALLEL_NO_MATCH, ("no unused call matches expected call {} ({})", position, _name_of(answer)))
    return VALID


def _assign(case: Case, calls: list, answers: Sequence[Mapping[str, Any]], docs: list) -> Judgement:
    """A complete pairing of answers with calls, if one exists (augmenting paths)."""
    fits = [
        [index for index, call in enumerate(calls) if _judge_one(case, doc, call, answer, True) is VALID]
        for doc, answer in zip(docs, answers, strict=True)
    ]
    owner: dict[int, int] = {}  # call index -> answer position

    def place(position: int, seen: set[int]) -> bool:
        for index in fits[position]:
            if index in seen:
                continue
            seen.add(index)
            if index not in owner or place(owner[index], seen):
                owner[index] = position
                return True
        return False

    for position in range(len(answers)):
        if not place(position, set()):
            return Judgement(False, PARALLEL_NO_MATCH, ("no call can be paired with expected call {} ({})", position, _name_of(answers[position])))
    return VALID


# --- one call ---------------------------------------------------------------------------


def _judge_one(case: Case, doc: Mapping[str, Any], call: Mapping[str, Any], answer: Mapping[str, Any], strict: bool) -> Judgement:
    allowed = next(iter(answer.values()))  # {function name: {parameter: allowed values}}: its one value
    name = doc["name"]
    if case.underscore_to_dot and "." in name:
        name = name.replace(".", "_")
    if name not in call:
        return Judgement(False, WRONG_NAME, ("expected a call to {!r}, got a call to {}", name, _Names(call)))
    params = call[name]
    schema = doc["parameters"]
    properties = schema["properties"]
    for required in schema.get("required", ()):
        if required not in params:
            return Judgement(False, MISSING_REQUIRED, ("missing required parameter {!r}", required))
    language = case.language
    for param, value in params.items():
        if param not in properties or param not in allowed:
            return Judgement(False, UNEXPECTED_PARAM, ("unexpected parameter {!r}", param))
        failure = _judge_value(param, value, properties[param], allowed[param], language, strict)
        if failure is not None:
            return failure
    for param, options in allowed.items():
        if param not in params and _OPTIONAL not in options:
            return Judgement(False, MISSING_OPTIONAL, ("parameter {!r} left out but not optional", param))
    return VALID


def _judge_value(param: str, value: Any, prop: Mapping[str, Any], options: list, language: str, strict: bool) -> Judgement | None:
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
        if option != _OPTIONAL:
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
        allowed = any(option != _OPTIONAL and _same(value, option) for option in options) if type(value) is not str else value in options
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
        if option != _OPTIONAL:
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
            if strict and option == _OPTIONAL:
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
        if option == _OPTIONAL:
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
                fits = any(choice != _OPTIONAL and _same(item, choice) for choice in choices)
            else:
                loose = _loose(item)
                fits = any(_loose(choice) == loose for choice in choices)
            if not fits:
                error = DICT_VALUE
                break
        if error is None or not strict:
            for key, choices in option.items():
                if key not in value and _OPTIONAL not in choices:
                    error = DICT_KEY
                    break
        if error is None:
            return None
    return error


def _list_of_dicts_error(value: list, options: Sequence[Any], strict: bool) -> str | None:
    error: str | None = LIST_DICT_UNCLEAR
    for option in options:
        if option == _OPTIONAL:
            if strict:
                continue
            option = []
        if type(option) is not list or len(option) != len(value):
            error = LIST_DICT_COUNT
            continue
        for item, allowed in zip(value, option, strict=True):
            if type(item) is dict or allowed == _OPTIONAL:
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
        if not any(option != _OPTIONAL and _same(value, option) for option in options):
            return False
    for param, options in allowed.items():
        if param not in arguments and (options != _OPTIONAL if type(options) is not list else _OPTIONAL not in options):
            return False
    return True
