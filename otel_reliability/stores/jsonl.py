"""Results as JSON Lines: one ``RunResult.to_record()`` object per line, append-only.

Each ``add`` is one unbuffered write of a whole line, so lines from several threads or
processes appending to the same file do not interleave. ``query`` reads the file back;
a line that does not parse (a write cut short by a crash, a byte that is not UTF-8) is
skipped, and the lines around it are still read.

The file is never rewritten, so a verdict a re-judgement made void (``Superseded``: a run
that is no longer top-level) is marked by a line of its own,
``{"superseded": {"trace_id": …, "run_span_id": …, "at": …}}``, written after the verdicts
that void it. For each run the latest line wins, a result by its ``evaluated_at``, a mark by
its ``at``, and on a tie the later line; a run whose latest line is a mark is not returned.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterable

from otel_reliability.jsontext import encode_stored
from otel_reliability.results import RunResult
from otel_reliability.session_results import SESSION_KIND, SessionResult
from otel_reliability.stores.base import Superseded, normalise_trace_id


class JsonLinesStore:
    """Results appended to a ``.jsonl`` file.

    >>> import tempfile, pathlib
    >>> from otel_reliability.model import Verdict
    >>> store = JsonLinesStore(pathlib.Path(tempfile.mkdtemp()) / "results.jsonl")
    >>> store.add(RunResult(1, 2, "calc", "math", Verdict("PASSED", "math"), 5.0))
    >>> [r.agent for r in store.query(agent="calc")]
    ['calc']
    """

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._lock = threading.Lock()
        self._file = open(self._path, "ab", buffering=0)

    def add(self, result: RunResult) -> None:
        self.add_many([result])

    def add_many(self, results: Iterable[RunResult | SessionResult], superseded: Iterable[Superseded] = ()) -> None:
        # Results before marks: readers that tell a results file by its first line see a result.
        texts = [*(encode_stored(r.to_record()) for r in results), *(_mark(run) for run in superseded)]
        lines = b"".join(text.encode("utf-8") + b"\n" for text in texts)
        if not lines:
            return
        with self._lock:
            self._file.write(lines)

    def query(
        self,
        *,
        trace_id: int | str | None = None,
        agent: str | None = None,
        status: str | None = None,
        since: float | None = None,
        limit: int | None = 100,
        session_id: str | None = None,
        agent_version: str | None = None,
    ) -> list[RunResult | SessionResult]:
        trace = normalise_trace_id(trace_id)
        wanted_status = None if status is None else status.upper()
        latest: dict[tuple[int, int], Any] = {}
        for entry in self._read(session_id):
            key = (entry.trace_id, entry.run_span_id) if session_id is None else (0, 0)
            if key not in latest or _time(entry) >= _time(latest[key]):
                latest[key] = entry
        selected = [
            r
            for r in latest.values()
            if not isinstance(r, Superseded)
            and (trace is None or any(t == trace for t, _ in _runs_of(r)))
            and (agent is None or r.agent == agent)
            and (wanted_status is None or r.verdict.eval_status == wanted_status)
            and (since is None or r.evaluated_at >= since)
            and (agent_version is None or getattr(r, "agent_version", None) == agent_version)
        ]
        selected.reverse()  # among equal times the later run first, as SQLite's rowid order
        selected.sort(key=lambda r: r.evaluated_at, reverse=True)
        return selected if limit is None else selected[:limit]

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def _read(self, session_id: str | None) -> list[Any]:
        """Run results and superseded marks, or the results of one session."""
        entries: list[Any] = []
        with open(self._path, "rb") as lines:
            for line in lines:
                try:
                    data = json.loads(line.decode("utf-8"))
                    mark = data.get("superseded")
                    if session_id is None and mark is not None:
                        entries.append(Superseded(int(mark["trace_id"], 16), int(mark["run_span_id"], 16), float(mark["at"])))
                    elif session_id is None and data.get("kind") != SESSION_KIND:
                        entries.append(RunResult.from_json(data))
                    elif session_id is not None and data.get("session_id") == session_id:
                        entries.append(SessionResult.from_json(data))
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
        return entries


def _runs_of(result: RunResult | SessionResult) -> list[tuple[int, int]]:
    return result.runs if isinstance(result, SessionResult) else [(result.trace_id, result.run_span_id)]


def _mark(run: Superseded) -> str:
    trace_id, run_span_id = run.key()
    return json.dumps({"superseded": {"trace_id": trace_id, "run_span_id": run_span_id, "at": run.at}})


def _time(entry: RunResult | SessionResult | Superseded) -> float:
    return entry.at if isinstance(entry, Superseded) else entry.evaluated_at
