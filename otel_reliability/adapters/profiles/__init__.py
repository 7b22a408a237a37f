"""Declarative profiles: what one instrumentation's spans mean that their structure cannot tell.

A profile is data, one YAML file per instrumentation beside this module, validated by
``Profile``. It is selected by attributes that instrumentation's spans carry (``select``),
never by a framework's name, and says:

* ``pseudo_tools`` — tools the framework calls itself to end a run or hand back an answer
  (a built-in final-answer tool, a ``finish`` step): not the agent's calls;
* ``refused_when_error_contains`` — a tool span whose error holds one of these texts records
  a call whose body never ran (the framework's validation or guard failed it);
* ``agent_name_attributes`` — the attributes that name the agent on a span no convention
  marks as a run, before the conventions' own.

A span that carries a profile's selector is tagged with it (``SpanRecord.profile``); what a
profile says applies to the trace its tagged spans are in. ``removed()`` judges without any
profile: the generic reader alone, as a new framework's cold score is measured.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
    agent_name_attributes: tuple[str, ...] = ()

    @field_validator("pseudo_tools", "refused_when_error_contains", "agent_name_attributes")
    @classmethod
    def _no_blank_entries(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if any(not value.strip() for value in values):
            raise ValueError("entries must not be blank")
        return values


def load(folder: Path = FOLDER) -> tuple[Profile, ...]:
    """Every profile of ``folder``, validated; a file that is not a valid profile raises, naming it."""
    found = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            found.append(Profile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))))
        except Exception as exc:
            raise ValueError(f"profile {path.name}: {exc}") from exc
    names = [p.name for p in found]
    if len(set(names)) != len(names):
        raise ValueError(f"profiles share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return tuple(found)


class _Active:
    """The profiles in force, and what the hot path asks of them, precomputed."""

    def __init__(self, loaded: Iterable[Profile]) -> None:
        self.by_name = {profile.name: profile for profile in loaded}
        self.selectors = tuple((key, p.name) for p in self.by_name.values() for key in p.select.any_attribute)
        self.span_names = {name: p.name for p in self.by_name.values() for name in p.select.any_span_name}


_active = _Active(load())


def profile_of(attributes: Mapping[str, Any], span_name: str) -> str | None:
    """The name of the profile whose selector a span with these attributes and name carries,
    None when none does.

    >>> profile_of({}, "work")
    """
    for key, name in _active.selectors:
        if key in attributes:
            return name
    return _active.span_names.get(span_name)


def has_selectors() -> bool:
    return bool(_active.selectors or _active.span_names)


def get(name: str) -> Profile | None:
    return _active.by_name.get(name)


def active() -> tuple[Profile, ...]:
    return tuple(_active.by_name.values())


@contextmanager
def removed() -> Iterator[None]:
    """Read without any profile while the block runs (the cold reader)."""
    global _active
    kept, _active = _active, _Active(())
    try:
        yield
    finally:
        _active = kept
