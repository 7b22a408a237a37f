"""The lexicon of texts that read as a failure or a refusal, and of the tools that end a run
(``profiles/lexicon/reads_as.yaml``).

A tool's result, its error or the answer handed to the model that reads as one only opens the
call's outcome (``assembly.witnesses``): a hit never decides it. So does an error whose text says
its message was withheld (``withholds``), one that says a check of what the body returned
failed (``after_return``), and a tool named as one
frameworks call themselves to end a run (``ends_runs``): called last in a run, it may be no call
of the agent's. The file is validated when it loads (each pattern compiles, each example is read
as its entry says) and compiled once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, Literal

import yaml
from pydantic import BaseModel, ConfigDict, model_validator

LEXICON = Path(__file__).parent / "profiles" / "lexicon" / "reads_as.yaml"
FAILURE: Final = "failure"
REFUSAL: Final = "refusal"
LOOKED_AT = 256  # the start of a text says what it is; the rest is its payload


class Entry(BaseModel):
    """Patterns that read a text one way, why, and texts they must read so (``examples``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    why: str
    patterns: tuple[str, ...]
    examples: tuple[str, ...]

    @model_validator(mode="after")
    def _compile_and_match_the_examples(self) -> Entry:
        if not self.patterns or not self.examples:
            raise ValueError(f"{self.why!r}: needs patterns and examples")
        compiled = []
        for pattern in self.patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
        for example in self.examples:
            if not any(c.search(example[:LOOKED_AT].lower()) for c in compiled):
                raise ValueError(f"{self.why!r}: no pattern matches its example {example!r}")
        return self


class Ending(BaseModel):
    """Tools some framework calls itself to end a run or hand back its answer, and whose."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    why: str
    tools: tuple[str, ...]


class Lexicon(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    refusal: tuple[Entry, ...]
    failure: tuple[Entry, ...]
    withheld: tuple[Entry, ...] = ()
    after_return: tuple[Entry, ...] = ()
    ended: tuple[Ending, ...] = ()


def load(path: Path = LEXICON) -> Lexicon:
    """The lexicon at ``path``, validated; a file that is not a valid lexicon raises, naming it."""
    try:
        return Lexicon.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except Exception as exc:
        raise ValueError(f"lexicon {path.name}: {exc}") from exc


def _compiled(entries: tuple[Entry, ...]) -> tuple[re.Pattern[str], ...]:
    # One expression a pattern, not one alternation of all: each starts with a literal, which
    # Python's matcher finds fast, where an alternation is tried at every character.
    return tuple(re.compile(pattern) for entry in entries for pattern in entry.patterns)


_LOADED = load()
_REFUSAL, _FAILURE = _compiled(_LOADED.refusal), _compiled(_LOADED.failure)
_WITHHELD = _compiled(_LOADED.withheld)
_AFTER_RETURN = _compiled(_LOADED.after_return)
_ENDING = frozenset(tool for entry in _LOADED.ended for tool in entry.tools)


def withholds(text: str | None) -> bool:
    """Whether an error's ``text`` says its message was withheld (redacted): it tells no more
    than an error with no message.

    >>> withholds("Tool execution failed. Error details are redacted."), withholds("division by zero")
    (True, False)
    """
    return _found(text, _WITHHELD)


def after_return(text: str | None) -> bool:
    """Whether an error's ``text`` says a check of what the body returned failed (an output
    guardrail): the body ran and returned, so the call may count as one that did.

    >>> after_return("Tool output guardrail ToolOutputGuardrail triggered tripwire"), after_return("Tool input guardrail")
    (True, False)
    """
    return _found(text, _AFTER_RETURN)


def ends_runs(tool: str) -> bool:
    """Whether ``tool`` is named as a tool frameworks call themselves to end a run.

    >>> ends_runs("final_answer"), ends_runs("multiply")
    (True, False)
    """
    return tool in _ENDING


def reads_as(text: str | None) -> Literal["refusal", "failure"] | None:
    """What ``text`` reads as: ``refusal``, ``failure``, or None.

    >>> reads_as("Error: division by zero"), reads_as("operator rejected it"), reads_as("42")
    ('failure', 'refusal', None)
    """
    if _found(text, _REFUSAL):
        return REFUSAL
    if _found(text, _FAILURE):
        return FAILURE
    return None


def _found(text: str | None, patterns: tuple[re.Pattern[str], ...]) -> bool:
    """Whether one of ``patterns`` is in the start of ``text``, lower-cased (what the lexicon reads)."""
    if not text:
        return False
    start = text[:LOOKED_AT].lower()
    return any(pattern.search(start) for pattern in patterns)
