"""Reading a set of verdicts: a results store or an ``eval --format json`` document.

One reader for ``report`` and ``compare``. A source is what the store opener accepts
(a file path, ``sqlite:///…``, ``postgresql://…``) or a JSON document from ``eval
--format json`` / ``GET /api/v1/results``. A file is told apart by what it holds, not by
its name: SQLite's header, one JSON document (``{"results": [...]}``), or JSON Lines of
stored results. Whatever is wrong comes back as one ``ResultSourceError`` that names the
source and what was expected.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from otel_reliability.results import RunResult
from otel_reliability.textfile import NotUtf8Error, read_text
from otel_reliability.stores import ResultStore, StoreSpecError, open_store, parse_store_spec

__all__ = ["LoadedResult", "ResultSourceError", "load_pulled", "load_result_set", "source_label"]

SQLITE_HEADER = b"SQLite format 3\x00"
EXPECTED = "a results store (SQLite, JSON Lines, postgresql://) or a JSON document from 'eval --format json'"


class ResultSourceError(ValueError):
    """A source that holds no verdicts this project can read; the message starts with the source."""


@dataclass(frozen=True, slots=True)
class LoadedResult:
    """One verdict, and the JSON object it was read from (or that a store keeps for it):
    keys a ``RunResult`` may not model, such as ``trajectory`` and ``evaluator``, are read there.

    >>> from otel_reliability.model import Verdict
    >>> result = RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 0.0)
    >>> LoadedResult(result, result.to_record()).record["eval_status"]
    'PASSED'
    """

    result: RunResult
    record: Mapping[str, Any]


def load_result_set(source: str | Path, agent_version: str | None = None) -> list[LoadedResult]:
    """Every verdict in ``source``, oldest first (a document's in its order); only those of
    that agent version when ``agent_version`` is given (a store selects them by its column).

    >>> load_result_set("no-such-results.db")
    Traceback (most recent call last):
    ...
    otel_reliability.reports.inputs.ResultSourceError: no-such-results.db: no such file
    """
    try:
        spec = parse_store_spec(source)
    except StoreSpecError as exc:
        raise ResultSourceError(str(exc)) from None
    if spec.path is None:  # a PostgreSQL URL
        return _from_store(source, lambda: open_store(str(spec)), agent_version)
    path = spec.path
    if path.is_dir():
        raise ResultSourceError(f"{path}: a directory; give {EXPECTED}")
    if not path.is_file():
        raise ResultSourceError(f"{path}: no such file")
    with open(path, "rb") as file:
        head = file.read(len(SQLITE_HEADER))
    if head == SQLITE_HEADER:
        return _from_store(source, lambda: _open_sqlite(path), agent_version)
    try:
        text = read_text(path)  # a file that is not UTF-8 is refused whole: one line naming the byte
    except NotUtf8Error as exc:
        raise ResultSourceError(str(exc)) from None
    first_line = next((line for line in text.splitlines() if line.strip()), None)
    if first_line is None:
        raise ResultSourceError(f"{path}: empty; give {EXPECTED}")
    if _is_record(_json_or_none(first_line)):  # a JSON Lines store: read by the store
        return _from_store(source, lambda: _open_jsonl(path), agent_version)
    loaded = _from_document(path, text)
    return loaded if agent_version is None else [r for r in loaded if r.result.agent_version == agent_version]


def load_pulled(source: str, judge: Callable[[str], list[RunResult]]) -> list[LoadedResult]:
    """The verdicts ``judge`` gives the traces of a backend URL (``backend_args.judged_pull``),
    as a result set; its errors come back as a ``ResultSourceError``."""
    try:
        results = judge(source)
    except ValueError as exc:  # BackendError, ExpectationError, a bad --since
        message = str(exc)
        raise ResultSourceError(message if message.startswith(source) else f"{source}: {message}") from None
    return [LoadedResult(result, result.to_json()) for result in results]


def source_label(source: str) -> str:
    """A source as the output may name it: a URL's password left out.

    >>> source_label("postgresql://ci:secret@db:5432/results"), source_label("baseline.db")
    ('postgresql://ci:***@db:5432/results', 'baseline.db')
    """
    if "://" not in source:
        return source
    parts = urlsplit(source)
    if parts.password is None:
        return source
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()


def _from_document(path: Path, text: str) -> list[LoadedResult]:
    """The results of one JSON document: ``{"results": [...]}``, or the bare list."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultSourceError(f"{path}: not JSON: {exc.msg} (line {exc.lineno}); give {EXPECTED}") from None
    items = document.get("results") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise ResultSourceError(f"{path}: expected {{\"results\": [...]}} as 'eval --format json' writes it")
    loaded = []
    for index, item in enumerate(items):
        try:
            loaded.append(LoadedResult(RunResult.from_json(item), item))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResultSourceError(f"{path}: results[{index}] is not a verdict: {type(exc).__name__} {exc}") from None
    return loaded


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _is_record(value: Any) -> bool:
    """Whether ``value`` is one stored result (a JSON Lines store's line), not a document."""
    return isinstance(value, dict) and "trace_id" in value and "eval_status" in value


def _open_sqlite(path: Path) -> ResultStore:
    from otel_reliability.stores.sqlite import SQLiteStore

    return SQLiteStore(str(path))


def _open_jsonl(path: Path) -> ResultStore:
    from otel_reliability.stores.jsonl import JsonLinesStore

    return JsonLinesStore(str(path))


def _from_store(source: str | Path, opener: Callable[[], ResultStore], agent_version: str | None = None) -> list[LoadedResult]:
    try:
        store = opener()
        try:
            # run results only: a store gives a session's result only when asked for that session
            found = store.query(limit=None, agent_version=agent_version)
            results = [r for r in reversed(found) if isinstance(r, RunResult)]
        finally:
            store.close()
    except OSError as exc:  # a PostgreSQL server that does not answer, a file that cannot be read
        raise ResultSourceError(f"{source}: cannot open the results store: {exc}") from None
    except ImportError as exc:  # psycopg, for a postgresql:// store
        raise ResultSourceError(f"{source}: {exc}") from None
    except (sqlite3.DatabaseError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ResultSourceError(f"{source}: not a results store: {type(exc).__name__} {exc}") from None
    return [LoadedResult(result, result.to_record()) for result in results]
