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
``texts`` entry says what a tool span means when its error or its result (``in``) holds the
text (``contains``): the call was ``refused`` (its body never ran), ``refusal_possible`` (a
refusal and a body that failed leave the same), ``ran`` (the body returned; a check of its
output failed the span) or ``failed`` (a body that failed, its error written as the result).
``only_without_result``: only where the span records no result (the instrumentation captured
no content), since with content the result tells. A reading without framework knowledge
(``knowledge.removed``, the cold reader) applies none of it.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...input_errors import validation_problems, yaml_problem
from ...model import Role, SpanRecord
from ...textfile import NotUtf8Error, read_text

FOLDER = Path(__file__).parent
REFUSED, REFUSAL_POSSIBLE, RAN, FAILED = "refused", "refusal_possible", "ran", "failed"


class Text(BaseModel):
    """One text the framework writes, where it shows and what it says of the call."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    contains: str = Field(min_length=3)
    in_: Literal["error", "result"] = Field(alias="in")
    says: Literal["refused", "refusal_possible", "ran", "failed"]
    only_without_result: bool = False
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

    @field_validator("texts")
    @classmethod
    def _says_something(cls, texts: tuple[Text, ...]) -> tuple[Text, ...]:
        if not texts:  # checked after the entries, not by Field(min_length): an entry's own error says enough
            raise ValueError("give at least one text")
        return texts


def load(folder: Path = FOLDER) -> tuple[Framework, ...]:
    """Every framework file of ``folder``, validated; one that is not valid raises, naming it."""
    found = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            found.append(Framework.model_validate(yaml.safe_load(read_text(path))))
        except NotUtf8Error:
            raise
        except yaml.YAMLError as exc:
            raise ValueError(f"framework file {path.name}: not valid YAML: {yaml_problem(exc)}") from None
        except ValidationError as exc:
            raise ValueError(f"framework file {path.name}: {validation_problems(exc)}") from None
    names = [f.name for f in found]
    if len(set(names)) != len(names):
        raise ValueError(f"framework files share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return tuple(found)


class _Texts:
    """The texts of every framework in force, by where they show, in the order a reading tries them."""

    __slots__ = ("in_error", "in_result", "any")

    def __init__(self, frameworks: tuple[Framework, ...]) -> None:
        texts = [t for f in frameworks for t in f.texts]
        self.in_error = tuple(t for t in texts if t.in_ == "error")
        self.in_result = tuple(t for t in texts if t.in_ == "result")
        self.any = bool(texts)


_active = _Texts(load())
_TOOL = Role.TOOL


def read(record: SpanRecord) -> SpanRecord:
    """A tool record as the framework texts its error or result holds say (a copy when they
    change it), ``record`` itself when none does. Only an OK span's result is read for a
    refusal or a failure, and only a failed span's error."""
    active = _active
    if not active.any or record.role is not _TOOL or record.refusal is not None:
        return record
    if record.error:
        said = _first(active.in_error, record.error, record)
        if said is None and record.output:
            said = _first(active.in_result, record.output, record)
        if said is None:
            return record
        if said.says == REFUSED:
            return replace(record, refusal=record.error)
        if said.says == RAN:  # the body returned (so no call held for a decision either)
            return replace(record, error=None, returned=True)
        return replace(record, refusal_possible=True) if said.says == REFUSAL_POSSIBLE else record
    if record.output:
        said = _first(active.in_result, record.output, record)
        if said is not None and said.says == REFUSED:
            return replace(record, error=record.output, refusal=record.output)
        if said is not None and said.says == FAILED:
            return replace(record, error=record.output)
        if said is not None and said.says == REFUSAL_POSSIBLE:  # the answer says it failed, maybe before the body
            return replace(record, error=record.output, refusal_possible=True)
    return record


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
