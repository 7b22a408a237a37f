"""Framework knowledge as data: what a framework itself writes, stated once per framework and
applied whatever instrumentation carried the trace.

A framework writes its own texts: the answer it hands the model for a call it refused (an
unknown tool, a denial, a limit), the error it records when it could not tell a body that
raised from arguments that failed its check. Those texts reach the spans through whichever
instrumentation is in place (OpenInference, Logfire, MLflow, OpenLLMetry, the framework's own
telemetry), each in its own attribute. So a framework file is selected by the evidence itself
(the text), never by an instrumentation's attributes: what an instrumentation alone does stays
in its profile (``profiles/``).

One YAML file per framework beside this module, validated by ``Framework`` at load. Each
``texts`` entry says what a call means when the text (``contains``) is in a tool span's error or
result, or in the answer a model input hands back for it (``in``): the call was ``refused`` (its
body never ran; an answer's refusal has a short ``reason``), ``refusal_possible`` (a refusal and
a body that failed leave the same), ``ran`` (the body returned; a check of its output failed the
span; an answer that says so is no refusal) or ``failed`` (a body that failed, its error written
as the result). ``only_without_result``: only where the span records no result (the
instrumentation captured no content), since with content the result tells. ``starts_agents``
names the framework's own tools whose body runs another of its agents, and the argument that
names that agent (CrewAI's delegation tools, ``coworker``): a call made inside such a tool's
body is that agent's (``assembly.started``). A reading without framework knowledge
(``knowledge.removed``, the cold reader) applies none of it.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...model import Role, SpanRecord
from ..data_files import load_folder

FOLDER = Path(__file__).parent
REFUSED, REFUSAL_POSSIBLE, RAN, FAILED = "refused", "refusal_possible", "ran", "failed"


class Text(BaseModel):
    """One text the framework writes, where it shows and what it says of the call."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    contains: str = Field(min_length=3)
    in_: Literal["error", "result", "answer"] = Field(alias="in")
    says: Literal["refused", "refusal_possible", "ran", "failed"]
    only_without_result: bool = False
    reason: str | None = Field(None, min_length=1)  # an answer's refusal, named as the chain shows it
    why: str = Field(min_length=1)

    @model_validator(mode="after")
    def _an_answer_says_refused_or_ran(self) -> Text:
        if self.in_ == "answer" and self.says not in (REFUSED, RAN):
            raise ValueError("an answer's text says refused or ran")
        if (self.reason is not None) != (self.in_ == "answer" and self.says == REFUSED):
            raise ValueError("reason names an answer's refusal: give it there, and only there")
        return self


class Starter(BaseModel):
    """A tool of the framework's own whose body runs another of its agents, and the argument that
    names that agent: a call inside it is that agent's, whatever instrumentation recorded it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tools: tuple[str, ...] = Field(min_length=1)  # its names: as the model calls it, as spans show it
    names_agent: str = Field(min_length=1)  # the argument
    why: str = Field(min_length=1)


class Framework(BaseModel):
    """One framework's file.

    >>> Framework(name="acme", description="d", texts=[{"contains": "Nope.", "in": "result", "says": "refused", "why": "w"}]).texts[0].says
    'refused'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9_.-]+$")
    description: str = Field(min_length=1)
    texts: tuple[Text, ...]
    starts_agents: tuple[Starter, ...] = ()

    @field_validator("texts")
    @classmethod
    def _says_something(cls, texts: tuple[Text, ...]) -> tuple[Text, ...]:
        if not texts:  # checked after the entries, not by Field(min_length): an entry's own error says enough
            raise ValueError("give at least one text")
        return texts


def load(folder: Path = FOLDER) -> tuple[Framework, ...]:
    """Every framework file of ``folder``, validated; one that is not valid raises, naming it."""
    return load_folder(folder, Framework, "framework file")


