"""Capture the scenarios of ``tests/capture/haystack/capture.py`` traced by OpenLLMetry (traceloop):
opentelemetry-instrumentation-haystack and -openai instead of the Haystack capture's own instrumentation,
so the same scenarios of one framework read under two instrumentations. Writes
``tests/fixtures/corpus/haystack_traceloop/``.

Run:  /tmp/capture-haystack_traceloop/bin/python tests/capture/haystack_traceloop/capture.py [scenario ...]
"""

import runpy
import sys
from pathlib import Path

sys.argv.insert(1, "--traceloop")
runpy.run_path(str(Path(__file__).resolve().parents[1] / "haystack" / "capture.py"), run_name="__main__")
