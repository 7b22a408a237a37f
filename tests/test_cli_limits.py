"""Input limits and output errors of the commands: exit 2 with a message, never a traceback.

A gzip trace file inflates to at most ``--max-decompressed-mib`` (512 MiB by default) —
a 1 MiB file can hold a gigabyte — and the message names the file and the limit; an
``--output`` that cannot be written is bad input (exit 2, the path in the message) for
every command that has one.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from otel_reliability.cli import main
from otel_reliability.reputation import Reputation

from .corpus import CORPUS
from .receiver_harness import gzip_bomb

SINGLE_TOOL = CORPUS / "pydantic_ai" / "single_tool.json"
MIB = 1 << 20


def _eval(*args, capsys) -> tuple[int, str, str]:
    code = main(["eval", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_gzip_bomb_is_refused_at_the_limit_without_inflating_it(tmp_path):
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip_bomb(1 << 30))  # ~1 MiB on disk, 1 GiB inflated
    # In a process of its own, to read that process's peak memory.
    script = (
        "import resource, sys\n"
        "from otel_reliability.cli import main\n"
        "code = main(['eval', sys.argv[1]])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(bomb)], capture_output=True, text=True, timeout=120)

    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"otel-reliability: {bomb}: gzip data inflates to more than 512 MiB, the limit for one trace file"
    assert int(done.stdout) < 512 * MIB + 256 * MIB  # the limit, one inflate step and the interpreter


def test_the_limit_is_a_flag_and_a_file_within_it_is_judged(tmp_path, capsys):
    padded = tmp_path / "padded.json.gz"
    padded.write_bytes(gzip.compress(SINGLE_TOOL.read_bytes() + b" " * (2 * MIB)))  # 2 MiB and a trace

    refused = _eval(padded, "--max-decompressed-mib", "1", capsys=capsys)
    judged = _eval(padded, "--format", "json", capsys=capsys)

    assert refused == (2, "", f"otel-reliability: {padded}: gzip data inflates to more than 1 MiB, the limit for one trace file\n")
    assert judged[0] == 0 and json.loads(judged[1])["summary"]["runs"] == 1


GZIP_FILES = {
    "two gzip members (as cat a.gz b.gz)": (lambda: gzip.compress(SINGLE_TOOL.read_bytes()) + gzip.compress(b"\n"), None),
    "zero padding after the data": (lambda: gzip.compress(SINGLE_TOOL.read_bytes()) + b"\0" * 512, None),
    "truncated": (lambda: gzip.compress(SINGLE_TOOL.read_bytes())[:-20], "corrupt gzip data (truncated)"),
    "garbage after the data": (lambda: gzip.compress(SINGLE_TOOL.read_bytes()) + b"garbage", "corrupt gzip data (bytes after it that are not gzip)"),
    "a damaged deflate stream": (lambda: gzip.compress(SINGLE_TOOL.read_bytes())[:12] + b"\xff" * 40, "corrupt gzip data (Error -3"),
}


@pytest.mark.parametrize(("content", "error"), list(GZIP_FILES.values()), ids=list(GZIP_FILES))
def test_gzip_files_are_read_as_gzip_reads_them(tmp_path, capsys, content, error):
    path = tmp_path / "trace.json.gz"
    path.write_bytes(content())

    code, out, err = _eval(path, "--format", "json", capsys=capsys)

    if error is None:
        assert code == 0 and json.loads(out)["summary"]["runs"] == 1, err
    else:
        assert code == 2 and err.startswith(f"otel-reliability: {path}: {error}"), err


def test_a_limit_below_one_mib_is_a_usage_error(capsys):
    assert _eval(SINGLE_TOOL, "--max-decompressed-mib", "0", capsys=capsys) == (
        2, "", "otel-reliability: --max-decompressed-mib must be at least 1, got 0\n"
    )


# -- --output that cannot be written ------------------------------------------------------------

def _results_file(tmp_path) -> str:
    path = tmp_path / "results.json"
    assert main(["eval", str(SINGLE_TOOL), "--format", "json", "--output", str(path)]) == 0
    return str(path)


def _standings_store(tmp_path) -> str:
    path = str(tmp_path / "standings.db")
    Reputation(path).close()
    return path


def _bfcl_input(tmp_path) -> str:
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"id": "a", "category": "irrelevance", "function": [], "possible_answer": None, "candidate": []}) + "\n")
    return str(path)


COMMANDS = {
    "eval (table)": lambda tmp: ["eval", str(SINGLE_TOOL)],
    "eval --format json": lambda tmp: ["eval", str(SINGLE_TOOL), "--format", "json"],
    "report": lambda tmp: ["report", _results_file(tmp)],
    "reputation": lambda tmp: ["reputation", "--store", _standings_store(tmp)],
    "reputation --format json": lambda tmp: ["reputation", "--store", _standings_store(tmp), "--format", "json"],
    "bfcl judge": lambda tmp: ["bfcl", "judge", _bfcl_input(tmp)],
}
TARGETS = {"in a missing directory": "missing/out.txt", "a directory": "."}


@pytest.mark.parametrize("target", list(TARGETS.values()), ids=list(TARGETS))
@pytest.mark.parametrize("command", list(COMMANDS.values()), ids=list(COMMANDS))
def test_an_output_that_cannot_be_written_exits_2_naming_the_path(tmp_path, capsys, command, target):
    argv = command(tmp_path)
    capsys.readouterr()
    output = str(tmp_path / target)

    code = main([*argv, "--output", output])
    err = capsys.readouterr().err

    assert code == 2
    assert f"{output}: cannot write" in err and "Traceback" not in err, err
