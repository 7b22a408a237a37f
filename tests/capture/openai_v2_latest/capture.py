"""The ``openai_v2`` scenarios under ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``.

Same app loop, same scripted model, same tools (``../openai_v2/capture.py``); only the
conventions differ, so the two folders can be compared chain for chain. Content capture is
``span_and_event``: message content on the spans and in
``gen_ai.client.inference.operation.details`` log records (off for one scenario).

    /tmp/capture-openai_v2_latest/bin/python tests/capture/openai_v2_latest/capture.py
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

# Read once, when the semantic-convention stability mode is first asked for: set it first.
os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"

shared = runpy.run_path(str(Path(__file__).resolve().parents[1] / "openai_v2" / "capture.py"))

if __name__ == "__main__":
    shared["main"]("openai_v2_latest", "span_and_event")