class _Texts:
    """The texts of every framework in force, by where they show, in the order a reading tries them."""

    __slots__ = ("in_error", "in_result", "refused_answers", "ran_answers", "any_in_error", "any_in_result", "starters")

    def __init__(self, frameworks: tuple[Framework, ...]) -> None:
        texts = [t for f in frameworks for t in f.texts]
        self.in_error = tuple(t for t in texts if t.in_ == "error")
        self.in_result = tuple(t for t in texts if t.in_ == "result")
        self.refused_answers = tuple((t.contains, t.reason) for t in texts if t.in_ == "answer" and t.says == REFUSED)
        self.ran_answers = tuple(t.contains for t in texts if t.in_ == "answer" and t.says == RAN)
        # One search a span for whether any text is there (this runs for every tool span, and
        # most hold none); which one, only on a hit.
        self.any_in_error = _any_of(self.in_error)
        self.any_in_result = _any_of(self.in_result)
        self.starters = {tool: s.names_agent for f in frameworks for s in f.starts_agents for tool in s.tools}


def _any_of(texts: tuple[Text, ...]) -> Callable[[str], object]:
    if not texts:
        return lambda _: None
    return re.compile("|".join(re.escape(t.contains) for t in texts)).search


_active = _Texts(load())
_TOOL = Role.TOOL


def read(record: SpanRecord) -> SpanRecord:
    """A tool record as the framework texts its error or result holds say (a copy when they
    change it), ``record`` itself when none does. Only an OK span's result is read for a
    refusal or a failure, and only a failed span's error."""
    active = _active
    if record.role is not _TOOL or record.refusal is not None:
        return record
    if record.error:
        said = _first(active.in_error, record.error, record) if active.any_in_error(record.error) else None
        if said is None and record.output and active.any_in_result(record.output):
            said = _first(active.in_result, record.output, record)
        if said is None:
            return record
        if said.says == REFUSED:
            return replace(record, refusal=record.error)
        if said.says == RAN:  # the body returned (so no call held for a decision either)
            return replace(record, error=None, returned=True)
        return replace(record, refusal_possible=True) if said.says == REFUSAL_POSSIBLE else record
    if record.output and active.any_in_result(record.output):
        said = _first(active.in_result, record.output, record)
        if said is not None and said.says == REFUSED:
            return replace(record, error=record.output, refusal=record.output)
        if said is not None and said.says == FAILED:
            return replace(record, error=record.output)
        if said is not None and said.says == REFUSAL_POSSIBLE:  # the answer says it failed, maybe before the body
            return replace(record, error=record.output, refusal_possible=True)
    return record


def refusal_named(answer: str) -> str | None:
    """The refusal a framework's answer to the model names (its ``reason``), None when none does.

    >>> refusal_named("Invoking `format_disk()` failed as no tool with that name is available.")
    'unknown tool'
    """
    for text, reason in _active.refused_answers:
        if text in answer:
            return reason
    return None


def answer_says_it_ran(answer: str) -> bool:
    """Whether a framework's answer to the model says the call is no refusal (agno answers a
    rejected confirmation as a failed run)."""
    return any(text in answer for text in _active.ran_answers)


def agent_started_by(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """The agent a framework's own tool that runs another agent names by its arguments (CrewAI's
    ``coworker``), None when the tool is none such or the argument names none.

    >>> agent_started_by("delegate_work_to_coworker", {"task": "t", "coworker": "researcher"})
    'researcher'
    """
    argument = _active.starters.get(tool)
    named = arguments.get(argument) if argument is not None else None
    return (named.strip() or None) if isinstance(named, str) else None


def _first(texts: tuple[Text, ...], where: str, record: SpanRecord) -> Text | None:
    for text in texts:
        if text.contains in where and not (text.only_without_result and record.returned):
            return text
    return None


@contextmanager
def removed() -> Iterator[None]:
    """Read without any framework file while the block runs (the cold reader)."""
    global _active
    kept, _active = _active, _Texts(())
    try:
        yield
    finally:
        _active = kept
