"""``bfcl score``: result files in BFCL's format → per-category accuracy, scores JSON, reports."""

from __future__ import annotations

import json
import random

import pytest

from otel_reliability.bfcl.cases import valid_answer
from otel_reliability.bfcl.cli import main
from otel_reliability.bfcl.dataset import load_category
from otel_reliability.bfcl.score import score_results

pytest.importorskip("bfcl_eval", reason="the dataset ships in bfcl-eval: pip install --no-deps bfcl-eval==2026.3.23")


def python_text(calls: list) -> str:
    """Calls as a prompting model writes them: ``[f(a=1), g(b='x')]``."""
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for c in calls for n, a in c.items()) + "]"


def write_results(folder, category: str, results: list) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"BFCL_v4_{category}_result.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    return str(path)


@pytest.fixture
def result_files(tmp_path):
    """An agent's results in three categories: 5/5, 3/4 and 1/2 right, in three output shapes."""
    rng = random.Random(7)
    folder = tmp_path / "result" / "TestAgent"
    simple = [{"id": e.id, "result": python_text(valid_answer(e, rng))} for e in load_category("simple_python")[:5]]
    parallel = []
    for index, entry in enumerate(load_category("parallel")[:4]):
        calls = valid_answer(entry, rng, pick="random")
        if index == 3:
            calls = calls[:1]
        parallel.append({"id": entry.id, "result": [{n: json.dumps(a)} for c in calls for n, a in c.items()]})
    irrelevance = [{"id": "irrelevance_0", "result": "I cannot answer with these functions."},
                   {"id": "irrelevance_1", "result": "[get_weather(city='Paris')]"}]
    return [write_results(folder, "simple_python", simple), write_results(folder, "parallel", parallel),
            write_results(folder, "irrelevance", irrelevance)]


def table_cells(line: str) -> list[str]:
    """The cells of one row of a rich table as printed."""
    return [cell.strip() for cell in line.strip().strip("│┃").split("│")] if "│" in line else []


def test_score_prints_accuracy_per_category_and_writes_every_output(result_files, tmp_path, capsys):
    markdown, html, scores = tmp_path / "report.md", tmp_path / "report.html", tmp_path / "scores.json"
    code = main(["bfcl", "score", *result_files, "--report", str(markdown), "--report", str(html), "--scores", str(scores)])
    out, _ = capsys.readouterr()
    assert code == 1
    assert "BFCL score: TestAgent on simple_python, parallel, irrelevance (compat official)" in " ".join(out.split())
    table = [cells for cells in map(table_cells, out.splitlines()) if len(cells) == 3 and cells[0] != "Category"]
    assert table == [["simple_python", "100.00%", "5/5"], ["parallel", "75.00%", "3/4"],
                     ["irrelevance", "50.00%", "1/2"], ["overall", "81.82%", "9/11"]]
    assert "# BFCL evaluation report: TestAgent on simple_python, parallel, irrelevance" in markdown.read_text()
    document = json.loads(scores.read_text())
    assert document["agent"] == "TestAgent"
    assert document["summary"] == {"correct": 9, "total": 11, "accuracy": 9 / 11}
    assert document["categories"][1]["error_types"] == {"parallel_function_checker_no_order:wrong_count": 1}
    assert "## 5. Recommendations" in markdown.read_text() and 'id="recommendations"' in html.read_text()


def test_score_exits_zero_when_every_sample_is_correct(result_files, capsys):
    assert main(["bfcl", "score", result_files[0]]) == 0


def test_an_undecodable_answer_fails_as_the_official_decoder_failure(tmp_path):
    entry = load_category("simple_python")[0]
    score = score_results([{"id": entry.id, "result": "The area is 25."}], entries={entry.id: entry})
    [sample] = score.samples
    assert (sample.valid, sample.error_type) == (False, "ast_decoder:decoder_failed")
    assert sample.question.startswith("Find the area of a triangle")


def test_underscore_to_dot_accepts_underscored_names(tmp_path, capsys):
    entry = load_category("simple_python")[1]  # math.factorial
    path = write_results(tmp_path, "simple_python", [{"id": entry.id, "result": [{"math_factorial": '{"number": 5}'}]}])
    assert main(["bfcl", "score", path]) == 1
    assert main(["bfcl", "score", path, "--underscore-to-dot"]) == 0


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": "simple_python_99999", "result": "[]"}'], "'simple_python_99999' is not in the dataset"),
        (['{"id": "simple_python_0"}'], "expected an object with 'id' and 'result'"),
        (["not json"], "not JSON"),
    ],
)
def test_bad_result_files_exit_2_with_the_reason(lines, message, tmp_path, capsys):
    path = tmp_path / "BFCL_v4_simple_python_result.json"
    path.write_text("\n".join(lines) + "\n")
    assert main(["bfcl", "score", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_a_dataset_path_that_holds_no_dataset_exits_2(result_files, tmp_path, capsys):
    assert main(["bfcl", "score", result_files[0], "--data", str(tmp_path)]) == 2
    assert "no BFCL dataset here" in capsys.readouterr().err


def test_judge_writes_to_the_output_file_and_stops_at_a_bad_line_with_its_number(tmp_path, capsys):
    good = {"id": "a", "category": "irrelevance", "function": [], "possible_answer": None, "candidate": []}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(good) + "\n\n" + json.dumps(good) + "\n")
    output = tmp_path / "out.jsonl"
    assert main(["bfcl", "judge", str(source), "--output", str(output)]) == 0
    assert [json.loads(line) for line in output.read_text().splitlines()] == [{"id": "a", "valid": True, "error_type": None}] * 2
    source.write_text(json.dumps(good) + "\n{oops\n")
    assert main(["bfcl", "judge", str(source)]) == 2
    assert f"{source}:2: not JSON" in capsys.readouterr().err


def test_judge_names_a_missing_input_file(tmp_path, capsys):
    assert main(["bfcl", "judge", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
