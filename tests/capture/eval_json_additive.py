"""Whether ``eval --format json`` on the six adapted frameworks' fixtures is unchanged but for
added keys: snapshot one checkout, snapshot another, compare.

``compare`` strips the keys named in ``ADDED_RESULT_KEYS`` / ``ADDED_SUMMARY_KEYS`` from the
later snapshot, re-encodes it as ``eval`` does, and requires the earlier bytes and exit code.

    cd <main checkout> && <its python> <this file> snapshot /tmp/before
    cd <branch checkout> && .venv/bin/python tests/capture/eval_json_additive.py snapshot /tmp/after
    .venv/bin/python tests/capture/eval_json_additive.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the checkout being snapshotted, not the installed package

from otel_reliability.cli import main  # noqa: E402
from otel_reliability.jsontext import encode_document  # noqa: E402
from tests.corpus import adapted_files  # noqa: E402

ADDED_RESULT_KEYS = ("unevaluated_checks",)
ADDED_SUMMARY_KEYS = ("not_evaluated",)


def snapshot(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for path in adapted_files():
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            code = main(["eval", str(path), "--format", "json"])
        stem = f"{path.parent.name}__{path.stem}"
        (out / f"{stem}.json").write_text(stdout.getvalue())
        (out / f"{stem}.rc").write_text(str(code))


def compare(before: Path, after: Path) -> int:
    differ = []
    files = sorted(before.glob("*.json"))
    for old in files:
        document = json.loads((after / old.name).read_text())
        for result in document["results"]:
            for key in ADDED_RESULT_KEYS:
                result.pop(key, None)
        for key in ADDED_SUMMARY_KEYS:
            document["summary"].pop(key, None)
        same_code = (before / f"{old.stem}.rc").read_text() == (after / f"{old.stem}.rc").read_text()
        if encode_document(document) + "\n" != old.read_text() or not same_code:
            differ.append(old.stem)
    print(f"{len(files)} files compared, {len(differ)} differ" + "".join(f"\n  {name}" for name in differ))
    return 1 if differ or not files else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["snapshot"]:
        snapshot(Path(sys.argv[2]))
    else:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
