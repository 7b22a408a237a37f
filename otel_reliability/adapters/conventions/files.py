"""Convention files: where they come from, how each is loaded and validated, and the order
they are tried in (``conventions`` compiles them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import yaml
from pydantic import ValidationError

from ...input_errors import validation_problems, yaml_problem
from ...textfile import NotUtf8Error, read_text
from .model import Convention

SHIPPED = "shipped"  # a convention file that comes with the package
ENVIRONMENT_VARIABLE = "OTEL_RELIABILITY_CONVENTIONS"  # the user's convention files, comma-separated


def paths_from(environ: Mapping[str, str]) -> list[str]:
    """The convention files an environment names (``OTEL_RELIABILITY_CONVENTIONS``, comma-separated).

    >>> paths_from({"OTEL_RELIABILITY_CONVENTIONS": "acme.yaml, more.yaml"})
    ['acme.yaml', 'more.yaml']
    """
    return [part.strip() for part in environ.get(ENVIRONMENT_VARIABLE, "").split(",") if part.strip()]


class ConventionError(ValueError):
    """A convention file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Origin:
    """A convention in force, and where it came from (for ``otel-reliability conventions``)."""

    convention: Convention
    source: str  # the file's path, or SHIPPED

    @property
    def found_by(self) -> list[str]:
        """What a span must have for this convention to read it: its rules' names and attributes."""
        return sorted({f"span name {r.when.span_name}" if r.when.span_name else f"attribute {r.when.attribute}" for r in self.convention.spans})


def load_file(path: str | Path) -> Convention:
    """One convention file, validated (``ConventionError`` in one line naming it otherwise)."""
    path = Path(path)
    try:
        text = read_text(path)
    except NotUtf8Error as exc:
        raise ConventionError(f"convention file {exc}") from None
    except OSError as exc:
        raise ConventionError(f"convention file {path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConventionError(f"convention file {path}: not valid YAML: {yaml_problem(exc)}") from None
    if data is None:
        raise ConventionError(f"convention file {path}: the file is empty: expected name, description and spans")
    try:
        return Convention.model_validate(data)
    except ValidationError as exc:
        raise ConventionError(f"convention file {path}: {validation_problems(exc)}") from None


def refining_first(origins: Sequence[Origin]) -> tuple[Origin, ...]:
    """``origins`` in their order, except that a convention comes before those it refines, and a
    file of framework knowledge (``framework:``) after the other files ready to be tried: it narrows
    a convention that instrumentations' own files read more closely first (GenAI's)."""
    names = {o.convention.name for o in origins}
    for origin in origins:
        for refined in origin.convention.refines:
            if refined not in names:
                raise ConventionError(f"convention file {origin.source}: refines: no convention named {refined!r} is in force")
    ordered: list[Origin] = []
    left = list(origins)
    while left:
        # the first one left that no other one left refines, framework knowledge last
        free = [o for o in left if not any(o.convention.name in other.convention.refines for other in left)]
        ready = next((o for o in free if o.convention.framework is None), free[0] if free else None)
        if ready is None:
            circle = sorted(o.convention.name for o in left if o.convention.refines)
            raise ConventionError(f"convention file {left[0].source}: refines: {', '.join(circle)} refine each other in a circle")
        ordered.append(ready)
        left.remove(ready)
    return tuple(ordered)
