"""The fast subset (``pytest -m "not live and not slow"``, README) needs only ``.venv``: every
test module that reaches something ``.ci/setup`` installs beyond it is ``live`` or ``slow`` in
``conftest.MARKED``.

What a module reaches is read from its code, not declared: the string constants its tests
run on (a ``.cache/`` path, ``shutil.which("node")``, ``"pg_ctl"`` …), followed through
every name they use — the module's own helpers and fixtures, and those it imports from the
test helpers (``backend_harness``, ``receiver_harness`` …) — except through code that skips
when the thing is missing (``pytest.skip``, ``skipif``, ``importorskip``): a skipped test
passes on a ``.venv``-only machine. A new module that starts Jaeger, or a fixture that starts
running ``promtool``, fails here until its module is marked.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .conftest import MARKED

TESTS = Path(__file__).resolve().parent
SKIPS = {"skip", "skipif", "importorskip"}


def installed_by_setup(value: str) -> str | None:
    """What ``.ci/setup`` installs that a string constant in a test names, if anything.

    >>> installed_by_setup(".cache"), installed_by_setup("node"), installed_by_setup("a node")
    ('a binary built into .cache/ (the Collector, Jaeger)', 'Node.js', None)
    """
    if value == ".cache" or value.startswith(".cache/"):
        return "a binary built into .cache/ (the Collector, Jaeger)"
    if value.startswith(".venv-live-"):
        return "a framework's .venv-live-*"
    if value.startswith(".venv-phoenix"):
        return "Phoenix in .venv-phoenix"
    if value in ("node", "npm", "npx", "node_modules"):
        return "Node.js"
    if value in ("prometheus", "promtool"):
        return "Prometheus"
    if value in ("chromium", "chromium-browser"):
        return "Chromium"
    if value in ("pg_ctl", "initdb") or "/usr/lib/postgresql" in value:
        return "PostgreSQL"
    if value == "openssl":
        return "openssl"
    if "otelcol" in value:
        return "the OpenTelemetry Collector"
    return None


@dataclass
class Definition:
    """One name a module defines: what its code names of the setup's, the names it uses, and
    whether it skips (then nothing it reaches counts)."""

    needs: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)
    skips: bool = False


@dataclass
class Module:
    definitions: dict[str, Definition] = field(default_factory=dict)
    imported: dict[str, str] = field(default_factory=dict)  # name → the test helper module it comes from
    tests: set[str] = field(default_factory=set)  # the roots: test functions and module-level code
    top: Definition = field(default_factory=Definition)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _read(node: ast.AST, docstrings: set[int]) -> Definition:
    found = Definition()
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and id(child) not in docstrings:
            if (what := installed_by_setup(child.value)) is not None:
                found.needs.add(what)
        elif isinstance(child, ast.Name):
            found.uses.add(child.id)
        elif isinstance(child, ast.arg):
            found.uses.add(child.arg)  # a fixture, by its parameter's name
        elif isinstance(child, ast.Call):
            called = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", None)
            found.skips |= called in SKIPS
    return found


def parse(path: Path) -> Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    module = Module()
    statements = list(tree.body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, (ast.Try, ast.If)):  # definitions made under a guard are still the module's
            statements[:0] = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            module.imported.update({alias.asname or alias.name: node.module for alias in node.names})
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module.definitions[node.name] = _read(node, docstrings)
            if node.name.startswith(("test", "Test")):
                module.tests.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            read = _read(node, docstrings)
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        module.definitions[name.id] = read
                        if name.id == "pytestmark":
                            module.tests.add(name.id)
        elif not isinstance(node, ast.Import | ast.ImportFrom):
            part = _read(node, docstrings)
            module.top.needs |= part.needs
            module.top.uses |= part.uses
    return module


class Reach:
    """What each name of each test module or helper reaches, through everything it uses."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.modules: dict[str, Module] = {}

    def module(self, name: str) -> Module:
        """A module of the folder, parsed once (an empty one for a name that is no file there)."""
        if name not in self.modules:
            path = self.folder / f"{name}.py"
            self.modules[name] = parse(path) if path.is_file() else Module()
        return self.modules[name]

    def of_name(self, module_name: str, name: str, seen: set[tuple[str, str]]) -> set[str]:
        if (module_name, name) in seen:
            return set()
        seen.add((module_name, name))
        module = self.module(module_name)
        definition = module.definitions.get(name)
        if definition is None:
            source = module.imported.get(name)
            return self.of_name(source, name, seen) if source else set()
        return self.of_definition(module_name, definition, seen)

    def of_definition(self, module_name: str, definition: Definition, seen: set[tuple[str, str]]) -> set[str]:
        if definition.skips:
            return set()
        found = set(definition.needs)
        for used in definition.uses:
            found |= self.of_name(module_name, used, seen)
        return found

    def of_tests(self, module_name: str) -> set[str]:
        """What the tests of a module reach, and its module-level code."""
        module = self.module(module_name)
        if "pytestmark" in module.definitions and module.definitions["pytestmark"].skips:
            return set()  # the whole module skips where what it needs is missing
        seen: set[tuple[str, str]] = set()
        found = self.of_definition(module_name, module.top, seen)
        for test in module.tests:
            found |= self.of_name(module_name, test, seen)
        return found


