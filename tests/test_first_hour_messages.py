"""A new user's first hour, command by command (issue 34, item 4): each mistake a user makes
gets one line in the project's own words — the file, the field or the byte, what was expected —
and the paths the README walks end somewhere useful.

The table pins the exact command and the first line it prints; no line anywhere may carry the
validator's or the YAML parser's own wording.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import pytest

from otel_reliability.cli import _parser, main
from otel_reliability.inspect import inspect_files, render_text

from .corpus import CORPUS
from .receiver_harness import start_receiver

ROOT = Path(__file__).resolve().parent.parent
TRACE = CORPUS / "pydantic_ai" / "single_tool.json"
LIBRARY_WORDING = ("Input should be", "Value error", "<unicode string>", "validation error for", "Field required")

FILES = {
    "empty.yaml": "",
    "broken.yaml": "expectations: [1,\n b",
    "typo.yaml": "expectations:\n  - name: calc\n    expected_tool_calls: [multiply]\n    max_errorz: 1\n",
    "wrong-type.yaml": "expectations:\n  - name: calc\n    expected_tool_calls: multiply\n    max_errors: many\n",
    "settings.yaml": "store: 5\ngrpc_endpoint: [1]\n",
    "reputation.yaml": "window: [\n",
    "app-output.json": "Starting the agent...\nhello world\n",
}

# (what the user did, the command, the exit code, the first line of stderr)
SCENARIOS = [
    ("an empty expectation file", ["eval", "--expectations", "{empty.yaml}", str(TRACE)], 2,
     "otel-reliability: {empty.yaml}: the file is empty: expected a mapping with an 'expectations' list"),
    ("broken YAML", ["eval", "--expectations", "{broken.yaml}", str(TRACE)], 2,
     "otel-reliability: {broken.yaml}: not valid YAML: line 2, column 3: expected ',' or ']', but got '<stream end>' "
     "(in a flow sequence from line 1, column 15)"),
    ("a misspelt field", ["eval", "--expectations", "{typo.yaml}", str(TRACE)], 2,
     "otel-reliability: {typo.yaml}: expectations[0].max_errorz: not a field this file takes (a typo?)"),
    ("a value of the wrong type", ["eval", "--expectations", "{wrong-type.yaml}", str(TRACE)], 2,
     "otel-reliability: {wrong-type.yaml}: expectations[0].expected_tool_calls: expected a list, got 'multiply'; "
     "expectations[0].max_errors: expected a whole number, got 'many'"),
    ("an endpoint that is no HOST:PORT", ["serve", "--grpc-endpoint", "localhost"], 2,
     "otel-reliability serve: grpc_endpoint: expected HOST:PORT, got 'localhost' (from the environment or flags)"),
    ("a store no backend opens", ["serve", "--store", "redis://cache/0"], 2,
     "otel-reliability serve: store: results store 'redis://cache/0': scheme 'redis' is not supported; give a file "
     "path (SQLite; .jsonl for JSON Lines), sqlite:///PATH or a postgresql:// URL (from the environment or flags)"),
    ("settings of the wrong type", ["serve", "--config", "{settings.yaml}"], 2,
     "otel-reliability serve: grpc_endpoint: expected text, got a list; store: expected text, got 5 "
     "(from {settings.yaml}, the environment or flags)"),
    ("a broken reputation config", ["reputation", "--config", "{reputation.yaml}", "--store", "{dir}/none.db"], 2,
     "otel-reliability: {reputation.yaml}: not valid YAML: line 2, column 1: expected the node content, but found "
     "'<stream end>' (in a flow node from line 2, column 1)"),
    ("a device given as a trace file", ["eval", "/dev/null"], 2,
     "otel-reliability: /dev/null: not a trace file: a device, pipe or socket (give a file, a directory or a backend URL)"),
    ("an app's printed output saved as spans", ["eval", "{app-output.json}"], 2,
     "otel-reliability: {app-output.json}: line 1: 'Starting the agent...' is not JSON: a trace file is OTLP/JSON "
     "(an object with resourceSpans), JSON Lines of those (the Collector's file exporter), spans as "
     "ConsoleSpanExporter prints them, or binary OTLP protobuf"),
    ("compare against a store that is not there", ["compare", "--store", "{dir}/none.db", "--version-a", "1", "--version-b", "2"], 2,
     "otel-reliability: --store {dir}/none.db: no such file"),
]


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return {**{name: str(tmp_path / name) for name in FILES}, "dir": str(tmp_path)}


def fill(text: str, files: dict[str, str]) -> str:
    """``text`` with each ``{name}`` replaced by that file's path (names hold dots: no str.format)."""
    for name, path in files.items():
        text = text.replace("{" + name + "}", path)
    return text


