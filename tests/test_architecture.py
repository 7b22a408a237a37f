"""The layering holds: import contracts (``[tool.importlinter]`` in pyproject.toml), the pure
parts import without the OpenTelemetry SDK, and only the adapters read span conventions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "otel_reliability"

# Attribute keys that say what a span is (run, tool, model call) and whose: the adapters'
# business alone. Reading one anywhere else is a convention leaking out of its module.
CONVENTION_KEYS = (
    "gen_ai.operation.name", "gen_ai.agent.", "gen_ai.tool.", "gen_ai.input.", "gen_ai.output.",
    "openinference.", "llm.", "tool.", "tool_call.", "agent.name", "graph.node.", "agno.",
    "input.value", "output.value", "traceloop.", "pydantic_ai.", "final_result",
    "gen_ai.conversation.", "session.id",
)


def test_the_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


BLOCKER = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {"opentelemetry", "grpc", "aiohttp", "sqlite3", "psycopg", "google"}:
            raise ImportError(f"{name} is not installed here")
sys.meta_path.insert(0, Blocked())
"""


@pytest.mark.parametrize("module", ["otel_reliability.matcher", "otel_reliability.assembly",
                                    "otel_reliability.expectations", "otel_reliability.engine"])
def test_the_pure_parts_import_without_the_opentelemetry_sdk(module):
    code = BLOCKER + f"import {module}, otel_reliability\nprint(otel_reliability.__version__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_the_package_exports_its_version_and_the_errors_users_catch():
    import otel_reliability
    from otel_reliability.expectations import ExpectationError
    from otel_reliability.sources import TraceInputError

    assert otel_reliability.__version__[0].isdigit()
    assert (otel_reliability.ExpectationError, otel_reliability.TraceInputError) == (ExpectationError, TraceInputError)
    assert set(otel_reliability.__all__) <= set(dir(otel_reliability))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        otel_reliability.nothing  # noqa: B018


def _convention_reads(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        keys = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
            keys.append(node.args[0])
        elif isinstance(node, ast.Subscript):
            keys.append(node.slice)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            keys.append(node.left)
        for key in keys:
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith(CONVENTION_KEYS):
                found.append((node.lineno, key.value))
    return sorted(found)


def test_only_the_adapters_read_span_conventions():
    outside = [p for p in PACKAGE.rglob("*.py") if "adapters" not in p.relative_to(PACKAGE).parts]
    reads = [f"{path.relative_to(ROOT)}:{line}: reads {key!r}" for path in sorted(outside) for line, key in _convention_reads(path)]
    assert reads == []


def test_the_convention_check_sees_a_read_outside_the_adapters(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text('def is_run(a):\n    return a.get("openinference.span.kind") == "AGENT"\n'
                     'def tool(a):\n    return "gen_ai.tool.name" in a and a["tool.name"]\n')
    assert _convention_reads(stray) == [(2, "openinference.span.kind"), (4, "gen_ai.tool.name"), (4, "tool.name")]
