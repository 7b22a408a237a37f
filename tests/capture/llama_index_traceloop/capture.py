"""Capture the scenarios of ``tests/capture/llama_index/capture.py`` traced by OpenLLMetry (traceloop):
opentelemetry-instrumentation-llamaindex and -openai instead of the LlamaIndex capture's own instrumentation,
so the same scenarios of one framework read under two instrumentations. Writes
``tests/fixtures/corpus/llama_index_traceloop/``.

Run:  /tmp/capture-llama_index_traceloop/bin/python tests/capture/llama_index_traceloop/capture.py [scenario ...]
"""

import runpy
import sys
from pathlib import Path

sys.argv.insert(1, "--traceloop")
runpy.run_path(str(Path(__file__).resolve().parents[1] / "llama_index" / "capture.py"), run_name="__main__")
