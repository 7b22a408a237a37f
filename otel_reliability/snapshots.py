"""Expectation snapshots of a test's runs: ``reliability.assert_matches_snapshot()`` in a test
that uses the pytest plugin's ``reliability`` fixture, refreshed by ``pytest --reliability-update``.

A test's snapshot is an expectation file beside it,
``<test folder>/__reliability__/<test module>/<test name>.yaml``, written from the runs the
test traced as ``otel-reliability expect`` writes one (no ``max_duration_ms``: a snapshot must
not fail on a slow machine). Without the flag the runs are judged against it, and a failure
lists expected against got, field by field.

>>> snapshot_path(Path("tests/test_agent.py"), "test_weather[paris]").as_posix()
'tests/__reliability__/test_agent/test_weather-paris.yaml'
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .emitters.expectation_yaml import expectation_yaml
from .engine import Engine, Judgement, judge_all_at_end
from .engine.observed import observed_runs
from .expectation_writer import write_expectations
from .expectations import Expectation, ExpectationError, load_expectations
from .model import SpanRecord
from .results import rfc3339
from .version import VERSION

SNAPSHOT_FOLDER = "__reliability__"


def snapshot_path(test_file: Path, test_name: str) -> Path:
    """Where a test's snapshot lives: beside the test file, one file per test (parameters included)."""
    name = re.sub(r"[^\w.-]+", "-", test_name).strip("-")
    return test_file.parent / SNAPSHOT_FOLDER / test_file.stem / f"{name}.yaml"


@dataclass(slots=True)
class Snapshot:
    """One test's snapshot: where, whether this session refreshes it, and the command that does."""

    path: Path
    update: bool
    test_id: str
    written: bool = False  # refreshed in this session (its content changed or it was missing)

    @property
    def command(self) -> str:
        return f"pytest --reliability-update '{self.test_id}'"

    def write(self, records: Sequence[SpanRecord]) -> int:
        """Write the snapshot from the runs in ``records`` (how many): left as it is when it
        would say the same, and unwritten when they hold no run."""
        runs = [run for run, _ in observed_runs(records)]
        if not runs:
            return 0
        written = write_expectations(runs, duration=False)
        if self.path.is_file():
            try:
                if _digests(load_expectations([self.path])) == _digests([w.expectation for w in written]):
                    return len(runs)
            except ExpectationError:
                pass  # unreadable: rewritten below
        header = [
            f"Snapshot of {self.test_id}, written by pytest --reliability-update on "
            f"{rfc3339(time.time_ns() // 10**9 * 10**9)} with otel-reliability {VERSION}.",
            f"Refresh it with: {self.command}",
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(expectation_yaml(written, header), encoding="utf-8")
        self.written = True
        return len(runs)

    def judge(self, records: Sequence[SpanRecord]) -> list[tuple[Judgement, Expectation | None]]:
        """The runs judged against the snapshot, each with the snapshot's expectation that judged
        it (None: its agent has none). ``AssertionError`` when there is no snapshot to judge by."""
        if not self.path.is_file():
            raise AssertionError(f"otel-reliability: no snapshot {self.path} for this test: create it with `{self.command}`")
        try:
            expectations = load_expectations([self.path])
        except ExpectationError as exc:
            raise AssertionError(f"otel-reliability: {exc}; rewrite it with `{self.command}`") from None
        judgements, _ = judge_all_at_end(Engine(expectations), records)
        by_name = {e.name: e for e in expectations}
        return [(j, by_name.get(j.result.expectation)) for j in judgements]


def _digests(expectations: Sequence[Expectation]) -> list[str]:
    return [e.digest for e in expectations]
