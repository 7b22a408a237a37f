"""The wheel as a user gets it: built from the package's files alone, installed with the
``receiver`` extra into a fresh virtual environment outside the checkout, then run."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest

from .receiver_harness import free_port, wait_until

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
BUILD_INPUTS = ["pyproject.toml", "README.md", "LICENSE", "otel_reliability"]
FIXTURES = ROOT / "tests" / "fixtures" / "corpus" / "pydantic_ai"
EXPECTATIONS = """
expectations:
  - name: calculator multiplies
    match: {agent: calculator}
    expected_tool_calls: [multiply]
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources.
    source = tmp_path_factory.mktemp("source")
    for name in BUILD_INPUTS:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}))
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(source)], cwd=dist)
    [built] = dist.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv's bin directory with the wheel and its receiver extra (dependencies from the index)."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"{wheel}[receiver]"], cwd=venv)
    return venv / "bin"


def _run(command: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_ships_types_schema_license_entry_points_and_extras(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"otel_reliability-{PROJECT['version']}.dist-info"
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
        shipped_schema = archive.read("otel_reliability/schema/expectations.schema.json").decode()
    assert "otel_reliability/py.typed" in names
    assert shipped_schema == (ROOT / "schema" / "expectations.schema.json").read_text()
    assert f"{info}/licenses/LICENSE" in names and "License-Expression: Apache-2.0" in metadata
    for group, entry in [
        ("console_scripts", "otel-reliability = otel_reliability.cli:main"),
        ("pytest11", "otel_reliability = otel_reliability.pytest_plugin"),
        ("opentelemetry_configurator", "otel_reliability = otel_reliability.autoconfigure:ReliabilityConfigurator"),
    ]:
        assert f"[{group}]\n{entry}" in entry_points
    for extra in ("receiver", "otlp-grpc", "bfcl"):
        assert f"Provides-Extra: {extra}" in metadata


def test_the_installed_package_is_the_one_outside_the_checkout(installed, tmp_path):
    done = _run([str(installed / "python"), "-c", "import otel_reliability; print(otel_reliability.__file__)"], cwd=tmp_path)
    assert Path(done.stdout.strip()).is_relative_to(installed.parent)


def test_installed_version_prints_the_declared_version(installed, tmp_path):
    assert _run([str(installed / "otel-reliability"), "--version"], cwd=tmp_path).stdout == f"otel-reliability {PROJECT['version']}\n"


@pytest.mark.parametrize(("trace", "exit_code"), [("single_tool.json", 0), ("error_fatal.json", 1)])
def test_installed_eval_gives_the_checkout_verdicts(installed, tmp_path, trace, exit_code):
    (tmp_path / "expectations.yaml").write_text(EXPECTATIONS)
    command = ["eval", str(FIXTURES / trace), "--expectations", "expectations.yaml", "--format", "json"]
    from_wheel = subprocess.run([str(installed / "otel-reliability"), *command], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    from_checkout = subprocess.run(
        [sys.executable, "-m", "otel_reliability.cli", *command], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert (from_wheel.returncode, from_checkout.returncode) == (exit_code, exit_code), from_wheel.stderr
    assert json.loads(from_wheel.stdout)["summary"]["runs"] >= 1
    assert from_wheel.stdout == from_checkout.stdout


def test_installed_serve_answers_healthz_and_stops_cleanly_on_sigterm(installed, tmp_path):
    http_port, grpc_port = free_port(), free_port()
    server = subprocess.Popen(
        [str(installed / "otel-reliability"), "serve", "--store", str(tmp_path / "verdicts.db"),
         "--grpc-endpoint", f"127.0.0.1:{grpc_port}", "--http-endpoint", f"127.0.0.1:{http_port}"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        wait_until(lambda: server.poll() is not None or _healthz(http_port) == 200, 60, "/healthz to answer 200")
        assert server.poll() is None, server.stdout.read()
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output


def _healthz(port: int) -> int | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return response.status
    except OSError:
        return None
