"""The cold table: how the reader reads every framework of the corpus cold (the conventions
alone: every profile and every framework module removed, ``adapters.knowledge.removed``) and
with its framework knowledge, printed, and held to recorded floors.

``tests/fixtures/reading_floors.json`` records, per corpus folder and over all of them, the
scenarios read right and wrong, cold and warm: a change that makes any folder read worse
(fewer right, more confidently wrong) fails here, naming the folder; one that makes it better
says so, and the floors are raised with ``python -m tests.test_reading_scores --write``.
Right, honest, wrong and open are defined in ``tests/reading.py``.

Issue 31's targets over all scenarios together are asserted apart
(``test_the_issue_31_target_holds_over_every_scenario``); a target not reached yet is marked
``NOT_REACHED_YET`` (a strict xfail), so reaching it fails until its mark is taken off.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .corpus import ADAPTED, LIFTING, LIMITS, SDK_CAPTURES
from .reading import HONEST, OPEN, RIGHT, WRONG, read_folder, tally

FLOORS = Path(__file__).parent / "fixtures" / "reading_floors.json"
FOLDERS = sorted(ADAPTED + LIFTING)
TOTAL = "all folders"
READINGS = ("cold", "warm")
MARKS = (RIGHT, HONEST, WRONG, OPEN)

# Issue 31, point 6: (reading, mark, bound, "at least" or "at most"), as shares of all scenarios.
TARGETS = {
    "cold wrong <= 3 %": ("cold", WRONG, 0.03, "at most"),
    "cold right >= 75 %": ("cold", RIGHT, 0.75, "at least"),
    "warm right >= 97 %": ("warm", RIGHT, 0.97, "at least"),
    "warm wrong <= 1 %": ("warm", WRONG, 0.01, "at most"),
}
# The targets the reader does not reach yet. Measured over the 671 scenarios (right / honest /
# wrong), cold then warm, as each step landed:
#   when this was written                                   443 / 34 / 194   554 / 31 / 86
#   witnesses open what they do not agree on                535 / 24 / 112   611 / 19 / 41  (cold right >= 75 %)
#   cold doubt; framework files; LlamaIndex, LangGraph and
#   Spring AI convention files                              626 / 21 / 24    635 / 20 / 16
#   Spring AI results not JSON, OpenLIT-CrewAI unspanned    628 / 21 / 22    637 / 19 / 15
#   a call no execution records in its turn's request order 632 / 19 / 20    641 / 17 / 13  (cold wrong <= 3 %)
#   a run's transcript; a call inside a tool's body a run   635 / 20 / 16    646 / 16 / 9
#   other failed spans leave fail_on unjudged; output checks 636 / 22 / 13   646 / 16 / 9
#   Haystack's generator messages; agno's OpenLLMetry run   641 / 17 / 13    651 / 11 / 9   (warm right >= 97 %)
#   a model call that stopped for tools with nothing run    641 / 18 / 12    651 / 12 / 8
#   a run that shows no request: fail_on refused unjudged  641 / 22 / 8     651 / 14 / 6   (warm wrong <= 1 %)
# Take a target out once it holds: its strict xfail then fails, saying so. Every target holds now.
NOT_REACHED_YET: set[str] = set()


def scores() -> dict[str, dict[str, dict[str, int]]]:
    """Per folder and over all of them (``TOTAL``), cold and warm: scenarios right, honest and
    wrong, and the attempts left open."""
    measured = {folder: {"cold": tally(read_folder(folder, cold=True)), "warm": tally(read_folder(folder))} for folder in FOLDERS}
    measured[TOTAL] = {
        reading: {mark: sum(measured[f][reading][mark] for f in FOLDERS) for mark in MARKS} for reading in READINGS
    }
    return measured


def table(measured: dict[str, dict[str, dict[str, int]]]) -> str:
    rows = [
        "| folder | cold right / honest / wrong | cold open | with knowledge right / honest / wrong | open |",
        "| --- | --- | --- | --- | --- |",
    ]
    for folder, reading in measured.items():
        cold, warm = reading["cold"], reading["warm"]
        rows.append(
            f"| {folder} | {cold[RIGHT]} / {cold[HONEST]} / {cold[WRONG]} | {cold[OPEN]} "
            f"| {warm[RIGHT]} / {warm[HONEST]} / {warm[WRONG]} | {warm[OPEN]} |"
        )
    return "\n".join(rows)


def floors_of(measured: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """What is recorded of a measurement: right is a floor, wrong a ceiling, cold and warm."""
    return {
        folder: {f"{reading}_{mark}": r[reading][mark] for reading in READINGS for mark in (RIGHT, WRONG)}
        for folder, r in measured.items()
    }


def worse_than(measured: dict[str, dict[str, dict[str, int]]], floors: dict[str, dict[str, int]]) -> list[str]:
    """Each folder (and the total) that reads fewer right or more wrong than recorded, named."""
    worse = []
    for folder, now in floors_of(measured).items():
        floor = floors[folder]
        for reading in READINGS:
            right, wrong = f"{reading}_{RIGHT}", f"{reading}_{WRONG}"
            if now[right] < floor[right]:
                worse.append(f"{folder}: {reading} right {now[right]} < {floor[right]}")
            if now[wrong] > floor[wrong]:
                worse.append(f"{folder}: {reading} wrong {now[wrong]} > {floor[wrong]}")
    return worse


@pytest.fixture(scope="module")
def measured():
    return scores()


def test_the_cold_table_is_printed_and_no_framework_reads_worse_than_recorded(measured, capsys):
    with capsys.disabled():
        print("\n" + table(measured))
    floors = json.loads(FLOORS.read_text())
    assert sorted(floors) == sorted([*FOLDERS, TOTAL]), "every corpus folder has recorded floors (--write records them)"
    assert worse_than(measured, floors) == []


def test_a_folder_that_reads_worse_is_named():
    # The check itself: one more wrong cold, one fewer right warm, each named with its folder.
    measured = {"x": {"cold": {RIGHT: 5, HONEST: 0, WRONG: 2, OPEN: 0}, "warm": {RIGHT: 6, HONEST: 0, WRONG: 1, OPEN: 0}}}
    floors = {"x": {"cold_right": 5, "cold_wrong": 1, "warm_right": 7, "warm_wrong": 1}}
    assert worse_than(measured, floors) == ["x: cold wrong 2 > 1", "x: warm right 6 < 7"]


def test_every_scenario_of_the_sdk_captures_reads_right_or_is_a_limit_with_its_reason():
    # Issue 32's acceptance: what is not right is in LIMITS, with its reason, and held there to
    # what its spans record (tests/test_corpus_truth.py, AS_RECORDED)
    not_right = [f"{folder}/{r.scenario}" for folder in SDK_CAPTURES for r in read_folder(folder) if r.mark != RIGHT]
    assert [s for s in not_right if not LIMITS.get(s)] == []


NOT_REACHED = pytest.mark.xfail(strict=True, reason="issue 31 target not reached yet (NOT_REACHED_YET)")
TARGET_CASES = [pytest.param(name, id=name, marks=[NOT_REACHED] if name in NOT_REACHED_YET else []) for name in TARGETS]


@pytest.mark.parametrize("target", TARGET_CASES)
def test_the_issue_31_target_holds_over_every_scenario(measured, target):
    reading, mark, bound, direction = TARGETS[target]
    counts = measured[TOTAL][reading]
    share = counts[mark] / (counts[RIGHT] + counts[HONEST] + counts[WRONG])
    assert share >= bound if direction == "at least" else share <= bound, f"{reading} {mark}: {share:.1%}"


def _write() -> None:
    measured = scores()
    FLOORS.write_text(json.dumps(floors_of(measured), indent=1, sort_keys=True) + "\n")
    print(table(measured))


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
