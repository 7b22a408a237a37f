"""The keys any span may carry whichever convention reads it (``any_span.yaml``): the agent a
span names, the agent's version, the conversation, a tool's result. They are data, as the
conventions are; this module loads them once, validated, for ``adapters.to_record``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .common import str_or_none

Keys = Annotated[tuple[Annotated[str, Field(min_length=1)], ...], Field(min_length=1)]


class AnySpan(BaseModel):
    """Each field: the keys that say it, the first a span carries counting."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent_name: Keys
    agent_version: Keys
    session: Keys
    result: Keys


KEYS = AnySpan.model_validate(yaml.safe_load((Path(__file__).parent / "any_span.yaml").read_text(encoding="utf-8")))


def session_of(attributes: Mapping[str, Any]) -> str | None:
    """The span's conversation id, if it carries one (an empty value is none).

    >>> session_of({KEYS.session[-1]: "thread-1"}), session_of({KEYS.session[0]: ""})
    ('thread-1', None)
    """
    for key in KEYS.session:
        value = attributes.get(key)
        if value is not None and value != "" and not isinstance(value, (list, tuple, dict, bytes)):
            return str_or_none(value)  # an array is no id: no session rather than a made-up one
    return None
