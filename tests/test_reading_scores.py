"""The cold table: how the generic reader alone (every profile removed) and the reader with its
profiles read every framework of the corpus, printed, and held to recorded floors.

``tests/fixtures/reading_floors.json`` records, per corpus folder, the scenarios read right
cold and warm, and the wrong ones warm: a change that makes the generic reader (or a
profile) read a framework worse fails here, naming the folder; one that makes it better
says so, and the floors are raised with ``python -m tests.test_reading_scores --write``.
Right, honest and wrong are defined in ``tests/reading.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .corpus import ADAPTED, LIFTING
from .reading import HONEST, RIGHT, WRONG, read_folder, tally

FLOORS = Path(__file__).parent / "fixtures" / "reading_floors.json"
FOLDERS = sorted(ADAPTED + LIFTING)


def scores() -> dict[str, dict[str, dict[str, int]]]:
    return {folder: {"cold": tally(read_folder(folder, cold=True)), "warm": tally(read_folder(folder))} for folder in FOLDERS}


def table(measured: dict[str, dict[str, dict[str, int]]]) -> str:
    rows = ["| folder | cold right / honest / wrong | with profiles right / honest / wrong |", "| --- | --- | --- |"]
    for folder, reading in measured.items():
        cold, warm = reading["cold"], reading["warm"]
        rows.append(
            f"| {folder} | {cold[RIGHT]} / {cold[HONEST]} / {cold[WRONG]} | {warm[RIGHT]} / {warm[HONEST]} / {warm[WRONG]} |"
        )
    return "\n".join(rows)


@pytest.fixture(scope="module")
def measured():
    return scores()


def test_the_cold_table_is_printed_and_no_framework_reads_worse_than_recorded(measured, capsys):
    with capsys.disabled():
        print("\n" + table(measured))
    floors = json.loads(FLOORS.read_text())
    assert sorted(floors) == FOLDERS, "every corpus folder has recorded floors (--write records them)"
    worse = []
    for folder, reading in measured.items():
        floor = floors[folder]
        if reading["cold"][RIGHT] < floor["cold_right"]:
            worse.append(f"{folder}: cold right {reading['cold'][RIGHT]} < {floor['cold_right']}")
        if reading["warm"][RIGHT] < floor["warm_right"]:
            worse.append(f"{folder}: right with profiles {reading['warm'][RIGHT]} < {floor['warm_right']}")
        if reading["warm"][WRONG] > floor["warm_wrong"]:
            worse.append(f"{folder}: wrong with profiles {reading['warm'][WRONG]} > {floor['warm_wrong']}")
    assert not worse


def _write() -> None:
    measured = scores()
    floors = {
        folder: {"cold_right": r["cold"][RIGHT], "warm_right": r["warm"][RIGHT], "warm_wrong": r["warm"][WRONG]}
        for folder, r in measured.items()
    }
    FLOORS.write_text(json.dumps(floors, indent=1, sort_keys=True) + "\n")
    print(table(measured))


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
