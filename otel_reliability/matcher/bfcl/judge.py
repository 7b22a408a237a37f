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

from otel_reliability.matcher.bfcl.normalise import Unjudgeable
from otel_reliability.matcher.bfcl.values import arguments_match, judge_value
from otel_reliability.matcher.bfcl.verdicts import (
    IRRELEVANT_CALL,
    Judgement,
    MISSING_OPTIONAL,
    MISSING_REQUIRED,
    MULTIPLE_COUNT,
    OPTIONAL,
    PARALLEL_COUNT,
    PARALLEL_NO_MATCH,
    RELEVANT_NO_CALL,
    SIMPLE_COUNT,
    UNEXPECTED_PARAM,
    UNJUDGEABLE,
    VALID,
    WRONG_FORMAT,
    WRONG_NAME,
)

__all__ = ["Case", "Compat", "Judgement", "VALID", "arguments_match", "has_call", "judge", "language_of"]

Compat = Literal["official", "strict"]
COMPAT_MODES: tuple[Compat, ...] = ("official", "strict")


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
        failure = judge_value(param, value, properties[param], allowed[param], language, strict)
        if failure is not None:
            return failure
    for param, options in allowed.items():
        if param not in params and OPTIONAL not in options:
            return Judgement(False, MISSING_OPTIONAL, ("parameter {!r} left out but not optional", param))
    return VALID
