"""What a CI gate can tell apart (issue 33): a file that is not UTF-8 is bad input (exit 2,
one line naming the file and the byte) whatever command reads it; an input that yields no
agent run fails the gate (exit 4, ``--allow-empty``: 0); a damaged trace file in a
directory is bad input once the rest are judged (``--skip-bad``: a warning)."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import sys

import pytest

from otel_reliability.cli import main

from .corpus import CORPUS

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"  # one run, passes
TOOL_ERROR = CORPUS / "agno" / "agent_tool_error.json"  # one run

LATIN1 = "café".encode("latin-1")  # b"caf\xe9": the 0xe9 is not UTF-8


def _trace_with_a_latin1_byte() -> bytes:
    """The single-tool trace with its agent's name spelt in Latin-1, past the first line."""
    data = SINGLE_TOOL.read_bytes()
    return data.replace(b'"calculator"', b'"calculator ' + LATIN1 + b'"', 1)


def _offset(data: bytes) -> tuple[int, int]:
    """Where the first byte that is not UTF-8 is: (offset, line)."""
    offset = data.index(b"\xe9")
    return offset, data.count(b"\n", 0, offset) + 1


def _store_line(agent: str, run_span_id: int = 2) -> bytes:
    from otel_reliability.model import Verdict
    from otel_reliability.results import RunResult

    return json.dumps(RunResult(1, run_span_id, agent, "calc", Verdict("PASSED", "calc"), 1.0).to_record()).encode() + b"\n"


def _store_with_a_latin1_line() -> bytes:
    """A JSON Lines results store whose 400th line holds a Latin-1 byte (past any read-ahead buffer)."""
    good = _store_line("calc")
    return good * 399 + good.replace(b'"calc"', b'"' + LATIN1 + b'"', 1) + good


def test_a_json_lines_store_keeps_the_lines_around_one_that_is_not_utf8(tmp_path):
    from otel_reliability.stores.jsonl import JsonLinesStore

    path = tmp_path / "results.jsonl"
    bad = _store_line("cafe", 3).replace(b"cafe", LATIN1)
    path.write_bytes(_store_line("before", 2) + bad + _store_line("after", 4))
    store = JsonLinesStore(path)
    try:
        found = store.query(limit=None)
    finally:
        store.close()
    assert sorted(r.agent for r in found) == ["after", "before"], "the bad line skipped, never raised"


# Each input kind: the file's name, its bytes, and the command that reads it ({} is the file).
NOT_UTF8 = {
    "eval --expectations (YAML)": ("e.yaml", b"expectations:\n  - name: " + LATIN1 + b"\n", ["eval", str(SINGLE_TOOL), "--expectations", "{}"]),
    "eval --expectations (TOML)": ("e.toml", b'expectations = [{name = "' + LATIN1 + b'"}]\n', ["eval", str(SINGLE_TOOL), "--expectations", "{}"]),
    "eval --expectations (JSON)": ("e.json", b'{"expectations": [{"name": "' + LATIN1 + b'"}]}', ["eval", str(SINGLE_TOOL), "--expectations", "{}"]),
    "eval --conventions": ("mine.yaml", b"name: " + LATIN1 + b"\n", ["eval", str(SINGLE_TOOL), "--conventions", "{}"]),
    "eval of an OTLP/JSON trace file": ("trace.json", _trace_with_a_latin1_byte(), ["eval", "{}"]),
    "eval of a JSON Lines trace file": ("trace.jsonl", b'{"resourceSpans": []}\n{"name": "' + LATIN1 + b'"}\n', ["eval", "{}"]),
    "eval of a gzip trace file": ("trace.json.gz", _trace_with_a_latin1_byte(), ["eval", "{}"]),
    "inspect of a trace file": ("trace.json", _trace_with_a_latin1_byte(), ["inspect", "{}"]),
    "report of an eval JSON document": ("eval.json", b'{"results": [{"agent": "' + LATIN1 + b'"}]}', ["report", "{}"]),
    "report of a JSON Lines store, the bad byte far in": ("results.jsonl", _store_with_a_latin1_line(), ["report", "{}"]),
    "compare of a JSON Lines store": ("results.jsonl", _store_with_a_latin1_line(), ["compare", "{}", "{}"]),
    "serve --config": ("serve.yaml", b"# " + LATIN1 + b"\nport: 4318\n", ["serve", "--config", "{}"]),
    "reputation --config": ("reputation.yaml", b"window: 10\n# " + LATIN1 + b"\n", ["reputation", "--config", "{}"]),
    "bfcl judge FILE": ("cases.jsonl", b'{"id": "' + LATIN1 + b'"}\n', ["bfcl", "judge", "{}"]),
    "bfcl score RESULT_FILE": ("BFCL_v4_simple_python_result.json", b'{"id": "simple_python_0", "result": "' + LATIN1 + b'"}\n', ["bfcl", "score", "{}"]),
}


