"""A folder of YAML data files (profiles, framework files), each validated with its pydantic model."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..input_errors import validation_problems, yaml_problem
from ..textfile import read_text


Model = TypeVar("Model", bound=BaseModel)


def load_folder(folder: Path, model: type[Model], kind: str) -> tuple[Model, ...]:
    """Every ``*.yaml`` file of ``folder`` read as ``model``, in name order. A file that is not
    valid raises ``ValueError`` naming it as a ``kind`` (a file that is not UTF-8 raises
    ``NotUtf8Error``, which names the file and the byte already), and so do two that share a name.

    >>> from otel_reliability.adapters.profiles import Profile
    >>> load_folder(Path("no such folder"), Profile, "profile")
    ()
    """
    found = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            found.append(model.model_validate(yaml.safe_load(read_text(path))))
        except yaml.YAMLError as exc:
            raise ValueError(f"{kind} {path.name}: not valid YAML: {yaml_problem(exc)}") from None
        except ValidationError as exc:
            raise ValueError(f"{kind} {path.name}: {validation_problems(exc)}") from None
    names = [item.model_dump(include={"name"})["name"] for item in found]  # every model read here has a name
    if len(set(names)) != len(names):
        raise ValueError(f"{kind}s share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return tuple(found)

