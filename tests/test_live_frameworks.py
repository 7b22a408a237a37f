"""Live runs of the frameworks whose pins conflict with the main environment, each judged in
process by ``ReliabilitySpanProcessor`` in its own venv (``.venv-live-<framework>``, made by
``.ci/setup`` from ``tests/capture/<framework>/requirements.txt`` plus this package).

Each framework's ``tests/live/live_<framework>.py`` runs its agents with the capture script's
scripted model, traced by the framework's own instrumentation, and holds every run to the
captured scenario's truth (tests/live/harness.py); ``live_<framework>_docs.py`` runs the
snippet of docs/frameworks/<framework>.md as written and a live run through it. Without the venv the test is skipped
locally and fails in CI (``CI=true``): a missing install step must not pass as green.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# live_<framework>.py: its agents' runs; live_<framework>_docs.py: its docs page's snippet,
# in a process of its own (a snippet sets up global tracing as a user's program would).
LIVE_TESTS = sorted(p.stem.removeprefix("live_") for p in (ROOT / "tests" / "live").glob("live_*.py"))
# A docs page whose framework has no venv of its own: installed in the main .venv (the test
# extra), or in the venv of another capture of the same framework.
PAGE_VENVS = {
    "agno_docs": ".venv",
    "pydantic_ai_docs": ".venv",
    "openai_agents_docs": ".venv-live-openai_agents_guardrails",
    "langgraph_docs": ".venv-live-langgraph_subagents",
}


@pytest.mark.parametrize("live", LIVE_TESTS)
def test_the_framework_s_live_runs_are_judged_as_their_captured_scenarios(live):
    python = ROOT / PAGE_VENVS.get(live, f".venv-live-{live.removesuffix('_docs')}") / "bin" / "python"
    if not python.exists():
        reason = f"{python.parent.parent.name} is absent: bash .ci/setup makes it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    run = subprocess.run(
        [str(python), "-m", "pytest", "-c", "tests/live/pytest.ini", f"tests/live/live_{live}.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
