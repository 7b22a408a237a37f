"""A store spec that cannot be used fails in one line naming it, for every command and both
front doors, and a failed start leaves nothing behind (issue 23 point 3). Every command runs
as a user runs it: a subprocess, its exit code and its standard error.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from otel_reliability import ReliabilitySpanProcessor
from otel_reliability.stores import StoreSpecError

from .receiver_harness import start_receiver

CLI = [sys.executable, "-m", "otel_reliability.cli"]
LOCAL = ["--grpc-endpoint", "127.0.0.1:0", "--http-endpoint", "127.0.0.1:0"]


def run(args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False)


def not_sqlite(folder) -> str:
    (folder / "fake.db").write_text("not a database\n")
    return "fake.db"


def missing_folder(folder) -> str:
    return str(folder / "nowhere" / "deeper" / "x.db")


COMMANDS = {
    "demo": lambda spec: ["demo", "--store", spec],
    "serve": lambda spec: ["serve", "--store", spec, *LOCAL],
    "reputation": lambda spec: ["reputation", "--store", spec],
    "report": lambda spec: ["report", spec],
    "compare": lambda spec: ["compare", spec, spec],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(
    "make_spec, reason",
    [
        pytest.param(not_sqlite, "file is not a database", id="not-sqlite"),
        pytest.param(missing_folder, "does not exist", id="missing-folder"),
    ],
)
def test_an_unusable_store_is_one_line_naming_it(tmp_path, command, make_spec, reason):
    spec = make_spec(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    completed = run(COMMANDS[command](spec), tmp_path)
    lines = completed.stderr.strip().splitlines()
    assert completed.returncode == 2, completed.stderr
    assert len(lines) == 1 and "Traceback" not in completed.stderr, completed.stderr
    assert spec in lines[0]
    if command not in ("report", "compare", "reputation"):  # those read a store: "not JSON" / "no such store" is the reason
        assert reason in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no folder, no store, no intake log made


@pytest.mark.parametrize(
    "make_spec, reason",
    [
        pytest.param(not_sqlite, "cannot open: file is not a database", id="not-sqlite"),
        pytest.param(lambda _: "/proc/nope/x.db", "cannot open: No such file or directory", id="folder-cannot-be-made"),
    ],
)
def test_the_span_processor_raises_one_line_naming_the_store(tmp_path, make_spec, reason, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = make_spec(tmp_path)
    with pytest.raises(StoreSpecError) as raised:
        ReliabilitySpanProcessor(None, store=spec)
    assert str(raised.value) == f"results store {spec!r}: {reason}"


def test_the_span_processor_makes_its_store_folder_as_documented(tmp_path):
    store = tmp_path / "made" / "verdicts.db"
    ReliabilitySpanProcessor(None, store=str(store)).shutdown()
    assert store.is_file()


def test_a_failed_start_removes_what_it_created_and_only_that(tmp_path):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    (tmp_path / "kept.db.intake").mkdir()  # there before: never removed
    scenarios = [
        (["serve", "--store", "x.db", "--grpc-endpoint", f"127.0.0.1:{port}", "--http-endpoint", "127.0.0.1:0"],
         f"otel-reliability serve: cannot listen on 127.0.0.1:{port} for OTLP/gRPC (port in use?)"),
        (["serve", "--store", "y.db", "--grpc-endpoint", "127.0.0.1:0", "--http-endpoint", f"127.0.0.1:{port}"],
         f"otel-reliability serve: cannot listen on 127.0.0.1:{port} for OTLP/HTTP (port in use)"),
        (["serve", "--store", "made/deep/x.db", "--mkdir", "--grpc-endpoint", f"127.0.0.1:{port}"],
         f"otel-reliability serve: cannot listen on 127.0.0.1:{port} for OTLP/gRPC (port in use?)"),
        (["serve", "--store", "kept.db", "--grpc-endpoint", f"127.0.0.1:{port}"],
         f"otel-reliability serve: cannot listen on 127.0.0.1:{port} for OTLP/gRPC (port in use?)"),
        (["serve", "--store", "z.db", "--expectations", "missing.yaml", *LOCAL],
         "otel-reliability serve: missing.yaml: cannot read expectation file: No such file or directory"),
    ]
    try:
        for args, said in scenarios:
            completed = run(args, tmp_path)
            assert completed.returncode == 2, completed.stderr
            assert completed.stderr == said + "\n"  # gRPC's own C-core line is held back
    finally:
        busy.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.db.intake"]


def test_mkdir_creates_the_store_folder_when_asked(tmp_path):
    store = tmp_path / "new" / "deeper" / "verdicts.db"
    receiver = start_receiver(tmp_path, store=store, extra_args=["--mkdir"])
    assert receiver.stop() == 0, receiver.log_text()
    assert store.is_file() and (tmp_path / "new" / "deeper" / "verdicts.db.intake").is_dir()
