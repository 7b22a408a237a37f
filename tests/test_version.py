"""``otel-reliability --version`` prints the version the package declares."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from otel_reliability.cli import main

DECLARED = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["version"]


def test_version_prints_the_declared_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"otel-reliability {DECLARED}\n"
