"""``otel-reliability compare BASELINE CANDIDATE``: two sets of verdicts, what changed, and the gate.

The acceptance case is the demo's own agents: one store from ``demo``, one from ``demo
--degrade`` (the calculator calls ``add`` instead of ``multiply``, the divider divides by
zero twice). Compared, they show the pass rate falling from 3/4 to 1/4, name the two newly
failing runs with their reasons, and exit 1; a store compared with itself exits 0 with no
changes. The other tables pin the gate, the sources, the pairing of runs, the trajectory
and provenance fields, and the bad inputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_reliability.cli import main
from otel_reliability.model import Verdict
from otel_reliability.results import RunResult, results_document
from otel_reliability.stores import open_store

from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 (a fixture)

CALCULATOR, DIVIDER = "calculator multiplies", "divider recovers from a bad divisor"
SUPPORT, ROUTER = "support agent only looks things up", "router delegates the lookup"
CALCULATOR_REASONS = ["unexpected: add", "missing: multiply"]
DIVIDER_REASONS = ["policy: max_errors 1 exceeded: 2 tool calls errored (divide, divide)"]


@pytest.fixture(scope="module")
def demo_stores(tmp_path_factory) -> tuple[Path, Path]:
    """The demo's verdicts, as it is and degraded, each in its own SQLite store."""
    folder = tmp_path_factory.mktemp("demo")
    baseline, degraded = folder / "baseline.db", folder / "degraded.db"
    assert main(["demo", "--store", str(baseline)]) == 0
    assert main(["demo", "--store", str(degraded), "--degrade"]) == 0
    return baseline, degraded


