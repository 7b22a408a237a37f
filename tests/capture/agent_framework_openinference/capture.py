"""Capture the scenarios of ``tests/capture/agent_framework/capture.py`` with
openinference-instrumentation-agent-framework's span processor rewriting the framework's own
GenAI spans into OpenInference attributes, so the same scenarios of one framework read under two
instrumentations. Writes ``tests/fixtures/corpus/agent_framework_openinference/``.

Run:  /tmp/capture-agent_framework_openinference/bin/python tests/capture/agent_framework_openinference/capture.py [scenario ...]
"""

import runpy
import sys
from pathlib import Path

sys.argv.insert(1, "--openinference")
runpy.run_path(str(Path(__file__).resolve().parents[1] / "agent_framework" / "capture.py"), run_name="__main__")
