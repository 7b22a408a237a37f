"""The lexicon of texts that read as a failure or a refusal (``profiles/lexicon/reads_as.yaml``).

A tool's result, its error or the answer handed to the model that reads as one only opens the
call's outcome (``assembly.witnesses``): a hit never decides it. The file is validated when it
loads (each pattern compiles and matches its example) and compiled once, one expression a kind.
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
    model_config = ConfigDict(extra="forbid", frozen=True)
    pattern: str
    example: str

    @model_validator(mode="after")
    def _matches_its_example(self) -> Entry:
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"pattern {self.pattern!r} does not compile: {exc}") from exc
        if not compiled.search(self.example[:LOOKED_AT]):
            raise ValueError(f"pattern {self.pattern!r} does not match its example {self.example!r}")
        return self


class Lexicon(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    refusal: tuple[Entry, ...]
    failure: tuple[Entry, ...]


def load(path: Path = LEXICON) -> Lexicon:
    """The lexicon at ``path``, validated; a file that is not a valid lexicon raises, naming it."""
    try:
        return Lexicon.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except Exception as exc:
        raise ValueError(f"lexicon {path.name}: {exc}") from exc


def _compiled(entries: tuple[Entry, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{e.pattern})" for e in entries), re.IGNORECASE)


_LOADED = load()
_REFUSAL, _FAILURE = _compiled(_LOADED.refusal), _compiled(_LOADED.failure)


def reads_as(text: str | None) -> Literal["refusal", "failure"] | None:
    """What ``text`` reads as: ``refusal``, ``failure``, or None.

    >>> reads_as("Error: division by zero"), reads_as("operator rejected it"), reads_as("42")
    ('failure', 'refusal', None)
    """
    if not text:
        return None
    start = text[:LOOKED_AT]
    if _REFUSAL.search(start):
        return REFUSAL
    if _FAILURE.search(start):
        return FAILURE
    return None
