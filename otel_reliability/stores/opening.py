"""Opening a store spec fails in one line naming the spec and the reason, never a traceback.

A file that is not SQLite, a folder that does not exist or cannot be written, a PostgreSQL
server that does not answer: each is a ``StoreSpecError`` (``results store 'fake.db': cannot
open: file is not a database``) that every command prints as bad input (exit 2) and the span
processor raises from its constructor. The commands create a store's missing folder only when
asked (``serve --mkdir``, ``demo --mkdir``): a typo in a path must not leave folders behind,
nor, run as root, create them anywhere. The Python API (``open_store``, the processor's
``store=``) creates it, as documented in the README: an app names its store on purpose.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from otel_reliability.stores.spec import MEMORY, Purpose, StoreSpec, StoreSpecError

__all__ = ["opening", "ready_folder"]


@contextmanager
def opening(spec: str | Path, purpose: Purpose) -> Iterator[None]:
    """Turn what opening the store ``spec`` raises into a ``StoreSpecError`` naming it.

    >>> with opening("/proc/x.db", "results"):
    ...     raise sqlite3.DatabaseError("file is not a database")
    Traceback (most recent call last):
    ...
    otel_reliability.stores.spec.StoreSpecError: results store '/proc/x.db': cannot open: file is not a database
    """
    try:
        yield
    except StoreSpecError:
        raise
    except (sqlite3.Error, OSError) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__
        raise StoreSpecError(f"{purpose} store {str(spec)!r}: cannot open: {reason}") from exc


def ready_folder(spec: str | Path, store: StoreSpec, purpose: Purpose, create_parents: bool) -> None:
    """Make sure the folder of a file store exists: created when ``create_parents``, else a
    ``StoreSpecError`` naming the spec and the missing folder."""
    if store.path is None or str(store.path) == MEMORY:
        return
    folder = store.path.parent
    if folder.is_dir():
        return
    if not create_parents:
        raise StoreSpecError(
            f"{purpose} store {str(spec)!r}: folder {folder} does not exist; create it first "
            "(serve and demo: --mkdir)"
        )
    with opening(spec, purpose):
        folder.mkdir(parents=True, exist_ok=True)
