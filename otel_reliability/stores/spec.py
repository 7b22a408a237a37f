"""What a store spec names, read once for results and standings alike.

A spec is what ``--store``, ``store:``, ``reputation_store:`` and ``OTEL_RELIABILITY_STORE``
hold:

- a file path: SQLite (``.jsonl``: JSON Lines, results only); ``":memory:"`` a throwaway SQLite;
- ``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``sqlite://`` (in memory), as
  SQLAlchemy writes them;
- ``postgresql://…`` or ``postgres://…``: PostgreSQL through psycopg 3, the store that
  several processes and hosts can share.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["DEFAULT_STORE", "MEMORY", "StoreSpec", "StoreSpecError", "default_store", "parse_store_spec"]

StoreKind = Literal["sqlite", "jsonl", "postgres"]
Purpose = Literal["results", "standings"]

MEMORY = ":memory:"
DEFAULT_STORE = "otel-reliability.db"  # where every command and both front doors keep verdicts unless told
POSTGRES_SCHEMES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class StoreSpecError(ValueError):
    """A store spec that names no store this project can open; the message quotes the spec."""


@dataclass(frozen=True, slots=True)
class StoreSpec:
    """One store: ``path`` for SQLite and JSON Lines, ``url`` for PostgreSQL.

    >>> parse_store_spec("sqlite:///data/results.db")
    StoreSpec(kind='sqlite', path=PosixPath('data/results.db'), url=None)
    >>> parse_store_spec("postgresql://db/reliability").shared
    True
    """

    kind: StoreKind
    path: Path | None = None
    url: str | None = None

    @property
    def shared(self) -> bool:
        """Whether other hosts can reach this store (what receivers share paused runs through)."""
        return self.kind == "postgres"

    @property
    def in_memory(self) -> bool:
        return self.kind == "sqlite" and str(self.path) == MEMORY

    def __str__(self) -> str:
        return self.url if self.url is not None else str(self.path)


def parse_store_spec(spec: str | Path, purpose: Purpose = "results") -> StoreSpec:
    """The store ``spec`` names, for keeping ``purpose`` in; a ``StoreSpecError`` naming the
    spec when there is none.

    >>> parse_store_spec("results.jsonl").kind
    'jsonl'
    >>> parse_store_spec("results.jsonl", "standings")
    Traceback (most recent call last):
    ...
    otel_reliability.stores.spec.StoreSpecError: standings store 'results.jsonl': JSON Lines holds results only; give a SQLite file path or a postgresql:// URL
    """
    text = str(spec)
    if not text.strip():
        raise StoreSpecError(f"{purpose} store: empty; give {_choices(purpose)}")
    scheme = _SCHEME.match(text)
    if scheme is None:
        path = Path(text)
        if path.suffix.lower() == ".jsonl":
            if purpose == "standings":
                raise StoreSpecError(
                    f"standings store {text!r}: JSON Lines holds results only; give a SQLite file path or a postgresql:// URL"
                )
            return StoreSpec("jsonl", path=path)
        return StoreSpec("sqlite", path=path)
    name = scheme.group(1).lower()
    if name in POSTGRES_SCHEMES:
        return StoreSpec("postgres", url=text)
    if name == "sqlite":
        return StoreSpec("sqlite", path=_sqlite_path(text, text[scheme.end():], purpose))
    raise StoreSpecError(f"{purpose} store {text!r}: scheme {scheme.group(1)!r} is not supported; give {_choices(purpose)}")


def _sqlite_path(spec: str, rest: str, purpose: Purpose) -> Path:
    """The file of a ``sqlite://`` URL: what follows the third slash (SQLAlchemy's reading)."""
    if rest == "":
        return Path(MEMORY)
    if not rest.startswith("/"):
        raise StoreSpecError(
            f"{purpose} store {spec!r}: a sqlite URL names no host; write sqlite:///relative.db or sqlite:////absolute.db"
        )
    path = rest[1:].split("?", 1)[0]
    if not path:
        raise StoreSpecError(f"{purpose} store {spec!r}: no file after sqlite:///")
    return Path(path)


def _choices(purpose: Purpose) -> str:
    files = "a file path (SQLite; .jsonl for JSON Lines)" if purpose == "results" else "a SQLite file path"
    return f"{files}, sqlite:///PATH or a postgresql:// URL"


def default_store() -> str:
    """The store a command uses when none is named: ``$OTEL_RELIABILITY_STORE``, else ``DEFAULT_STORE``."""
    return os.environ.get("OTEL_RELIABILITY_STORE") or DEFAULT_STORE
