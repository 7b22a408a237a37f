"""Score BFCL result files against the dataset: per-sample verdicts and per-category accuracy.

A result file is what BFCL's generation step writes (``BFCL_v4_<category>_result.json``):
one JSON object per line, ``{"id": …, "result": …}`` (a JSON array of them is read
too). Each result is decoded (``decode``), joined with its dataset entry by id and
judged. Only the entries present in the result files are scored, like
``bfcl evaluate --partial-eval``; a result whose id the dataset lacks is an error.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from otel_reliability.bfcl.dataset import CATEGORIES, DatasetError, Entry, category_of, load_entries
from otel_reliability.bfcl.decode import DecodeError, decode
from otel_reliability.matcher.bfcl.judge import Compat, judge
from otel_reliability.matcher.bfcl.verdicts import DECODER_FAILED, Judgement
from otel_reliability.textfile import NotUtf8Error, read_text

__all__ = ["BfclScore", "CategoryScore", "SampleResult", "judge_entry", "read_results", "score_files", "score_results"]


@dataclass(slots=True)
class SampleResult:
    """One judged sample: what was asked, what the agent called, what was expected, the verdict."""

    id: str
    category: str
    question: str
    prediction: Any  # the decoded calls, or the raw output when it could not be decoded
    expected: Any  # the possible answer; None for (ir)relevance
    valid: bool
    error_type: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "category": self.category, "question": self.question, "prediction": self.prediction,
            "expected": self.expected, "valid": self.valid, "error_type": self.error_type, "error": self.error,
        }


@dataclass(slots=True)
class CategoryScore:
    category: str
    correct: int
    total: int
    error_types: Counter[str] = field(default_factory=Counter)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


@dataclass(slots=True)
class BfclScore:
    """Every judged sample of one agent (model), in category then dataset order."""

    agent: str
    compat: str
    samples: list[SampleResult]
    generated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def correct(self) -> int:
        return sum(s.valid for s in self.samples)

    @property
    def total(self) -> int:
        return len(self.samples)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def categories(self) -> list[CategoryScore]:
        """One score per category present, in BFCL's category order."""
        scores: dict[str, CategoryScore] = {}
        for sample in self.samples:
            score = scores.setdefault(sample.category, CategoryScore(sample.category, 0, 0))
            score.total += 1
            if sample.valid:
                score.correct += 1
            else:
                score.error_types[sample.error_type or "unknown"] += 1
        return sorted(scores.values(), key=lambda s: _category_rank(s.category))

    def to_json(self) -> dict[str, Any]:
        """``bfcl score --scores`` output: the summary, each category, each sample."""
        return {
            "agent": self.agent,
            "compat": self.compat,
            "generated_at": self.generated_at.isoformat(),
            "summary": {"correct": self.correct, "total": self.total, "accuracy": self.accuracy},
            "categories": [
                {"category": c.category, "correct": c.correct, "total": c.total, "accuracy": c.accuracy,
                 "error_types": dict(c.error_types.most_common())}
                for c in self.categories
            ],
            "samples": [s.to_json() for s in self.samples],
        }


def _category_rank(category: str) -> tuple[int, str]:
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def judge_entry(entry: Entry, raw: Any, *, compat: Compat = "official", underscore_to_dot: bool = False, decoded: bool = False) -> SampleResult:
    """Judge one model output for ``entry``; ``decoded=True`` when ``raw`` is already a list of calls."""
    prediction = raw
    judgement: Judgement | None = None
    if not decoded:
        try:
            prediction = decode(raw, entry.language)
        except DecodeError as exc:
            if "relevance" not in entry.category:  # for (ir)relevance an undecodable answer is "no call"
                judgement = Judgement(False, DECODER_FAILED, f"cannot decode the output: {exc}")
    if judgement is None:
        judgement = judge(entry.case(prediction, underscore_to_dot=underscore_to_dot), compat)
    return SampleResult(
        entry.id, entry.category, entry.prompt, prediction, entry.possible_answer,
        judgement.valid, judgement.error_type, judgement.error,
    )


def score_results(
    results: Iterable[Mapping[str, Any]],
    *,
    data: str | Path | None = None,
    entries: Mapping[str, Entry] | None = None,
    compat: Compat = "official",
    underscore_to_dot: bool = False,
    agent: str = "agent",
    progress: Callable[[int], None] | None = None,
) -> BfclScore:
    """Judge result objects (``{"id", "result"}``) against the dataset (``entries`` or read from
    ``data``); ``progress(1)`` is told as each is judged."""
    results = list(results)
    for number, item in enumerate(results, start=1):
        if not isinstance(item, Mapping) or "id" not in item or "result" not in item:
            raise DatasetError(f"result {number}: expected an object with 'id' and 'result'")
    if entries is None:
        entries = load_entries([str(r["id"]) for r in results], data)
    samples = []
    for item in results:
        entry = entries.get(str(item["id"]))
        if entry is None:
            raise DatasetError(f"result id {item['id']!r} is not in the dataset")
        samples.append(judge_entry(entry, item["result"], compat=compat, underscore_to_dot=underscore_to_dot))
        if progress is not None:
            progress(1)
    order = {entry_id: position for position, entry_id in enumerate(entries)}
    samples.sort(key=lambda s: (_category_rank(s.category), order.get(s.id, 0)))
    return BfclScore(agent, compat, samples)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """A result file: JSON Lines (BFCL's own format) or one JSON array."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except NotUtf8Error as exc:
        raise DatasetError(str(exc)) from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: not JSON: {exc.msg}") from exc
        return list(data)
    results = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                results.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: not JSON: {exc.msg}") from exc
    return results


def score_files(
    paths: Sequence[str | Path],
    *,
    data: str | Path | None = None,
    compat: Compat = "official",
    underscore_to_dot: bool = False,
    agent: str | None = None,
) -> BfclScore:
    """Score result files; the agent defaults to BFCL's model directory (``result/<model>/…``)."""
    results = [item for path in paths for item in read_results(path)]
    return score_results(
        results, data=data, compat=compat, underscore_to_dot=underscore_to_dot, agent=agent or agent_of(paths)
    )


def agent_of(paths: Sequence[str | Path]) -> str:
    """The agent result files belong to: BFCL's model directory (``result/<model>/…``), else the
    first file's name without ``_result``.

    >>> agent_of(["runs/result/gpt-x/BFCL_v4_simple_python_result.json"]), agent_of([])
    ('gpt-x', 'agent')
    """
    return _model_name(Path(paths[0])) if paths else "agent"


def _model_name(path: Path) -> str:
    for parent in path.resolve().parents:
        if parent.parent.name == "result":
            return parent.name
    return path.stem.removesuffix("_result")


def categories_in(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The categories result objects belong to, by their ids."""
    return sorted({category_of(str(r["id"])) for r in results}, key=_category_rank)
