"""``bfcl-eval``'s single-turn data: questions, function docs and possible answers.

The data ship inside the ``bfcl_eval`` package (``bfcl_eval/data/BFCL_v4_<category>.json``
and ``possible_answer/`` beside them, one JSON object per line). ``data_dir()`` finds
them without importing ``bfcl_eval`` (whose import pulls every vendor SDK), or takes
a path: the ``data`` directory itself, the package directory, or a checkout holding
either.

Only the single-turn categories are read: the AST ones and the (ir)relevance ones.
Multi-turn, memory, web-search and format-sensitivity categories need the official
executor and are out of scope.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from otel_reliability.matcher.bfcl.judge import Case, language_of
from otel_reliability.textfile import NotUtf8Error, read_text

__all__ = ["CATEGORIES", "DatasetError", "Entry", "category_of", "data_dir", "load_category"]

CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
"""The categories ``load_category`` reads, in BFCL's own order."""

INSTALL_HINT = "pip install --no-deps bfcl-eval==2026.3.23"


class DatasetError(ValueError):
    """The dataset cannot be found or read; the message says where and why."""


@dataclass(slots=True, frozen=True)
class Entry:
    """One dataset entry with its possible answer (``None`` for (ir)relevance)."""

    id: str
    category: str
    question: list[Any]  # turns, each a list of {role, content} messages
    function: list[dict[str, Any]]
    possible_answer: list[dict[str, Any]] | None

    @property
    def language(self) -> str:
        return language_of(self.category)

    @property
    def prompt(self) -> str:
        """The user's request: the last user message of the first turn (what reports show)."""
        for turn in self.question[:1]:
            for message in reversed(turn):
                if isinstance(message, dict) and message.get("role") == "user":
                    return str(message.get("content", ""))
        return ""

    def case(self, candidate: Any, *, underscore_to_dot: bool = False) -> Case:
        """A judge case for a decoded ``candidate`` answering this entry."""
        return Case(self.id, self.category, self.language, self.function, self.possible_answer, candidate, underscore_to_dot)


def category_of(entry_id: str) -> str:
    """A dataset id's category: ``simple_python_3`` → ``simple_python``, ``live_simple_0-0-0`` → ``live_simple``.

    >>> category_of("live_parallel_multiple_4-2-1")
    'live_parallel_multiple'
    """
    return entry_id.split(":", 1)[0].rsplit("_", 1)[0]


def data_dir(path: str | Path | None = None) -> Path:
    """The directory holding ``BFCL_v*_<category>.json`` and ``possible_answer/``.

    With no ``path``, the data of the installed ``bfcl_eval`` package.
    """
    if path is None:
        spec = importlib.util.find_spec("bfcl_eval")
        if spec is None or not spec.submodule_search_locations:
            raise DatasetError(f"bfcl-eval is not installed ({INSTALL_HINT}), and no dataset path was given")
        path = Path(next(iter(spec.submodule_search_locations)))
    root = Path(path)
    for candidate in (root, root / "data", root / "bfcl_eval" / "data"):
        if (candidate / "possible_answer").is_dir():
            return candidate
    raise DatasetError(f"{root}: no BFCL dataset here (expected BFCL_v*_<category>.json files beside possible_answer/)")


def load_category(category: str, data: str | Path | None = None) -> list[Entry]:
    """Every entry of ``category``, in file order, joined with its possible answer."""
    if category not in CATEGORIES:
        raise DatasetError(f"unsupported category {category!r}; supported: {', '.join(CATEGORIES)}")
    root = data_dir(data)
    prompts = _read_lines(_category_file(root, category))
    if "relevance" in category:
        return [Entry(p["id"], category, p["question"], p["function"], None) for p in prompts]
    answers = {a["id"]: a["ground_truth"] for a in _read_lines(_category_file(root / "possible_answer", category))}
    entries = []
    for prompt in prompts:
        if prompt["id"] not in answers:
            raise DatasetError(f"{category}: entry {prompt['id']} has no possible answer")
        entries.append(Entry(prompt["id"], category, prompt["question"], prompt["function"], answers[prompt["id"]]))
    return entries


def load_entries(ids: Sequence[str], data: str | Path | None = None) -> dict[str, Entry]:
    """The entries with these ids, from whichever categories they name."""
    found: dict[str, Entry] = {}
    for category in dict.fromkeys(category_of(i) for i in ids):
        for entry in load_category(category, data):
            found[entry.id] = entry
    return found


def _category_file(folder: Path, category: str) -> Path:
    pattern = re.compile(rf"BFCL_v(\d+)_{re.escape(category)}\.json")
    versions = {int(m.group(1)): p for p in folder.glob("BFCL_v*.json") if (m := pattern.fullmatch(p.name))}
    if not versions:
        raise DatasetError(f"{folder}: no BFCL_v*_{category}.json")
    return versions[max(versions)]  # the newest version when several are present


def _read_lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = read_text(path)
    except NotUtf8Error as exc:
        raise DatasetError(str(exc)) from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON: {exc.msg}") from exc
    return entries