def compare(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["compare", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def compare_json(capsys, *args: str) -> tuple[int, dict]:
    code, out, err = compare(capsys, *args, "--format", "json")
    # nothing on stderr but, on exit 1, the one line that says why (the JSON stays on stdout alone)
    assert err == "" if code != 1 else err.startswith("otel-reliability: exit 1: ") and err.count("\n") == 1, err
    return code, json.loads(out)


def test_the_degraded_demo_drops_the_pass_rate_names_the_newly_failing_runs_and_exits_1(demo_stores, capsys):
    baseline, degraded = demo_stores
    code, document = compare_json(capsys, baseline, degraded, "--max-drop", "0.05")
    assert code == 1 and document["regressed"] is True
    overall = document["overall"]
    assert (overall["baseline"]["passed"], overall["baseline"]["runs"]) == (3, 4)
    assert (overall["candidate"]["passed"], overall["candidate"]["runs"]) == (1, 4)
    assert overall["pass_rate_change"] == pytest.approx(-0.5)
    by_expectation = {g["expectation"]: g for g in document["expectations"]}
    assert {name for name, g in by_expectation.items() if g["regressed"]} == {CALCULATOR, DIVIDER}
    assert by_expectation[SUPPORT]["pass_rate_change"] == 0.0  # fails on purpose on both sides
    assert [(c["expectation"], c["agent"], c["reasons"]) for c in document["newly_failing"]] == [
        (CALCULATOR, "calculator", CALCULATOR_REASONS),
        (DIVIDER, "divider", DIVIDER_REASONS),
    ]
    for change in document["newly_failing"]:
        assert (change["baseline"]["eval_status"], change["candidate"]["eval_status"]) == ("PASSED", "FAILED")
        assert change["baseline"]["trace_id"] != change["candidate"]["trace_id"]
    assert document["newly_passing"] == document["only_in_baseline"] == document["only_in_candidate"] == []
    by_agent = {g["agent"]: g["candidate"]["pass_rate"] for g in document["agents"]}
    assert by_agent == {"calculator": 0.0, "divider": 0.0, "support": 0.0, "router": 1.0}


@pytest.mark.parametrize(
    "fmt, shows",
    [
        ("table", ["75.0% → 25.0%", "Newly failing (2)", "    unexpected: add", "    missing: multiply",
                   "Regressed: the pass rate of all runs fell 50.0 points (allowed: 5.0)."]),
        ("markdown", ["| **overall** ⚠ regressed | 4 → 4 | 75.0% → 25.0% | -50.0 | 0.88 → 0.57 |",
                      "## Newly failing (2)", "| unexpected: add; missing: multiply |",
                      f"| {CALCULATOR} ⚠ regressed | 1 → 1 | 100.0% → 0.0% | -100.0 |"]),
    ],
)
def test_every_format_shows_the_drop_and_the_newly_failing_runs_with_their_reasons(demo_stores, capsys, fmt, shows):
    code, out, err = compare(capsys, *demo_stores, "--max-drop", "0.05", "--format", fmt)
    assert (code, err) == (1, "otel-reliability: exit 1: pass rate fell by more than --max-drop 0.05: overall 75% → 25%; "
                              "'calculator multiplies' 100% → 0%; 'divider recovers from a bad divisor' 100% → 0% "
                              "(2 run(s) newly failing)\n")
    for text in shows:
        assert text in out
    assert DIVIDER_REASONS[0] in out


@pytest.mark.parametrize("fmt, says", [("table", "No changes: the same runs"), ("markdown", "- No changes: the same runs"),
                                       ("json", '"changed": false')])
def test_a_store_compared_with_itself_exits_0_with_no_changes(demo_stores, capsys, fmt, says):
    baseline, _ = demo_stores
    code, out, err = compare(capsys, baseline, baseline, "--format", fmt)
    assert (code, err) == (0, "")
    assert says in out
    assert "Newly failing" not in out and "Regressed" not in out and '"regressed": true' not in out


def test_output_writes_the_comparison_to_a_file_and_keeps_the_exit_code(demo_stores, capsys, tmp_path):
    output = tmp_path / "comparison.md"
    code, out, _ = compare(capsys, *demo_stores, "--format", "markdown", "--output", output)
    assert (code, out) == (1, "")
    assert "## Newly failing (2)" in output.read_text(encoding="utf-8")


def run(number: int, expectation: str, passed: bool, *, agent: str = "bot", source: str | None = None,
        record: dict | None = None) -> dict:
    """A result object as ``eval --format json`` writes it, with extra keys merged in."""
    verdict = Verdict("PASSED", expectation) if passed else Verdict(
        "FAILED", expectation, missing_tool_calls=["lookup"], score=0.0)
    result = RunResult(number, 1, agent, expectation, verdict, 0.0, number * 1_000, number * 1_000 + 500, source)
    return {**result.to_json(), **(record or {})}


def eval_document(path: Path, runs: list[dict]) -> Path:
    document = {"results": runs, "summary": results_document([])["summary"]}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# Baseline: a 2/2, b 2/2 (4/4). Candidate: a 1/2 (one newly failing), b 2/2 → overall 3/4.
# The overall drop is 0.25, expectation a's is 0.5: the gate looks at both.
GATE_BASELINE = [run(1, "a", True), run(2, "a", True), run(3, "b", True), run(4, "b", True)]
GATE_CANDIDATE = [run(11, "a", True), run(12, "a", False), run(13, "b", True), run(14, "b", True)]


@pytest.mark.parametrize(
    "max_drop, code, regressed",
    [
        ("0", 1, ["overall", "a"]),  # the default lets no fall through
        ("0.25", 1, ["a"]),  # overall fell exactly 0.25: not more than allowed
        ("0.49", 1, ["a"]),
        ("0.5", 0, []),
        ("1", 0, []),
    ],
)
def test_the_gate_exits_1_when_overall_or_an_expectation_falls_more_than_max_drop(tmp_path, capsys, max_drop, code, regressed):
    before = eval_document(tmp_path / "before.json", GATE_BASELINE)
    after = eval_document(tmp_path / "after.json", GATE_CANDIDATE)
    got, document = compare_json(capsys, before, after, "--max-drop", max_drop)
    flagged = ["overall"] * document["overall"]["regressed"] + [g["expectation"] for g in document["expectations"] if g["regressed"]]
    assert (got, flagged) == (code, regressed)
    assert [c["case"] for c in document["newly_failing"]] == ["run 2"]


def test_a_rise_in_pass_rate_passes_the_gate_and_lists_the_newly_passing_runs(tmp_path, capsys):
    before = eval_document(tmp_path / "before.json", GATE_CANDIDATE)
    after = eval_document(tmp_path / "after.json", GATE_BASELINE)
    code, document = compare_json(capsys, before, after)
    assert code == 0 and document["overall"]["pass_rate_change"] == pytest.approx(0.25)
    assert [(c["expectation"], c["case"], c["reasons"]) for c in document["newly_passing"]] == [("a", "run 2", [])]


def test_a_run_no_longer_evaluated_is_listed_with_why_beside_the_fall_it_causes(tmp_path, capsys):
    """Content capture switched off: the pass rate falls with no run failing; the output says why."""
    blind = Verdict("NOT_EVALUATED", "a", unevaluated_checks=["arguments of lookup not captured: enable content capture"])
    unjudged = RunResult(12, 1, "bot", "a", blind, 0.0, 12_000, 12_500).to_json()
    before = eval_document(tmp_path / "before.json", GATE_BASELINE)
    after = eval_document(tmp_path / "after.json", [*GATE_BASELINE[:1], unjudged, *GATE_BASELINE[2:]])
    code, document = compare_json(capsys, before, after)
    assert code == 1 and document["newly_failing"] == []
    assert [(c["case"], c["candidate"]["eval_status"], c["reasons"]) for c in document["newly_not_evaluated"]] == [
        ("run 2", "NOT_EVALUATED", ["not evaluated: arguments of lookup not captured: enable content capture"])
    ]
    _, out, _ = compare(capsys, before, after)
    assert "Newly not evaluated (1)" in out and "    not evaluated: arguments of lookup not captured" in out


def write_source(kind: str, results: list[dict], folder: Path, request) -> str:
    """The verdicts ``results`` in a new source of ``kind`` under ``folder``; what ``compare`` is given for it."""
    folder.mkdir()
    if kind.startswith("eval-json"):  # eval-json-named-db: told apart by content, not by name
        return str(eval_document(folder / ("eval.db" if kind.endswith("db") else "eval.json"), results))
    if kind == "postgres":
        spec = fresh_schema_url(request.getfixturevalue("postgres_server"))
    else:
        spec = {
            "sqlite": str(folder / "results.db"),
            "sqlite-url": f"sqlite:///{folder / 'url.db'}",
            "jsonl": str(folder / "results.jsonl"),
            "sqlite-named-txt": f"sqlite:///{folder / 'results.txt'}",  # told apart by content, not by name
        }[kind]
    store = open_store(spec)
    store.add_many(RunResult.from_json(item) for item in results)
    store.close()
    return str(folder / "results.txt") if kind == "sqlite-named-txt" else spec


@pytest.mark.parametrize(
    "kind", ["sqlite", "sqlite-url", "sqlite-named-txt", "jsonl", "postgres", "eval-json", "eval-json-named-db"]
)
def test_every_kind_of_source_gives_the_same_comparison(kind, tmp_path, capsys, request):
    before = write_source(kind, GATE_BASELINE, tmp_path / "before", request)
    after = write_source(kind, GATE_CANDIDATE, tmp_path / "after", request)
    code, document = compare_json(capsys, before, after)
    assert code == 1
    assert (document["overall"]["baseline"]["pass_rate"], document["overall"]["candidate"]["pass_rate"]) == (1.0, 0.75)
    assert [(c["expectation"], c["case"], c["reasons"]) for c in document["newly_failing"]] == [("a", "run 2", ["missing: lookup"])]


def test_runs_are_paired_by_trace_file_when_both_sides_name_the_same_files(tmp_path, capsys):
    """Case b is missing from the candidate: paired by position, c would be compared with b."""
    before = eval_document(tmp_path / "before.json", [
        run(1, "e", True, source="base/a.json"), run(2, "e", True, source="base/b.json"), run(3, "e", True, source="base/c.json")])
    after = eval_document(tmp_path / "after.json", [
        run(11, "e", True, source="new/a.json"), run(13, "e", False, source="new/c.json")])
    code, document = compare_json(capsys, before, after)
    assert document["pairing"] == "file"
    assert [c["case"] for c in document["newly_failing"]] == ["c.json"]
    assert [c["case"] for c in document["only_in_baseline"]] == ["b.json"]
    assert document["only_in_candidate"] == []


@pytest.mark.parametrize(
    "baseline_sources, candidate_sources, pairing, case",
    [
        (["x/1.json", "x/2.json"], ["y/1.json", "y/2.json"], "file", "2.json"),
        (["x/1.json", "x/2.json"], ["y/7.json", "y/8.json"], "position", "run 2"),  # no file name in common
        (["x/1.json", "x/2.json"], [None, None], "position", "run 2"),  # a store's runs name no file
        (["x/all.jsonl", "x/all.jsonl"], ["y/all.jsonl", "y/all.jsonl"], "file", "all.jsonl run 2"),  # numbered within it
    ],
)
def test_runs_are_paired_by_file_only_when_every_run_names_one_and_the_sides_share_names(
    tmp_path, capsys, baseline_sources, candidate_sources, pairing, case
):
    before = eval_document(tmp_path / "before.json", [run(n, "e", True, source=s) for n, s in enumerate(baseline_sources, 1)])
    after = eval_document(tmp_path / "after.json", [run(n, "e", n == 11, source=s) for n, s in enumerate(candidate_sources, 11)])
    _, document = compare_json(capsys, before, after)
    assert document["pairing"] == pairing
    assert [c["case"] for c in document["newly_failing"]] == [case]


def evaluated(digest: str, f1: float | None) -> dict:
    """The ``trajectory`` and ``evaluator`` keys results carry from the partial-credit branch on."""
    trajectory = None if f1 is None else {"precision": f1, "recall": f1, "f1": f1, "lcs_f1": None}
    return {"trajectory": trajectory, "evaluator": {"name": "otel-reliability", "version": "0.1.0", "expectation_digest": digest}}


@pytest.mark.parametrize(
    "before_keys, after_keys, f1_cells, changed",
    [
        ([evaluated("d1", 1.0), evaluated("d1", 0.5)], [evaluated("d1", 0.5), evaluated("d1", 0.5)], "0.75 → 0.50", False),
        ([evaluated("d1", 1.0), evaluated("d1", None)], [evaluated("d1", None), evaluated("d1", None)], "1.00 → —", False),
        ([evaluated("d1", 1.0), evaluated("d1", 1.0)], [evaluated("d2", 1.0), evaluated("d2", 1.0)], "1.00 → 1.00", True),
        ([{}, {}], [evaluated("d2", 1.0), evaluated("d2", 1.0)], "— → 1.00", False),  # written before the keys existed
    ],
)
def test_trajectory_f1_and_a_changed_expectation_are_read_from_the_results_when_present(
    tmp_path, capsys, before_keys, after_keys, f1_cells, changed
):
    before = eval_document(tmp_path / "before.json", [run(n, "e", True, record=k) for n, k in enumerate(before_keys, 1)])
    after = eval_document(tmp_path / "after.json", [run(n, "e", True, record=k) for n, k in enumerate(after_keys, 11)])
    code, out, _ = compare(capsys, before, after, "--format", "markdown")
    assert code == 0
    assert f"| e | 2 → 2 | 100.0% → 100.0% | 0.0 | 1.00 → 1.00 | {f1_cells} |" in out
    assert ("Expectation 'e' differs between the sides (digest d1 → d2)" in out) is changed
    _, document = compare_json(capsys, before, after)
    assert document["expectations"][0]["expectation_changed"] is changed


@pytest.fixture
def empty_store(tmp_path) -> Path:
    path = tmp_path / "empty.db"
    open_store(path).close()
    return path


@pytest.mark.parametrize(
    "make_baseline, extra, message",
    [
        (lambda d: d / "missing.db", [], "BASELINE {tmp}/missing.db: no such file"),
        (lambda d: d, [], "a directory; give a results store"),
        (lambda d: _write(d / "empty.json", ""), [], "empty.json: empty; give a results store"),
        (lambda d: _write(d / "blank.jsonl", "\n  \n"), [], "blank.jsonl: empty; give a results store"),
        (lambda d: _write(d / "oops.json", "{oops"), [], "oops.json: not JSON"),
        (lambda d: _write(d / "runs.json", '{"runs": 1}'), [], "runs.json: expected {\"results\": [...]}"),
        (lambda d: _write(d / "bad.json", '{"results": [{"trace_id": "zz"}]}'), [], "results[0] is not a verdict"),
        (lambda d: _write(d / "notes.txt", "just some notes"), [], "notes.txt: not JSON"),
        (lambda d: _write_bytes(d / "blob.bin", b"\xff\xfe\x00binary"), [], "blob.bin: not UTF-8: byte 0xff at offset 0 (line 1)"),
        (lambda d: "s3://bucket/results", [], "scheme 's3' is not supported"),
        ("empty_store", [], "empty.db: holds no verdicts; nothing to compare"),
        (lambda d: d / "good.json", ["--max-drop", "1.5"], "--max-drop is a pass-rate fall between 0 and 1"),
        (lambda d: d / "good.json", ["--max-drop", "-0.1"], "--max-drop is a pass-rate fall between 0 and 1"),
        (lambda d: d / "good.json", ["--output", "/no-such-dir/out.md"], "/no-such-dir/out.md: cannot write"),
    ],
    ids=["missing", "directory", "empty-file", "blank-file", "not-json", "no-results", "not-a-verdict", "text", "binary", "scheme",
         "empty-store", "max-drop-above-1", "max-drop-negative", "output-unwritable"],
)
def test_bad_input_exits_2_naming_the_side_and_what_was_wrong(tmp_path, capsys, request, make_baseline, extra, message):
    good = eval_document(tmp_path / "good.json", GATE_BASELINE)
    baseline = request.getfixturevalue(make_baseline) if isinstance(make_baseline, str) else make_baseline(tmp_path)
    code, out, err = compare(capsys, baseline, good, *extra)
    assert (code, out) == (2, "")
    assert err.startswith("otel-reliability: ") and message.replace("{tmp}", str(tmp_path)) in err
    assert "Traceback" not in err


def test_a_bad_candidate_is_named_as_the_candidate(tmp_path, capsys):
    good = eval_document(tmp_path / "good.json", GATE_BASELINE)
    code, _, err = compare(capsys, good, tmp_path / "nothing.json")
    assert code == 2 and f"CANDIDATE {tmp_path}/nothing.json: no such file" in err


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_report_with_a_baseline_adds_the_comparison_as_a_sixth_part(demo_stores, tmp_path, capsys):
    baseline, degraded = demo_stores
    page = tmp_path / "report.html"
    assert main(["report", str(degraded), "--baseline", str(baseline), "--output", str(page)]) == 1  # the report's own code
    html = page.read_text(encoding="utf-8")
    assert html.index('<section id="recommendations">') < html.index('<section id="comparison"><h2>6. Compared with the baseline</h2>')
    assert '<tr class="regressed overall"><td>overall</td><td class="num">4 → 4</td><td class="num">75.0% → 25.0%</td>' in html
    assert "<td>unexpected: add<br>missing: multiply</td>" in html and "://" not in html  # still self-contained
    assert main(["report", str(degraded), "--baseline", str(baseline)]) == 1
    markdown = capsys.readouterr().out
    assert "## 6. Compared with the baseline" in markdown and "### Newly failing (2)" in markdown
