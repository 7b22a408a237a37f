"""Reading a message history from its end (``adapters.history``) gives exactly what decoding it
whole and keeping the messages after the last assistant message gives -- whatever the
messages' strings and nested values hold, however the text is spaced, and however long
the tail is. What is not a JSON array reads as it always did."""

from __future__ import annotations

import json
import random

import pytest

from otel_reliability.adapters.common import loads
from otel_reliability.adapters.history import newest_messages


def reference(text: str):
    """The whole history decoded, then cut after its last assistant message (all of it when none is)."""
    messages = loads(text)
    if not isinstance(messages, list):
        return messages
    cut = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"), default=-1)
    return messages[cut + 1:]


def user(text: str) -> dict:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def asks(call_id: str, arguments) -> dict:
    call = {"type": "tool_call", "id": call_id, "name": "lookup", "arguments": arguments}
    return {"role": "assistant", "parts": [call]}


def answers(call_id: str, response) -> dict:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}


def long_history(turns: int = 40) -> list[dict]:
    """A history well beyond the first tail tried, so that the end is read on its own."""
    messages = [user("start")]
    for k in range(turns):
        messages += [asks(f"c{k}", {"n": k}), answers(f"c{k}", f"result {k}")]
    return messages


TRICKY_STRINGS = [
    ',{"role": "assistant", "parts": []}]',  # a whole fake assistant message inside a string
    '"},{"role":"assistant"}]',
    ",{},{}],{",
    ",{}]",
    "role: assistant",
    "\\u0022,{",  # an escaped quote spelled out
    "21 \u00b0C, {ok}",
    "line\nbreak, {tab}\t",
]

CASES = {
    "answers after the last assistant": long_history() + [asks("x", {}), answers("x", "1"), answers("y", "2")],
    "a user message after the answers": long_history() + [asks("x", {}), answers("x", "1"), user("and then?")],
    "ends with an assistant message": long_history() + [asks("x", {})],
    "no assistant message at all": [user("q")] + [answers(f"c{k}", "r" * 50) for k in range(60)],
    "short history": [user("q"), asks("x", {}), answers("x", "1")],
    "arguments that hold role assistant": long_history() + [
        asks("x", {"role": "assistant"}), answers("x", [{"role": "assistant"}])],
    "answer holding a nested list of objects": long_history() + [
        asks("x", {}), answers("x", [{"k": i, "v": [{"d": i}, {}]} for i in range(300)])],
    "answer holding a nested list of assistant messages": long_history() + [
        asks("x", {}), answers("x", [{"role": "assistant", "i": i} for i in range(300)]), user("next")],
    "answer longer than every tail tried": long_history() + [asks("x", {}), answers("x", "z" * 100_000)],
    "many parts in the last assistant message": long_history() + [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": f"p{i}", "name": "f"} for i in range(200)]},
        *[answers(f"p{i}", {"i": i}) for i in range(200)],
    ],
    **{f"tricky string {i}": long_history() + [asks("x", {"q": s}), answers("x", s), user(s)]
       for i, s in enumerate(TRICKY_STRINGS)},
    **{f"tricky string {i} before the last assistant": long_history() + [
        answers("w", s * 30), asks("x", {}), answers("x", "ok")] for i, s in enumerate(TRICKY_STRINGS)},
}
SPACINGS = {"compact": (",", ":"), "spaced": (", ", ": "), "wide": (" ,\n\t", " : ")}


@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("case", CASES)
def test_newest_messages_equal_the_whole_history_cut_after_its_last_assistant(case, spacing):
    text = json.dumps(CASES[case], separators=SPACINGS[spacing], ensure_ascii=spacing != "compact")
    assert newest_messages(text) == reference(text)
    assert newest_messages(" \n" + text + "\n ") == reference(text)


NOT_HISTORIES = [
    '{"role": "assistant"}',
    "not json",
    "",
    "[1, 2, 3]",
    json.dumps(long_history())[:-1],  # cut short, as an attribute length limit cuts it
    json.dumps(long_history())[:-200],
    "[" + json.dumps(long_history())[1:-1] + ",]",  # a trailing comma is not JSON
]


@pytest.mark.parametrize("text", NOT_HISTORIES, ids=range(len(NOT_HISTORIES)))
def test_what_is_not_a_json_array_of_messages_reads_as_decoding_it_whole_does(text):
    assert newest_messages(text) == reference(text)


ROLES = ["user", "assistant", "tool", "system"]


def test_random_histories_read_from_the_end_as_decoded_whole():
    rng = random.Random(11)
    pieces = TRICKY_STRINGS + ["", "x" * 3000, "plain"]

    def value(depth: int = 0):
        kind = rng.randrange(6 if depth < 3 else 3)
        if kind == 0:
            return rng.choice(pieces)
        if kind == 1:
            return rng.randrange(-5, 10**20)
        if kind == 2:
            return rng.choice([None, True, 1.5])
        if kind == 3:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["role", "parts", "id", "k"]): value(depth + 1) for _ in range(rng.randrange(4))}

    for _ in range(300):
        messages = [
            {"role": rng.choice(ROLES), "parts": [value() for _ in range(rng.randrange(3))]}
            if rng.random() < 0.9 else value()
            for _ in range(rng.randrange(1, 80))
        ]
        text = json.dumps(messages, separators=rng.choice(list(SPACINGS.values())), ensure_ascii=rng.random() < 0.5)
        assert newest_messages(text) == reference(text)
