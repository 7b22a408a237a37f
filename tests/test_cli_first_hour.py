"""A new user's first hour with ``otel-reliability eval`` (issue 14 item 8): a folder with
other JSON in it, the table in an ordinary terminal, progress on long work only when a
person is watching.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys

import pytest

from otel_reliability.cli import main

from .corpus import CORPUS, trace_files

AGNO = CORPUS / "agno"
EVAL = [sys.executable, "-m", "otel_reliability.cli", "eval"]


def test_a_directory_skips_files_that_are_not_traces_naming_each(capsys):
    companions = sorted(p for p in AGNO.glob("*.json") if p not in trace_files("agno"))
    assert companions, "the agno corpus keeps Agno's verdicts beside its traces"
    code = main(["eval", str(AGNO), "--format", "json"])
    out, err = capsys.readouterr()
    main(["eval", *map(str, trace_files("agno")), "--format", "json"])
    alone, _ = capsys.readouterr()
    assert code in (0, 1)
    summary = json.loads(out)["summary"]
    skipped = summary.pop("skipped_files")
    assert summary == json.loads(alone)["summary"]
    assert skipped == {"damaged": [], "not_traces": [str(p) for p in companions]}
    for companion in companions:
        assert f"skipped, not a trace file: {companion}" in err


def test_an_explicit_file_that_is_not_a_trace_is_still_bad_input(capsys):
    verdict = AGNO / "agent_single_tool.verdict.json"
    code = main(["eval", str(verdict)])
    _, err = capsys.readouterr()
    assert code == 2 and str(verdict) in err and "skipped" not in err


def test_a_directory_of_nothing_but_other_json_finds_no_runs(tmp_path, capsys):
    (tmp_path / "package.json").write_text('{"name": "app"}')
    code = main(["eval", str(tmp_path), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 4 and json.loads(out)["summary"]["runs"] == 0  # no run: the gate fails (tests/test_cli_inputs.py)
    assert "package.json" in err and "no agent runs found" in err


def many_trace_files(tmp_path):
    for path in trace_files()[:24]:
        shutil.copy(path, tmp_path / f"{path.parent.name}-{path.name}")
    return tmp_path


def test_no_progress_bar_when_output_is_not_a_terminal(tmp_path):
    folder = many_trace_files(tmp_path)
    completed = subprocess.run([*EVAL, str(folder)], capture_output=True, text=True, check=False)
    assert completed.returncode in (0, 1), completed.stderr
    assert "Reading trace files" not in completed.stderr
    assert "\x1b[" not in completed.stdout + completed.stderr  # no escape codes in logs


def on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run a command with a terminal (80 columns) as its stdout and stderr: its exit code and all it wrote."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    process = subprocess.Popen(args, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command exited
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return process.wait(timeout=120), seen.decode("utf-8", "replace")


def test_a_progress_bar_when_a_person_watches(tmp_path):
    code, text = on_a_terminal([*EVAL, str(many_trace_files(tmp_path))])
    assert code in (0, 1)
    assert "Reading trace files" in text
    assert "Reliability Summary" in text


def bfcl_results(tmp_path, count: int):
    pytest.importorskip("bfcl_eval", reason="the dataset ships in bfcl-eval")
    from otel_reliability.bfcl.dataset import load_category

    path = tmp_path / "result" / "TestAgent" / "BFCL_v4_simple_python_result.json"
    path.parent.mkdir(parents=True)
    entries = load_category("simple_python")[:count]
    path.write_text("".join(json.dumps({"id": e.id, "result": "[]"}) + "\n" for e in entries), encoding="utf-8")
    return path


def test_bfcl_score_shows_progress_on_a_terminal_only(tmp_path):
    results = bfcl_results(tmp_path, 150)
    score = [sys.executable, "-m", "otel_reliability.cli", "bfcl", "score", str(results)]
    code, text = on_a_terminal(score)
    assert code == 1 and "Judging BFCL samples" in text and "BFCL score: TestAgent on simple_python" in text
    piped = subprocess.run(score, capture_output=True, text=True, check=False)
    assert piped.returncode == 1 and "Judging BFCL samples" not in piped.stdout + piped.stderr


def test_report_on_a_big_store_shows_progress_on_a_terminal_only(tmp_path, capsys):
    from otel_reliability.jsontext import encode_stored
    from otel_reliability.reports.cli import PROGRESS_FROM_BYTES
    from otel_reliability.results import RunResult

    main(["eval", str(AGNO / "agent_tool_error.json"), "--format", "json"])
    [record] = json.loads(capsys.readouterr().out)["results"]
    line = encode_stored(RunResult.from_json(record).to_record()) + "\n"
    store = tmp_path / "results.jsonl"
    store.write_text(line * (PROGRESS_FROM_BYTES // len(line) + 1), encoding="utf-8")
    report = [sys.executable, "-m", "otel_reliability.cli", "report", str(store), "--output", str(tmp_path / "r.md")]
    code, text = on_a_terminal(report)
    assert code == 1 and "Reading verdicts" in text
    piped = subprocess.run(report, capture_output=True, text=True, check=False)
    assert piped.returncode == 1 and "Reading verdicts" not in piped.stdout + piped.stderr


@pytest.mark.parametrize(
    "extra, code",
    [pytest.param([], 4, id="no-run-fails-the-gate"), pytest.param(["--allow-empty"], 0, id="allow-empty")],
)
def test_spans_in_which_no_agent_run_is_recognised_exit_4_unless_allowed(tmp_path, capsys, extra, code):
    # a trace whose spans mark no run and enclose no agent loop: an HTTP request and a database call
    trace = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "GET /orders",
         "startTimeUnixNano": "1000", "endTimeUnixNano": "9000", "kind": 2},
        {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "c7ad6b7169203332", "parentSpanId": "b7ad6b7169203331",
         "name": "SELECT orders", "startTimeUnixNano": "2000", "endTimeUnixNano": "3000", "kind": 3},
    ]}]}]}
    path = tmp_path / "app.json"
    path.write_text(json.dumps(trace))
    assert main(["eval", str(path), *extra]) == code
    _, err = capsys.readouterr()
    assert "no agent runs found" in err
    if code == 4:
        assert "2 span(s) read (2 other spans), no agent run recognised" in err
        assert f"otel-reliability inspect {path}" in err
