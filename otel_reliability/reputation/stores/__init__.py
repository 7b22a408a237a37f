"""Where standings are kept: one module per store behind the ``StandingStore`` protocol.

``open_standings("otel-reliability.db")`` opens SQLite (the default; the same file the
results store uses, in tables of its own), ``open_standings("postgresql://…")``
PostgreSQL through psycopg 3. Every update is one transaction that serialises on the
agent: two processes appending to the same store lose nothing, and the standings
equal what replaying the evaluations one by one, in the store's sequence order, gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

from otel_reliability.reputation.config import ReputationConfig
from otel_reliability.reputation.evidence import Evidence
from otel_reliability.reputation.standing import Entry, Standing, WindowEntry
from otel_reliability.stores.opening import opening, ready_folder
from otel_reliability.stores.spec import parse_store_spec


class StandingStore(Protocol):
    config: ReputationConfig

    def append(self, entry: Entry) -> Standing:
        """Append one evaluation, evict what falls out of the window, return the new standing."""
        ...

    def append_many(self, entries: Sequence[Entry]) -> dict[str, Standing]:
        """Append evaluations in order in one transaction; returns each agent's new standing."""
        ...

    def amend(
        self, agent: str, trace_id: int | None, run_span_id: int | None, evidence: Sequence[Evidence], evaluated_at: float
    ) -> Standing:
        """Add evidence to the run's evaluation while it is in the window, else append it as an evaluation."""
        ...

    def standing(self, agent: str) -> Standing | None: ...

    def standings(self) -> list[Standing]:
        """Every agent's standing, by agent name."""
        ...

    def window(self, agent: str, limit: int | None = None) -> list[WindowEntry]:
        """The evaluations in the agent's window, newest first."""
        ...

    def close(self) -> None: ...


def open_standings(
    spec: str | Path, config: ReputationConfig | None = None, *, create_parents: bool = True
) -> StandingStore:
    """Open the standings in ``spec`` (``parse_store_spec``): a SQLite file or a ``postgresql://`` URL.

    >>> open_standings("redis://cache/0")
    Traceback (most recent call last):
    ...
    otel_reliability.stores.spec.StoreSpecError: standings store 'redis://cache/0': scheme 'redis' is not supported; give a SQLite file path, sqlite:///PATH or a postgresql:// URL
    """
    config = config or ReputationConfig()
    store = parse_store_spec(spec, "standings")
    ready_folder(spec, store, "standings", create_parents)
    with opening(spec, "standings"):  # a file that is not SQLite, a server that does not answer: one line
        if store.kind == "postgres":
            from otel_reliability.reputation.stores.postgres import PostgresStandings

            return PostgresStandings(str(store.url), config)
        from otel_reliability.reputation.stores.sqlite import SQLiteStandings

        return SQLiteStandings(str(store.path), config)
