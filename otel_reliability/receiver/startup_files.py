"""What a receiver's start creates on disk, so that a start that fails removes it — and only it.

Before the store and the intake log are opened, ``NewPaths`` notes which of the paths the
start may create do not exist yet: the store file and SQLite's companions, the intake log's
folder, and the outermost missing folder above them (``--mkdir``). ``remove`` deletes those
that exist now. A path that was there before the start is never touched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..stores.spec import MEMORY, parse_store_spec
from .config import ReceiverConfig

SQLITE_COMPANIONS = ("", "-wal", "-shm", "-journal")


class NewPaths:
    """The paths a start of ``config`` would create that do not exist yet.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> config = ReceiverConfig(store=str(folder / "new" / "v.db"), mkdir=True)
    >>> created = NewPaths(config)
    >>> (folder / "new").mkdir(); (folder / "new" / "v.db").write_text("")
    0
    >>> created.remove(); sorted(p.name for p in folder.iterdir())
    []
    """

    def __init__(self, config: ReceiverConfig) -> None:
        candidates: list[Path | None] = []
        spec = parse_store_spec(config.store, "results")
        if spec.path is not None and str(spec.path) != MEMORY:
            candidates += [spec.path.with_name(spec.path.name + suffix) for suffix in SQLITE_COMPANIONS]
            candidates.append(_outermost_missing(spec.path.parent))
        intake = config.intake_directory()
        if intake is not None:
            candidates += [intake, _outermost_missing(intake.parent)]
        self.paths = [path for path in dict.fromkeys(candidates) if path is not None and not path.exists()]

    def remove(self) -> None:
        """Delete what the start created (in the order noted: files, then their folders)."""
        for path in self.paths:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _outermost_missing(folder: Path) -> Path | None:
    """The highest folder of ``folder``'s chain that does not exist (None: it exists)."""
    missing = None
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing = candidate
    return missing
