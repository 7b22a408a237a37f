"""Which spans a convention file's rule reads (``When``) and conditions inside an attribute's JSON
(``Inside``), validated at load (pydantic); ``conditions`` tests them on a span."""

from __future__ import annotations

import functools
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

Scalar = str | bool | int | float


class Inside(BaseModel):
    """A condition inside another attribute's JSON: the value at ``path`` exists (and, with
    ``equals``, is one of them; with ``is_span_name``, is the span's name), or with ``present``
    false does not exist. Its text is tested for one of ``equals`` and for the path's last key
    before any decoding, so a span whose attribute cannot hold the value costs a substring test.

    >>> Inside(attribute="bus.message", path="message.type", equals=["Request"]).path
    'message.type'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    attribute: str = Field(min_length=1)
    path: str = Field(min_length=1)
    equals: tuple[Scalar, ...] = ()
    present: bool = True
    is_span_name: bool = False

    @functools.cached_property
    def key_text(self) -> str:
        """What the attribute's text holds wherever the path's last step does: a key's quoted name."""
        last = self.path.rsplit(".", 1)[-1]
        return "" if last == "*" or last.isdigit() else f'"{last}"'

    @functools.cached_property
    def texts(self) -> tuple[str, ...] | None:
        """``equals`` when all of it is text (a value's text must then hold one), else None."""
        texts = tuple(value for value in self.equals if isinstance(value, str))
        return texts if texts and len(texts) == len(self.equals) else None

    @model_validator(mode="after")
    def _one_test(self) -> Inside:
        if not self.present and (self.equals or self.is_span_name):
            raise ValueError("present: false says the path is absent: give no equals or is_span_name")
        if self.equals and self.is_span_name:
            raise ValueError("give equals or is_span_name, not both")
        return self


class When(BaseModel):
    """Which spans a rule reads: all that is given must hold. ``span_name`` (exact) or
    ``attribute`` (present; with ``equals``, its value — or the value its JSON text holds, as
    MLflow writes ``"TOOL"`` — is one of them) is required: it is how the rule is found
    without testing every span; ``span_name_matches`` (a regular expression the whole name
    matches, whose named groups fields may read) narrows it further. ``path`` looks inside the
    attribute's JSON: the value there must exist (and, with ``equals``, be one of them), for an
    instrumentation that writes a whole event as one JSON attribute. ``also``: more attributes
    the span must carry, each with the values it may have (none listed: any), for spans that only
    two attributes together tell apart (an instrumentation's marker and the framework it wraps);
    ``without``: attributes the span must not carry (a span that closed before it could write them);
    ``same_value``: attributes the span carries with one same value (a step named after the agent
    it runs); ``matches``: attributes whose text each regular expression matches whole;
    ``inside``: conditions inside other attributes' JSON (``Inside``), tested last (a message bus
    that writes each message whole, told apart by the type it names).

    The same shape states a condition on a span already found (``failed_when``,
    ``not_failed_when``, ``refused_when``): there ``event`` reads the attributes of the span's first
    event of that name (an ``exception``), ``matches`` alone may say what is tested, and in
    ``refused_when`` a group named ``tool`` must be the tool's name.

    >>> When(attribute="sdk.kind", equals=["tool"]).equals
    ('tool',)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    span_name: str | None = Field(None, min_length=1)
    span_name_matches: str | None = None
    attribute: str | None = Field(None, min_length=1)
    equals: tuple[Scalar, ...] = ()
    path: str | None = Field(None, min_length=1)
    also: dict[str, tuple[Scalar, ...]] = Field(default_factory=dict)
    without: tuple[str, ...] = ()
    same_value: tuple[str, ...] = ()
    matches: dict[str, str] = Field(default_factory=dict)
    event: str | None = Field(None, min_length=1)
    inside: tuple[Inside, ...] = ()
    # conditions only: a regular expression the span's error text (its status message, else its
    # exception's message) matches whole; a group named ``tool`` must be the tool's name
    error_matches: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _found_by_name_or_attribute(self) -> When:
        if self.span_name is None and self.attribute is None and not self.matches and self.error_matches is None:
            raise ValueError("needs span_name or attribute (span_name_matches alone would be tried on every span)")
        if len(self.same_value) == 1:
            raise ValueError("same_value compares attributes with each other: give two or more")
        for key, pattern in self.matches.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"matches {key}: {pattern!r} is no regular expression: {exc}") from None
        if self.equals and self.attribute is None:
            raise ValueError("equals compares an attribute's value: give attribute")
        if self.path and self.attribute is None:
            raise ValueError("path looks inside an attribute's value: give attribute")
        for pattern in (self.error_matches,) if self.error_matches is not None else ():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"error_matches: {pattern!r} is no regular expression: {exc}") from None
        if self.span_name_matches is not None:
            try:
                re.compile(self.span_name_matches)
            except re.error as exc:
                raise ValueError(f"span_name_matches {self.span_name_matches!r} is no regular expression: {exc}") from None
        return self
