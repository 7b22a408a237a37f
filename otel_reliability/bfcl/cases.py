"""Judge cases built from real dataset entries: valid answers and mutations of them.

For agreement tests and benchmarks (ours against the official checker), and for
anyone who wants to see how the rules treat near misses. Deterministic for a seed.

A *valid answer* picks, for every expected call, one allowed value per parameter
(``""`` picked = the parameter left out); Java and JavaScript values are written as
source text. A *mutation* then changes one thing: the calls (order, count, shape),
a function name, a parameter (dropped, unknown, renamed) or one value (case,
punctuation, quotes, type, element, key…). Many mutations stay valid — that is
the point: both sides must agree on what is tolerated too.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any, Callable, Iterable

from otel_reliability.bfcl.dataset import Entry

__all__ = ["entry_cases", "valid_answer"]

Calls = list  # [{name: {param: value}}]


def entry_cases(entry: Entry, rng: random.Random, mutations: int = 6) -> list[tuple[str, Any, bool]]:
    """``(variant, candidate, underscore_to_dot)`` triples for one entry: valid answers, then mutations."""
    if entry.possible_answer is None:
        return _relevance_candidates(entry, rng)
    out: list[tuple[str, Any, bool]] = [
        ("first_allowed", valid_answer(entry, rng, pick="first"), False),
        ("random_allowed", valid_answer(entry, rng, pick="random"), False),
    ]
    for _ in range(mutations):
        base = valid_answer(entry, rng, pick=rng.choice(("first", "random")))
        name, mutate = rng.choice(_MUTATIONS)
        flag = False
        mutated = mutate(base, entry, rng)
        if isinstance(mutated, tuple):
            mutated, flag = mutated
        out.append((name, mutated, flag))
    return out


def valid_answer(entry: Entry, rng: random.Random, *, pick: str = "first") -> Calls:
    """One allowed answer to ``entry``; ``pick`` is ``"first"`` (first allowed value) or ``"random"``."""
    calls: Calls = []
    for answer in entry.possible_answer or ():
        name, allowed = next(iter(answer.items()))
        doc = _doc(entry, name)
        properties = doc["parameters"]["properties"]
        params: dict[str, Any] = {}
        for param, options in allowed.items():
            chosen = _choose(options, rng, pick)
            if chosen is _OMIT:
                continue
            prop = properties.get(param, {"type": "any"})
            chosen = _concrete(chosen, prop, rng, pick)
            if entry.language == "java":
                chosen = _java_text(chosen, prop)
            elif entry.language == "javascript":
                chosen = _js_text(chosen, prop)
            params[param] = chosen
        calls.append({name: params})
    if "parallel" in entry.category and pick == "random":
        rng.shuffle(calls)
    return calls


_OMIT = object()


def _choose(options: list, rng: random.Random, pick: str) -> Any:
    if not options:
        return _OMIT
    chosen = options[0] if pick == "first" else rng.choice(options)
    return _OMIT if chosen == "" else chosen


def _concrete(value: Any, prop: dict, rng: random.Random, pick: str) -> Any:
    """Dict answers are BFCL-form (each key → allowed values): pick one per key."""
    declared = prop.get("type")
    items = (prop.get("items") or {}).get("type") if isinstance(prop.get("items"), dict) else None
    if declared in ("dict", "HashMap") and isinstance(value, dict):
        return _pick_dict(value, rng, pick)
    if items == "dict" and isinstance(value, list):
        return [_pick_dict(item, rng, pick) if isinstance(item, dict) else item for item in value]
    return copy.deepcopy(value)


def _pick_dict(form: dict, rng: random.Random, pick: str) -> dict:
    chosen = {}
    for key, options in form.items():
        if isinstance(options, list):
            value = _choose(options, rng, pick)
            if value is not _OMIT:
                chosen[key] = copy.deepcopy(value)
        else:
            chosen[key] = options
    return chosen


def _doc(entry: Entry, name: str) -> dict:
    for doc in entry.function:
        if doc["name"] == name:
            return doc
    return {"name": name, "parameters": {"properties": {}}}


# --- source text -------------------------------------------------------------------------

_JAVA_ELEMENT_TYPES = {"String": "String", "integer": "int", "long": "long", "any": "Object", "char": "char"}


def _java_text(value: Any, prop: dict) -> str:
    declared = prop.get("type")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "long" and isinstance(value, int):
        return f"{value}L"
    if declared == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if isinstance(value, list):
        items = (prop.get("items") or {}).get("type", "any")
        elements = ", ".join(_java_literal(v, items) for v in value)
        if declared == "ArrayList":
            return f"new ArrayList<>(Arrays.asList({elements}))" if value else "new ArrayList<>()"
        return f"new {_JAVA_ELEMENT_TYPES.get(items, 'Object')}[]{{{elements}}}"
    if isinstance(value, dict):
        puts = " ".join(f'put("{k}", {_java_literal(v, "any")});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _java_literal(value: Any, items: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'" if items == "char" else f'"{value}"'
    if items == "long" and isinstance(value, int):
        return f"{value}L"
    return str(value)


def _js_text(value: Any, prop: dict) -> str:
    declared = prop.get("type")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, (list, dict)):
        return _js_literal(value)
    return str(value)


def _js_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ", ".join(_js_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_js_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


# --- mutations -----------------------------------------------------------------------------

Mutation = Callable[[Calls, Entry, random.Random], Any]


def _pick_call(calls: Calls, rng: random.Random) -> tuple[int, str, dict] | None:
    if not calls:
        return None
    index = rng.randrange(len(calls))
    name, params = next(iter(calls[index].items()))
    return index, name, params


def _renamed(transform: Callable[[str], str]) -> Mutation:
    def mutate(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
        picked = _pick_call(calls, rng)
        if picked:
            index, name, params = picked
            calls[index] = {transform(name): params}
        return calls

    return mutate


def _underscored(flag: bool) -> Mutation:
    def mutate(calls: Calls, entry: Entry, rng: random.Random) -> tuple[Calls, bool]:
        return [{name.replace(".", "_"): params for name, params in call.items()} for call in calls], flag

    return mutate


def _keep_dots_with_flag(calls: Calls, entry: Entry, rng: random.Random) -> tuple[Calls, bool]:
    return calls, True


def _drop_param(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    picked = _pick_call(calls, rng)
    if picked and picked[2]:
        del picked[2][rng.choice(sorted(picked[2]))]
    return calls


def _unknown_param(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    picked = _pick_call(calls, rng)
    if picked:
        picked[2]["unexpected_extra"] = rng.choice(["x", 1, True, [1]])
    return calls


def _all_optional_given(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    """Give every documented parameter the call left out a plausible value."""
    picked = _pick_call(calls, rng)
    if picked:
        index, name, params = picked
        for param, prop in _doc(entry, name)["parameters"].get("properties", {}).items():
            if param not in params:
                params[param] = _plausible(prop, entry.language)
    return calls


def _plausible(prop: dict, language: str) -> Any:
    declared = prop.get("type")
    if "default" in prop:
        value = prop["default"]
    else:
        placeholders: dict[Any, Any] = {"integer": 1, "float": 1.5, "boolean": True, "array": [], "tuple": [], "dict": {}}
        value = placeholders.get(declared, "x")
    if language == "java":
        return _java_text(value, prop)
    if language == "javascript":
        return _js_text(value, prop)
    return value


def _reverse_calls(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    return calls[::-1]


def _drop_call(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    if calls:
        del calls[rng.randrange(len(calls))]
    return calls


def _duplicate_call(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    if calls:
        calls.append(copy.deepcopy(rng.choice(calls)))
    return calls


def _duplicate_in_place(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    """Replace one call by a copy of another: same count, one answer served twice (greedy traps)."""
    if len(calls) > 1:
        source, target = rng.sample(range(len(calls)), 2)
        calls[target] = copy.deepcopy(calls[source])
    return calls


def _shape(kind: str) -> Mutation:
    def mutate(calls: Calls, entry: Entry, rng: random.Random) -> Any:
        if kind == "empty":
            return []
        if kind == "text":
            return "I cannot call any function for this."
        if kind == "empty_item_first":
            return [{}] + calls
        if kind == "two_names" and calls:
            name, params = next(iter(calls[0].items()))
            calls[0] = {name: params, name + "_other": {}}
        if kind == "params_string" and calls:
            name, params = next(iter(calls[0].items()))
            calls[0] = {name: json.dumps(params)}
        return calls

    return mutate


def _mutate_value(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    picked = _pick_call(calls, rng)
    if picked and picked[2]:
        params = picked[2]
        param = rng.choice(sorted(params))
        params[param] = _value_variant(params[param], rng)
    return calls


def _mutate_container(calls: Calls, entry: Entry, rng: random.Random) -> Calls:
    """Change a list or dict value (an item of a list of dicts, preferably), where the call has one."""
    picked = _pick_call(calls, rng)
    if picked:
        params = picked[2]
        containers = sorted(p for p, v in params.items() if isinstance(v, (list, dict)))
        if containers:
            param = rng.choice(containers)
            value = params[param]
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and rng.random() < 0.7:
                position = rng.randrange(len(value))
                value[position] = _dict_variant(value[position], rng)
            else:
                params[param] = _value_variant(value, rng)
    return calls


def _value_variant(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.choice([not value, int(value), str(value), str(value).lower(), None])
    if isinstance(value, int):
        return rng.choice([value + 1, float(value), str(value), bool(value), -value, value])
    if isinstance(value, float):
        return rng.choice([int(value) if value.is_integer() else value + 0.5, str(value), value * 2, value])
    if isinstance(value, str):
        return _string_variant(value, rng)
    if isinstance(value, list):
        return _list_variant(value, rng)
    if isinstance(value, dict):
        return _dict_variant(value, rng)
    return rng.choice(["None", 0, value])


def _string_variant(text: str, rng: random.Random) -> Any:
    choices: list[Callable[[str], Any]] = [
        str.upper, str.lower, str.title,
        lambda s: f"'{s}'", lambda s: f'"{s}"', lambda s: s.strip("'\""),
        lambda s: s.replace(" ", ""), lambda s: s.replace(" ", "-"), lambda s: s + ".", lambda s: s + "x",
        lambda s: s[:-1], lambda s: "", lambda s: " - ", lambda s: s + ".0", lambda s: s + "L", lambda s: s + "f",
        lambda s: s.replace(", ", ","), lambda s: s.replace("'", '"'), lambda s: s.replace('"', "'"),
        lambda s: "True" if s == "true" else "False" if s == "false" else s.capitalize(),
        lambda s: _parsed_or(s, s), lambda s: [s], lambda s: s.replace("new int[]", "new Integer[]"),
        lambda s: s.replace("Arrays.asList(", "List.of("), lambda s: s.replace("{{ ", "{{").replace("; }}", ";}}"),
        lambda s: s.replace("[", "new Array(", 1).replace("]", ")", 1) if s.startswith("[") else s,
    ]
    return rng.choice(choices)(text)


def _parsed_or(text: str, fallback: Any) -> Any:
    """The raw value source text stands for (``"42"`` → ``42``): a model that forgot to write source text."""
    for reader in (json.loads, lambda s: json.loads(s.replace("'", '"'))):
        try:
            return reader(text)
        except (ValueError, TypeError):
            continue
    return fallback


def _list_variant(items: list, rng: random.Random) -> Any:
    choices: list[Callable[[list], Any]] = [
        lambda v: v[:-1], lambda v: v + v[:1], lambda v: v[::-1], lambda v: [],
        lambda v: [x.upper() if isinstance(x, str) else x for x in v],
        lambda v: [float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in v],
        lambda v: [int(x) if isinstance(x, float) and x.is_integer() else x for x in v],
        lambda v: [str(x) for x in v], lambda v: [1 if x is True else 0 if x is False else x for x in v],
        lambda v: [_value_variant(x, rng) for x in v[:1]] + v[1:], lambda v: json.dumps(v), lambda v: tuple(v),
        lambda v: [v],
    ]
    return rng.choice(choices)(list(items))


def _dict_variant(mapping: dict, rng: random.Random) -> Any:
    keys = sorted(mapping)
    choices: list[Callable[[dict], Any]] = [
        lambda d: {**d, "unknown_key": "x"},
        lambda d: {k: v for k, v in d.items() if k != keys[0]} if keys else d,
        lambda d: {k: (_value_variant(v, rng) if k == keys[0] else v) for k, v in d.items()} if keys else d,
        lambda d: json.dumps(d), lambda d: [d],
        lambda d: {k: (str(v).upper() if isinstance(v, str) else v) for k, v in d.items()},
    ]
    return rng.choice(choices)(dict(mapping))


_MUTATIONS: list[tuple[str, Mutation]] = [
    ("name_suffix", _renamed(lambda n: n + "_v2")),
    ("name_upper", _renamed(str.upper)),
    ("name_underscored", _underscored(False)),
    ("name_underscored_flagged", _underscored(True)),
    ("name_dotted_flagged", _keep_dots_with_flag),
    ("drop_param", _drop_param),
    ("unknown_param", _unknown_param),
    ("all_optional_given", _all_optional_given),
    ("reverse_calls", _reverse_calls),
    ("drop_call", _drop_call),
    ("duplicate_call", _duplicate_call),
    ("duplicate_in_place", _duplicate_in_place),
    ("empty_output", _shape("empty")),
    ("text_output", _shape("text")),
    ("empty_item_first", _shape("empty_item_first")),
    ("two_names", _shape("two_names")),
    ("params_string", _shape("params_string")),
] + [("value", _mutate_value)] * 12 + [("container_value", _mutate_container)] * 3  # most change one value


def _relevance_candidates(entry: Entry, rng: random.Random) -> list[tuple[str, Any, bool]]:
    doc: dict[str, Any] = rng.choice(entry.function) if entry.function else {"name": "tool", "parameters": {"properties": {}}}
    properties = doc.get("parameters", {}).get("properties", {})
    call = {doc["name"]: {p: _plausible(prop, "python") for p, prop in list(properties.items())[:2]}}
    return [
        ("no_call_empty_list", [], False),
        ("no_call_empty_dict", [{}], False),
        ("no_call_text", "None of the functions can help.", False),
        ("call", [call], False),
        ("call_no_args", [{doc["name"]: {}}], False),
        ("two_calls", [call, copy.deepcopy(call)], False),
        ("empty_dict_then_call", [{}, call], False),
        ("two_names", [{**call, "other": {}}], False),
        ("params_string", [{doc["name"]: "not a dict"}], False),
    ]


def dataset_cases(entries: Iterable[Entry], seed: int = 0, mutations: int = 6) -> list[tuple[str, Any]]:
    """``(variant, Case)`` pairs for every entry: valid answers and ``mutations`` mutations each."""
    rng = random.Random(seed)
    cases = []
    for entry in entries:
        for variant, candidate, flag in entry_cases(entry, rng, mutations):
            cases.append((variant, entry.case(candidate, underscore_to_dot=flag)))
    return cases
