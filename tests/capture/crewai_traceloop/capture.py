"""Capture the scenarios of ``tests/capture/crewai/capture.py`` traced by OpenLLMetry (traceloop):
opentelemetry-instrumentation-crewai and -openai instead of the CrewAI capture's own instrumentation,
so the same scenarios of one framework read under two instrumentations. Writes
``tests/fixtures/corpus/crewai_traceloop/``.

Run:  /tmp/capture-crewai_traceloop/bin/python tests/capture/crewai_traceloop/capture.py [scenario ...]
"""

import runpy
import sys
from pathlib import Path

sys.argv.insert(1, "--traceloop")
runpy.run_path(str(Path(__file__).resolve().parents[1] / "crewai" / "capture.py"), run_name="__main__")
