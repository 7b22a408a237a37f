"""Declarative profiles: what one instrumentation's spans mean that their structure cannot tell.

A profile is data, one YAML file per instrumentation beside this module, validated by
``Profile``. It is selected by attributes that instrumentation's spans carry (``select``),
never by a framework's name, and says:

* ``pseudo_tools`` — tools the framework calls itself to end a run or hand back an answer
  (a built-in final-answer tool, a ``finish`` step): not the agent's calls;
* ``refused_when_error_contains`` — a tool span whose error holds one of these texts records
  a call whose body never ran (the framework's validation or guard failed it);
* ``ran_when_error_contains`` — a tool span whose error holds one of these texts failed after
  the body returned (a check of its output withheld the result): the call ran;
* ``refusal_possible_when_error_contains`` — a tool span whose error holds one of these texts
  is what a refusal before the body and a body that raised both leave (a generic message, a
  validation error that either side may raise): the attempt is an error that could be a
  refusal, and the checks that would differ are not evaluated;
* ``refused_when_output_contains`` / ``failed_when_output_contains`` — a tool span that ended
  OK but whose result holds one of these texts records a call that never ran (a guard's
  answer in place of the result) / a body that failed (an error the framework returned as
  the result);
* ``refused_call_when_error_matches`` — a span (of no tool) whose error matches one of these
  patterns records a call the model asked for and the framework refused before any tool span
  (a reply naming a tool it has not, which it could not parse): the pattern's ``tool`` group
  names the tool, and the span is read as that call, refused;
* ``arguments_in`` (with ``arguments_beside``) — a tool span records the call's arguments
  wrapped: as the value of this key, beside the keys listed (the tool's run options);
* ``held_when_attribute`` — a tool span that carries one of these attributes recorded a call
  held for a decision (an approval), not a run of the tool: it is read as the request, which a
  later answer (approved, denied) or the lack of one decides. The attribute marks the span
  itself, so this applies wherever it appears;
* ``held_when_no_result`` — a tool span that ended OK with the call's arguments but no result
  (the instrumentation records a result for every call that returns) recorded a call held for
  a decision, read as the request as above.

A span that carries a profile's selector is tagged with it (``SpanRecord.profile``); what a
profile says applies to the trace its tagged spans are in. ``removed()`` judges without any
profile: the generic reader alone, as a new framework's cold score is measured.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..data_files import load_folder

FOLDER = Path(__file__).parent


class Selector(BaseModel):
    """Spans of the instrumentation carry any one of ``any_attribute``, or have one of the
    span names ``any_span_name`` (for an instrumentation whose spans carry no attribute of
    their own: the names of the methods it wraps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    any_attribute: tuple[str, ...] = ()
    any_span_name: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _selects_something(self) -> Selector:
        if not self.any_attribute and not self.any_span_name:
            raise ValueError("select needs any_attribute or any_span_name")
        return self


class Profile(BaseModel):
    """One instrumentation's profile (a YAML file of this folder).

    >>> Profile(name="x", description="d", select={"any_attribute": ["x.kind"]}, pseudo_tools=["finish"]).pseudo_tools
    ('finish',)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9_.-]+$")
    description: str = Field(min_length=1)
    select: Selector
    pseudo_tools: tuple[str, ...] = ()
    refused_when_error_contains: tuple[str, ...] = ()
    ran_when_error_contains: tuple[str, ...] = ()
    refused_call_when_error_matches: tuple[str, ...] = ()
    refusal_possible_when_error_contains: tuple[str, ...] = ()
    refused_when_output_contains: tuple[str, ...] = ()
    failed_when_output_contains: tuple[str, ...] = ()
    held_when_attribute: tuple[str, ...] = ()
    held_when_no_result: bool = False
    arguments_in: str | None = None
    arguments_beside: tuple[str, ...] = ()

    @field_validator("refused_call_when_error_matches")
    @classmethod
    def _patterns_name_the_tool(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is no regular expression: {exc}") from exc
            if "tool" not in compiled.groupindex:
                raise ValueError(f"{pattern!r} has no (?P<tool>...) group naming the refused tool")
        return patterns

    @field_validator(
        "pseudo_tools", "refused_when_error_contains", "ran_when_error_contains", "refusal_possible_when_error_contains", "refused_when_output_contains", "failed_when_output_contains",
        "held_when_attribute", "arguments_beside",
    )
    @classmethod
    def _no_blank_entries(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if any(not value.strip() for value in values):
            raise ValueError("entries must not be blank")
        return values


def load(folder: Path = FOLDER) -> tuple[Profile, ...]:
    """Every profile of ``folder``, validated; a file that is not a valid profile raises, naming it."""
    return load_folder(folder, Profile, "profile")


class _Active:
    """The profiles in force, and what the hot path asks of them, precomputed."""

    def __init__(self, loaded: Iterable[Profile]) -> None:
        self.by_name = {profile.name: profile for profile in loaded}
        self.selectors = tuple((key, p.name) for p in self.by_name.values() for key in p.select.any_attribute)
        self.span_names = {name: p.name for p in self.by_name.values() for name in p.select.any_span_name}
        self.refused_calls = tuple(re.compile(x) for p in self.by_name.values() for x in p.refused_call_when_error_matches)
        # What every span is asked, as sets: one C-level test against the span's attributes
        # instead of a Python loop over every profile's keys (this runs for every span).
        self.selector_keys = frozenset(key for key, _ in self.selectors)
        self.held_keys = frozenset(key for p in self.by_name.values() for key in p.held_when_attribute)
        self.any = bool(self.selectors or self.span_names or self.held_keys or self.refused_calls)


_active = _Active(load())


def profile_of(attributes: Mapping[str, Any], span_name: str) -> str | None:
    """The name of the profile whose selector a span with these attributes and name carries,
    None when none does.

    >>> profile_of({}, "work")
    """
    active = _active
    if not active.selector_keys.isdisjoint(attributes):
        for key, name in active.selectors:  # the first profile's selector wins
            if key in attributes:
                return name
    return active.span_names.get(span_name)


def refused_call_patterns() -> tuple[re.Pattern[str], ...]:
    """The error patterns that name a call the framework refused before any tool span, in any profile."""
    return _active.refused_calls


def marks_held(attributes: Mapping[str, Any]) -> bool:
    """Whether a tool span with these attributes is a call held for a decision: it carries an
    attribute a profile's ``held_when_attribute`` names."""
    return not _active.held_keys.isdisjoint(attributes)


def has_selectors() -> bool:
    return _active.any


def get(name: str) -> Profile | None:
    return _active.by_name.get(name)


@contextmanager
def removed() -> Iterator[None]:
    """Read without any profile while the block runs (the cold reader)."""
    global _active
    kept, _active = _active, _Active(())
    try:
        yield
    finally:
        _active = kept
