"""Expectations replaced on a running engine, all or nothing: the one rule behind the
receiver's ``SIGHUP`` and ``POST /api/v1/reload`` and the span processor's
``reload_expectations``.

Every file is read and validated before anything changes: one bad file raises its
``ExpectationError`` and the expectations in force stay. A good set replaces the old one
at once, between traces: a trace being judged keeps the set it started with
(``Pipeline`` takes one for the whole trace), so no trace is judged half with the old
set and half with the new. Each result names its expectation's digest
(``evaluator.expectation_digest``); ``Reloaded`` lists the new digests, for the log and
the answer.

What a reload changes: the expectation rules, run and session scope (a session
expectation judges the sessions whose turns are kept from then on). What it does not:
every other setting, and the expectations reputation learned at start.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..expectations import Expectation, load_expectations
from .pipeline import Pipeline

RELOADED, REFUSED = "reloaded", "refused"  # the outcomes a reload is counted by


@dataclass(frozen=True, slots=True)
class Reloaded:
    """The set now in force: each expectation's name and digest, in rule order.

    >>> Reloaded(("a.yaml",), (("calc", "1f2e"),)).describe()
    '1 expectation(s) from a.yaml: calc 1f2e'
    """

    files: tuple[str, ...]
    digests: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        listed = ", ".join(f"{name} {digest}" for name, digest in self.digests) or "none (the default judges every run)"
        return f"{len(self.digests)} expectation(s) from {', '.join(self.files) or 'no file'}: {listed}"

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": RELOADED,
            "files": list(self.files),
            "expectations": [{"name": name, "digest": digest} for name, digest in self.digests],
        }


def reload_expectations(pipeline: Pipeline, sources: Sequence[Expectation | str | Path]) -> Reloaded:
    """Read and validate the files among ``sources`` (``Expectation`` objects are taken as
    they are, first, as ``Engine`` takes them), then put the set in force on ``pipeline``;
    ``ExpectationError`` (nothing changed) when a file cannot be used."""
    files = [s for s in sources if not isinstance(s, Expectation)]
    loaded = [s for s in sources if isinstance(s, Expectation)] + load_expectations(files)  # raises first
    replace_expectations(pipeline, loaded)
    return Reloaded(tuple(map(str, files)), tuple((e.name, e.digest) for e in loaded))


def replace_expectations(pipeline: Pipeline, expectations: Sequence[Expectation]) -> None:
    """Swap the rules under the pipeline's lock. The engine's list is replaced, never
    changed in place: a trace being judged holds the list it took."""
    with pipeline.lock:
        pipeline.engine.expectations = list(expectations)
        pipeline.sessions.expectations = [e for e in expectations if e.scope == "session"]
        pipeline.engine.use.replace(expectations)  # unmatched is told of the set in force