def test_every_module_that_needs_what_setup_installs_is_marked_live_or_slow():
    reach = Reach(TESTS)
    unmarked = {
        path.stem: sorted(needs)
        for path in sorted(TESTS.glob("test_*.py"))
        if path.stem != Path(__file__).stem  # its strings are examples, run by nothing
        and (needs := reach.of_tests(path.stem)) and MARKED.get(path.stem, ("",))[0] not in ("live", "slow")
    }
    assert unmarked == {}, "mark these in tests/conftest.py MARKED (live or slow), with why"


def test_every_marked_module_exists_and_is_marked_live_or_slow():
    assert sorted(name for name in MARKED if not (TESTS / f"{name}.py").is_file()) == []
    assert {marker for marker, _ in MARKED.values()} <= {"live", "slow"}


# A module as a contributor might add it, and what the check must find it reaches.
NEW_MODULES = {
    "starts Jaeger through the backend harness": (
        "from .backend_harness import start_jaeger\n\ndef test_x(tmp_path):\n    start_jaeger(tmp_path)\n",
        ["a binary built into .cache/ (the Collector, Jaeger)"],
    ),
    "runs promtool through a helper of its own": (
        "import subprocess\n\ndef check():\n    subprocess.run(['promtool', 'check'])\n\ndef test_x():\n    check()\n",
        ["Prometheus"],
    ),
    "uses a PostgreSQL fixture that skips without it": (
        "from .reputation_postgres import postgres_server\n\ndef test_x(postgres_server):\n    pass\n",
        [],
    ),
    "skips when node is missing": (
        "import shutil, pytest\n\ndef test_x():\n    if shutil.which('node') is None:\n        pytest.skip('no node')\n",
        [],
    ),
    "skips as a whole where Chromium is missing": (
        "import shutil, subprocess, pytest\n\npytestmark = pytest.mark.skipif(shutil.which('chromium') is None, reason='')\n\n"
        "def test_x():\n    subprocess.run(['chromium'])\n",
        [],
    ),
    "a test class that runs openssl": (
        "import subprocess\n\nclass TestTls:\n    def test_x(self):\n        subprocess.run(['openssl', 'version'])\n",
        ["openssl"],
    ),
    "names Phoenix's venv only in a docstring": ('"""Not .venv-phoenix."""\n\ndef test_x():\n    """.venv-phoenix"""\n', []),
}


@pytest.mark.parametrize(("code", "needs"), NEW_MODULES.values(), ids=NEW_MODULES.keys())
def test_the_check_follows_a_new_module_s_names_to_what_setup_installs(tmp_path, code, needs):
    for helper in ("backend_harness", "reputation_postgres", "receiver_harness"):
        (tmp_path / f"{helper}.py").write_text((TESTS / f"{helper}.py").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "test_new.py").write_text(code, encoding="utf-8")
    assert sorted(Reach(tmp_path).of_tests("test_new")) == needs
