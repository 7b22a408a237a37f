"""The 120 labelled cases of ``fixtures/bfcl/public_sample.jsonl`` through ``bfcl judge``:
``--compat official`` must reproduce every official verdict and error type."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from otel_reliability.bfcl.cli import main

SAMPLE = Path(__file__).parent / "fixtures" / "bfcl" / "public_sample.jsonl"
LABELS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def judged(args: list[str], capsys) -> tuple[int, list[dict]]:
    code = main(["bfcl", "judge", *args])
    out, _ = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()]


def test_public_sample_agrees_fully_in_official_mode(capsys):
    code, verdicts = judged([str(SAMPLE), "--compat", "official"], capsys)
    expected = [{"id": c["id"], "valid": c["official_valid"], "error_type": c["official_error_type"]} for c in LABELS]
    assert len(LABELS) == 120
    assert verdicts == expected
    assert code == 1  # half the sample is invalid


def test_official_is_the_default_compat_mode(capsys):
    assert judged([str(SAMPLE)], capsys) == judged([str(SAMPLE), "--compat", "official"], capsys)


def test_strict_mode_changes_only_documented_quirk_variants(capsys):
    _, official = judged([str(SAMPLE)], capsys)
    _, strict = judged([str(SAMPLE), "--compat", "strict"], capsys)
    changed = Counter(label["variant"].removeprefix("one_call:") for label, a, b in zip(LABELS, official, strict) if a != b)
    quirks = {"empty_string_for_optional", "list_element_dropped", "malformed_item_params_string", "empty_dict_then_call",
              "malformed_item_two_keys", "string_upper", "canonical_encoded"}
    assert changed and set(changed) <= quirks


def test_judge_reads_standard_input_when_given_a_dash():
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:3]
    done = subprocess.run(
        [sys.executable, "-m", "otel_reliability.bfcl.cli", "bfcl", "judge", "-"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, check=False,
    )
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [json.loads(line)["id"] for line in lines]


@pytest.mark.usefixtures("official_checker_installed")
def test_the_fixture_labels_are_what_the_installed_official_checker_says():
    from otel_reliability.matcher.bfcl.judge import Case
    from otel_reliability.bfcl.official import official_judge

    check = official_judge()
    for label in LABELS:
        verdict = check(Case.from_json(label))
        assert (verdict.valid, verdict.error_type) == (label["official_valid"], label["official_error_type"]), label["id"]


@pytest.fixture
def official_checker_installed():
    pytest.importorskip("bfcl_eval", reason="the official checker: pip install --no-deps bfcl-eval==2026.3.23 (see otel_reliability/bfcl/official.py)")
