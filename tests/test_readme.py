"""Every Python block of README.md and of the pages in docs/ runs as written, so they cannot drift.

A page's blocks run in page order in one fresh Python process and one namespace, as a reader
following the page would run them, in an empty directory holding only the files the page
itself names: a YAML block whose first line is ``# NAME`` is written to ``NAME``.
Where a block needs a model, ``agent`` is a real pydantic-ai agent whose scripted model
(``FunctionModel``) calls ``multiply(a=10, b=5)``, traced through the global provider as
``instrument=True`` does. A block that defines ``test_*`` functions is run by pytest
instead, with that agent. The OTLP exporters the blocks create point at a real receiver,
which must get the spans. A block may be left out only with an HTML comment right above
its fence that says why (``<!-- not run: … -->``), and at most one may be.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .receiver_harness import module_receivers, wait_until  # noqa: F401 - fixture

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<before>[^\n]*)\n```(?P<lang>\w*)\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"^<!-- not run: (?P<why>.+) -->$")

SCRIPTED_AGENT = '''
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def _respond(messages, info):
    if len(messages) == 1:  # the user's question: ask for the tool
        return ModelResponse(parts=[ToolCallPart("multiply", {"a": 10, "b": 5}, tool_call_id="m1")])
    return ModelResponse(parts=[TextPart("50")])


agent = Agent(FunctionModel(_respond), name="calculator")
agent.instrument = True


@agent.tool_plain
def multiply(a: int, b: int) -> int:
    return a * b
'''

RUNNER = '''
import json, sys, traceback
from readme_agent import agent

namespace = {"__name__": "__main__", "agent": agent}
for index, code in enumerate(json.loads(open(sys.argv[1]).read())):
    try:
        exec(compile(code, f"README block {index}", "exec"), namespace)
        print(json.dumps({"block": index, "error": None}), flush=True)
    except BaseException:
        print(json.dumps({"block": index, "error": traceback.format_exc()}), flush=True)
        break
from opentelemetry import trace
shutdown = getattr(trace.get_tracer_provider(), "shutdown", None)  # an SDK provider, once a block set one
if shutdown is not None:
    shutdown()  # flush the blocks' exporters before exiting
'''


@dataclass(frozen=True)
class Block:
    section: str
    language: str
    code: str
    not_run: str | None  # why, when an HTML comment above the fence says so

    @property
    def is_pytest(self) -> bool:
        return re.search(r"^def test_\w+\(", self.code, re.MULTILINE) is not None


def _blocks(text: str) -> list[Block]:
    blocks, section = [], ""
    position = 0
    for match in FENCE.finditer(text):
        for heading in re.findall(r"^#+ (.+)$", text[position : match.start("code")], re.MULTILINE):
            section = heading
        position = match.end()
        above = match.group("before").strip().splitlines()[-1:] or [""]
        not_run = NOT_RUN.match(above[0])
        blocks.append(Block(section, match.group("lang"), match.group("code"), not_run and not_run.group("why")))
    return blocks


def _named_files(blocks: list[Block]) -> dict[str, str]:
    files = {}
    for block in blocks:
        first = block.code.splitlines()[0] if block.code else ""
        name = first[2:].split()[0] if first.startswith("# ") and len(first) > 2 else ""
        if block.language == "yaml" and name.endswith((".yaml", ".yml")):
            files[name] = block.code
    return files


BLOCKS = {page.relative_to(ROOT).as_posix(): _blocks(page.read_text(encoding="utf-8")) for page in PAGES}
PYTHON = {page: [b for b in blocks if b.language == "python"] for page, blocks in BLOCKS.items()}
SEQUENCES = {page: [b for b in blocks if not b.not_run and not b.is_pytest] for page, blocks in PYTHON.items()}
IN_SEQUENCE = [(page, index) for page, blocks in SEQUENCES.items() for index in range(len(blocks))]
PYTEST_BLOCKS = [(page, b) for page, blocks in PYTHON.items() for b in blocks if b.is_pytest and not b.not_run]


def _workdir(path: Path, page: str) -> Path:
    for name, code in _named_files(BLOCKS[page]).items():
        (path / name).write_text(code)
    (path / "readme_agent.py").write_text(SCRIPTED_AGENT)
    return path


@pytest.fixture(scope="module")
def receiver(module_receivers):  # noqa: F811 - the imported fixture
    return module_receivers.start("readme")


@pytest.fixture(scope="module")
def page_runs(receiver, tmp_path_factory):
    """Each page's run, made when a test first asks for it."""
    runs: dict[str, tuple[dict[int, str | None], subprocess.CompletedProcess]] = {}

    def run(page: str) -> tuple[dict[int, str | None], subprocess.CompletedProcess]:
        if page not in runs:
            runs[page] = _run_page(page, receiver, tmp_path_factory.mktemp("page"))
        return runs[page]

    return run


def _run_page(page: str, receiver, workdir: Path) -> tuple[dict[int, str | None], subprocess.CompletedProcess]:
    _workdir(workdir, page)
    (workdir / "blocks.json").write_text(json.dumps([b.code for b in SEQUENCES[page]]))
    (workdir / "runner.py").write_text(RUNNER)
    env = {
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://{receiver.grpc_endpoint}",
        "OTEL_EXPORTER_OTLP_INSECURE": "true",
    }
    done = subprocess.run(
        [sys.executable, "runner.py", "blocks.json"], cwd=workdir, env=env, capture_output=True, text=True, timeout=120
    )
    outcomes = {}
    for line in done.stdout.splitlines():
        if line.startswith('{"block"'):
            outcome = json.loads(line)
            outcomes[outcome["block"]] = outcome["error"]
    return outcomes, done


def test_the_readme_has_python_blocks_and_at_most_one_block_is_left_out():
    assert len(PYTHON["README.md"]) >= 4
    assert len([b for blocks in PYTHON.values() for b in blocks if b.not_run]) <= 1


@pytest.mark.parametrize(
    ("page", "index"), IN_SEQUENCE, ids=[f"{page}:{i}-{SEQUENCES[page][i].section}" for page, i in IN_SEQUENCE]
)
def test_block_runs_as_written(page_runs, page, index):
    outcomes, done = page_runs(page)
    assert index in outcomes, f"an earlier block failed or the process died:\n{done.stdout}\n{done.stderr}"
    assert outcomes[index] is None, f"{page} block in {SEQUENCES[page][index].section!r} failed:\n{outcomes[index]}"


def test_the_exporter_of_the_span_processor_snippet_delivers_the_agent_spans(page_runs, receiver):
    outcomes, done = page_runs("README.md")
    assert outcomes and all(error is None for error in outcomes.values()), done.stderr
    results = wait_until(lambda: receiver.results(agent="calculator")["results"], 15, "the receiver to judge the README's runs")
    assert {r["eval_status"] for r in results} == {"PASSED"}


@pytest.mark.parametrize(("page", "block"), PYTEST_BLOCKS, ids=[f"{page}:{b.section}" for page, b in PYTEST_BLOCKS])
def test_pytest_block_passes_under_pytest(pytester, page, block):
    _workdir(pytester.path, page)
    pytester.makepyfile(test_readme_block="from readme_agent import agent\n" + block.code)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(re.findall(r"^def test_", block.code, re.MULTILINE)))

