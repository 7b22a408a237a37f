"""Writing a command's ``--output``: one place that turns a path that cannot be written into
a clear message (exit 2 for bad input, SPEC §10) instead of a traceback.

>>> try:
...     write_output("/no-such-dir/report.md", "# report")
... except OutputError as exc:
...     print(exc)
/no-such-dir/report.md: cannot write: No such file or directory
"""

from __future__ import annotations

from pathlib import Path


class OutputError(ValueError):
    """An ``--output`` path that cannot be written; the message starts with the path."""


def write_output(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``; ``OutputError`` naming the path when that fails."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