@pytest.mark.parametrize(("what", "argv", "code", "first_line"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_each_mistake_gets_one_line_in_the_projects_own_words(what, argv, code, first_line, files, capsys):
    assert main([fill(arg, files) for arg in argv]) == code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines[0] == fill(first_line, files)
    assert len(lines) == 1, err
    assert not any(words in err for words in LIBRARY_WORDING), err


def test_a_version_the_store_lacks_is_answered_with_the_versions_it_holds(tmp_path, capsys):
    store = tmp_path / "results.db"
    assert main(["demo", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["compare", "--store", str(store), "--version-a", "1.0", "--version-b", "1.1"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"otel-reliability: --version-a 1.0: {store} holds no verdicts of that agent version; it records no agent "
        "version (service.version or gen_ai.agent.version on the spans names one)"
    )


def test_the_demo_keeps_verdicts_and_standings_where_report_and_reputation_look_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTEL_RELIABILITY_STORE", raising=False)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "otel-reliability.db").is_file()
    assert out.rstrip().splitlines()[-2:] == [
        "  otel-reliability report --store otel-reliability.db",
        "  otel-reliability reputation --store otel-reliability.db",
    ]
    assert main(["reputation", "--format", "json"]) == 0
    standings = json.loads(capsys.readouterr().out)
    assert {"calculator", "divider", "support", "router"} <= {s["agent"] for s in standings["standings"]}
    assert main(["report"]) == 1  # the support agent fails on purpose
    assert capsys.readouterr().out.startswith("# Tool-call reliability report")
    assert main(["report", "--store", "otel-reliability.db"]) == 1


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


def test_every_command_has_a_description_and_every_option_its_help():
    lacking = []
    for path, command in _commands(_parser()):
        if not command.description:
            lacking.append(f"{' '.join(path)}: no description")
        for action in command._actions:
            if not isinstance(action, argparse._SubParsersAction) and not action.help:
                lacking.append(f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}: no help")
    assert not lacking


@pytest.mark.parametrize(("command", "mentions"), [
    (["eval", "--help"], "ConsoleSpanExporter"),
    (["serve", "--help"], "SIGHUP or POST /api/v1/reload"),
])
def test_help_names_what_a_user_would_look_for(command, mentions, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one line per paragraph: the phrase is not wrapped apart
    with pytest.raises(SystemExit):
        main(command)
    assert mentions in capsys.readouterr().out


def test_inspect_fits_an_80_column_terminal_with_whole_headers():
    text = render_text(inspect_files([CORPUS / "pydantic_ai" / "delegation.json"]), width=80)
    assert max(map(len, text.splitlines())) <= 80
    headers = [line for line in text.splitlines() if line.startswith("┃")]
    words = {word for line in headers for word in re.findall(r"[A-Za-z]+", line)}
    assert {"Trace", "Span", "Name", "Convention", "Read", "Run", "Agent", "Tool", "Outcome", "Call", "Arguments"} <= words
    assert not words - {"Trace", "Span", "Name", "Convention", "Read", "as", "Run", "Agent", "Tool", "Outcome", "from",
                        "Call", "id", "Arguments"}, "a header broke mid-word"


def test_the_results_api_takes_the_moments_the_cli_takes(tmp_path):
    receiver = start_receiver(tmp_path)
    try:
        assert receiver.post_traces(TRACE.read_bytes(), content_type="application/json").status == 200
        [result] = receiver.wait_results([_trace_id(TRACE)], runs=1)
        for since, found in (("1h", 1), ("2099-01-01", 0), (str(time.time() + 3600), 0), ("2000-01-01T00:00:00Z", 1)):
            assert len(receiver.results(since=since)["results"]) == found, since
        refused = receiver.http("GET", "/api/v1/results?since=yesterday")
        assert refused.status == 400 and b"an age such as 90m, 24h, 7d" in refused.body
    finally:
        receiver.stop()
    assert result["agent"]


def _trace_id(path: Path) -> str:
    document = json.loads(path.read_text(encoding="utf-8"))
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]


DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REPO_PATH = re.compile(r"`((?:otel_reliability|tests|docs|benchmarks|deploy|collector-config|schema|\.ci)/[^`\s:#*<>{}$]+)`")


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_the_docs_name_only_files_a_clone_has(document):
    text = document.read_text(encoding="utf-8")
    missing = sorted({path for path in REPO_PATH.findall(text) if not (ROOT / path.rstrip(".,;")).exists()})
    assert not missing
    assert "../shared" not in text, "a user's clone has no ../shared: the design is docs/design.md"
