"""One reading of store specs for results and standings: what each spec opens, and the
error that names a spec no store can be opened from."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_reliability.reputation.stores import open_standings
from otel_reliability.stores import StoreSpec, StoreSpecError, parse_store_spec


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("otel-reliability.db", StoreSpec("sqlite", path=Path("otel-reliability.db"))),
        ("results", StoreSpec("sqlite", path=Path("results"))),
        (":memory:", StoreSpec("sqlite", path=Path(":memory:"))),
        ("out/results.JSONL", StoreSpec("jsonl", path=Path("out/results.JSONL"))),
        ("sqlite:///data/results.db", StoreSpec("sqlite", path=Path("data/results.db"))),
        ("sqlite:////var/lib/results.db", StoreSpec("sqlite", path=Path("/var/lib/results.db"))),
        ("sqlite:///results.jsonl", StoreSpec("sqlite", path=Path("results.jsonl"))),
        ("sqlite://", StoreSpec("sqlite", path=Path(":memory:"))),
        ("sqlite:///:memory:", StoreSpec("sqlite", path=Path(":memory:"))),
        ("postgresql://u@db:5432/rel", StoreSpec("postgres", url="postgresql://u@db:5432/rel")),
        ("POSTGRES://db/rel", StoreSpec("postgres", url="POSTGRES://db/rel")),
    ],
    ids=["file", "no-suffix", "memory", "jsonl-any-case", "sqlite-url-relative", "sqlite-url-absolute",
         "sqlite-url-says-sqlite-whatever-the-suffix", "sqlite-url-memory", "sqlite-url-memory-spelled-out",
         "postgresql", "postgres-any-case"],
)
def test_a_spec_names_one_store(spec, expected):
    assert parse_store_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "purpose", "message"),
    [
        ("s3://bucket/x", "results", "results store 's3://bucket/x': scheme 's3' is not supported"),
        ("redis://cache/0", "standings", "standings store 'redis://cache/0': scheme 'redis' is not supported"),
        ("results.jsonl", "standings", "standings store 'results.jsonl': JSON Lines holds results only"),
        ("sqlite://host/x.db", "results", "results store 'sqlite://host/x.db': a sqlite URL names no host"),
        ("", "results", "results store: empty"),
    ],
    ids=["unknown-scheme", "unknown-scheme-for-standings", "jsonl-for-standings", "sqlite-url-with-a-host", "empty"],
)
def test_a_spec_no_store_opens_is_an_error_naming_it(spec, purpose, message):
    with pytest.raises(StoreSpecError) as raised:
        parse_store_spec(spec, purpose)
    assert str(raised.value).startswith(message)


def test_standings_are_refused_a_json_lines_file_before_anything_is_written(tmp_path):
    path = tmp_path / "results.jsonl"
    with pytest.raises(StoreSpecError, match="JSON Lines holds results only"):
        open_standings(str(path))
    assert not path.exists()


def test_only_a_postgresql_store_is_shared():
    assert [parse_store_spec(s).shared for s in ("a.db", "a.jsonl", "sqlite:///a.db", "postgresql://h/d")] == [
        False, False, False, True,
    ]