@pytest.mark.parametrize(("name", "content", "argv"), NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_a_file_that_is_not_utf8_is_one_line_naming_file_and_byte_and_exit_2(tmp_path, capsys, name, content, argv):
    path = tmp_path / name
    path.write_bytes(gzip.compress(content) if name.endswith(".gz") else content)
    offset, line = _offset(content)

    code = main([arg.replace("{}", str(path)) for arg in argv])

    out, err = capsys.readouterr()
    assert code == 2
    assert err.endswith(f" {path}: not UTF-8: byte 0xe9 at offset {offset} (line {line})\n"), err
    assert err.count("\n") == 1 and err.startswith("otel-reliability"), err


def test_bfcl_judge_reading_standard_input_that_is_not_utf8_says_so(monkeypatch, capsys):
    content = b'{"id": "ok"}\n{"id": "' + LATIN1 + b'"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(content)))

    code = main(["bfcl", "judge"])

    assert code == 2
    assert capsys.readouterr().err == "otel-reliability: standard input: not UTF-8: byte 0xe9 at offset 24 (line 2)\n"


def test_a_bfcl_dataset_file_that_is_not_utf8_is_named(tmp_path, capsys):
    data = tmp_path / "data"
    (data / "possible_answer").mkdir(parents=True)
    prompts = data / "BFCL_v4_simple_python.json"
    prompts.write_bytes(b'{"id": "simple_python_0", "question": "' + LATIN1 + b'"}\n')
    (data / "possible_answer" / prompts.name).write_text('{"id": "simple_python_0", "ground_truth": []}\n')
    results = tmp_path / "BFCL_v4_simple_python_result.json"
    results.write_text('{"id": "simple_python_0", "result": "[]"}\n')

    code = main(["bfcl", "score", str(results), "--data", str(data)])

    assert code == 2
    assert f"otel-reliability: {prompts}: not UTF-8: byte 0xe9 at offset 42 (line 1)" in capsys.readouterr().err


def test_a_byte_order_mark_is_not_an_error(tmp_path, capsys):
    rules = tmp_path / "e.json"
    rules.write_bytes(b"\xef\xbb\xbf" + json.dumps({"expectations": [{"name": "calc", "expected_tool_calls": ["multiply"]}]}).encode())
    trace = tmp_path / "trace.json"
    trace.write_bytes(b"\xef\xbb\xbf" + SINGLE_TOOL.read_bytes())

    code = main(["eval", str(trace), "--expectations", str(rules), "--format", "json"])

    [result] = json.loads(capsys.readouterr().out)["results"]
    assert (code, result["expectation"], result["eval_status"]) == (0, "calc", "PASSED")


# -- inputs that yield no agent run ---------------------------------------------------------

HTTP_ONLY = {"resourceSpans": [{"scopeSpans": [{"spans": [
    {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "GET /orders",
     "startTimeUnixNano": "1000", "endTimeUnixNano": "9000", "kind": 2},
]}]}]}

# An input with no agent run in it: the files to write, and what stderr says of it.
NO_RUN = {
    "an export request with no spans": ({"trace.json": '{"resourceSpans": []}'}, "no span read from"),
    "an empty JSON array": ({"trace.json": "[]"}, "no span read from"),
    "JSON Lines of empty requests": ({"trace.jsonl": '{"resourceSpans": []}\n{"resourceSpans": [{"scopeSpans": []}]}\n'}, "no span read from"),
    "a directory of other JSON only": ({"package.json": '{"name": "app"}'}, "no span read from"),
    "spans of no agent run": ({"trace.json": json.dumps(HTTP_ONLY)}, "1 span(s) read (1 other spans), no agent run recognised"),
}


@pytest.mark.parametrize(("files", "said"), NO_RUN.values(), ids=NO_RUN.keys())
@pytest.mark.parametrize(("allow", "code"), [([], 4), (["--allow-empty"], 0)], ids=["gate", "allow-empty"])
def test_an_input_that_yields_no_agent_run_exits_4_unless_allowed(tmp_path, capsys, files, said, allow, code):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    target = tmp_path / next(iter(files)) if len(files) == 1 and "package.json" not in files else tmp_path

    assert main(["eval", str(target), "--format", "json", *allow]) == code

    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["runs"] == 0
    assert "no agent runs found" in err
    assert (said in err) == (code == 4), err


# -- a directory with a damaged trace file ------------------------------------------------

# A trace file damaged as files get damaged, and the start of what is said of it.
DAMAGED = {
    "cut short": ("cut.json", lambda: SINGLE_TOOL.read_bytes()[:500], "invalid JSON"),
    "not UTF-8": ("latin1.json", _trace_with_a_latin1_byte, "not UTF-8: byte 0xe9"),
    "a gzip stream cut short": ("cut.json.gz", lambda: gzip.compress(SINGLE_TOOL.read_bytes())[:200], "corrupt gzip data"),
    "protobuf cut short": ("cut.pb", lambda: b"\x0a\xff\xff\xff\x0f\x01", "truncated or not an OTLP protobuf message"),
    "empty": ("empty.json", lambda: b"", "the file is empty"),
}


def _folder_with(tmp_path, name: str, content: bytes):
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(SINGLE_TOOL, folder / "good-1.json")
    shutil.copy(TOOL_ERROR, folder / "good-2.json")
    (folder / "package.json").write_text('{"name": "app"}')  # not a trace: skipped, never an error
    (folder / name).write_bytes(content)
    return folder


@pytest.mark.parametrize(("name", "content", "said"), DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_trace_file_in_a_directory_exits_2_naming_it_after_judging_the_rest(tmp_path, capsys, name, content, said):
    folder = _folder_with(tmp_path, name, content())
    main(["eval", str(folder / "good-1.json"), str(folder / "good-2.json"), "--format", "json"])
    alone = json.loads(capsys.readouterr().out)

    code = main(["eval", str(folder), "--format", "json"])

    out, err = capsys.readouterr()
    damaged = folder / name
    summary = json.loads(out)["summary"]
    assert code == 2
    assert summary.pop("skipped_files") == {"damaged": [str(damaged)], "not_traces": [str(folder / "package.json")]}
    assert summary == alone["summary"], "the rest are judged"
    assert said in _said_of(damaged, err), err
    assert f"otel-reliability: skipped, not a trace file: {folder / 'package.json'}" in err
    assert err.splitlines()[-1] == (
        f"otel-reliability: 1 damaged trace file(s) skipped, the rest judged (exit 2; --skip-bad to judge without them): {damaged}"
    )

    code = main(["eval", str(folder), "--format", "json", "--skip-bad"])

    out, err = capsys.readouterr()
    summary = json.loads(out)["summary"]
    assert code == main(["eval", str(folder / "good-1.json"), str(folder / "good-2.json")]) != 2
    assert summary.pop("skipped_files")["damaged"] == [str(damaged)], "listed under --skip-bad too"
    assert summary == alone["summary"]
    assert said in _said_of(damaged, err), err


@pytest.mark.parametrize(("name", "content", "said"), DAMAGED.values(), ids=DAMAGED.keys())
def test_inspect_of_a_directory_shows_the_rest_then_names_the_damaged_file_and_exits_2(tmp_path, capsys, name, content, said):
    folder = _folder_with(tmp_path, name, content())
    main(["inspect", str(folder / "good-1.json"), str(folder / "good-2.json"), "--format", "json"])
    alone = json.loads(capsys.readouterr().out)

    code = main(["inspect", str(folder), "--format", "json"])

    out, err = capsys.readouterr()
    damaged = folder / name
    assert code == 2
    assert json.loads(out) == alone, "the rest are shown"
    assert said in _said_of(damaged, err), err
    assert f"otel-reliability: skipped, not a trace file: {folder / 'package.json'}" in err
    assert err.splitlines()[-1] == f"otel-reliability: 1 damaged trace file(s) skipped, the rest shown (exit 2): {damaged}"


def _said_of(damaged, err: str) -> str:
    """The one warning line on ``damaged`` (what follows its name)."""
    prefix = f"otel-reliability: skipped, a damaged trace file: {damaged}: "
    [line] = [line for line in err.splitlines() if line.startswith(prefix)]
    return line.removeprefix(prefix)
