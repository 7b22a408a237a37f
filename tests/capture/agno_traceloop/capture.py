"""Capture the scenarios of ``tests/capture/agno_openinference/capture.py`` traced by OpenLLMetry (traceloop):
opentelemetry-instrumentation-agno and -openai instead of the agno capture's own instrumentation,
so the same scenarios of one framework read under two instrumentations. Writes
``tests/fixtures/corpus/agno_traceloop/``.

Run:  /tmp/capture-agno_traceloop/bin/python tests/capture/agno_traceloop/capture.py [scenario ...]
"""

import runpy
import sys
from pathlib import Path

sys.argv.insert(1, "--traceloop")
runpy.run_path(str(Path(__file__).resolve().parents[1] / "agno_openinference" / "capture.py"), run_name="__main__")
