"""Judge the openai_v2 scenarios live, in process: the real instrumentation in its default
mode (content only in log records), ``ReliabilitySpanProcessor`` on the ``TracerProvider`` and
its ``log_record_processor()`` on the ``LoggerProvider``; each run's chain is compared with
the scenario's recorded truth (tool, agent, outcome). Needs the capture's environment
(``requirements.txt``) plus otel-reliability::

    /tmp/capture-openai_v2/bin/python tests/capture/openai_v2/judge_live.py

Prints one line per scenario and exits 1 when a chain differs from the truth.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
FIXTURES = HERE.parent.parent / "fixtures" / "corpus" / "openai_v2"

import capture_common as cc  # noqa: E402
from capture import CONTENT_VARIABLE, SCENARIOS, Capture, single_tool  # noqa: E402

from otel_reliability import ReliabilitySpanProcessor  # noqa: E402


def main() -> int:
    wrong = 0
    for scenario, _description, body, _truth in [*SCENARIOS, ("single_tool_content_off", "", single_tool, {})]:
        content = "" if scenario == "single_tool_content_off" else "true"
        cap = Capture("openai_v2", content)
        seen = []
        spans = ReliabilitySpanProcessor(store=None, on_result=seen.append)
        cap.tracer_provider.add_span_processor(spans)
        cap.logger_provider.add_log_record_processor(spans.log_record_processor())
        cc.reset_truth()
        with cc.ScriptedOpenAI() as server:
            body(cap, server)
        spans.drain()
        spans.shutdown()
        truth = json.loads((FIXTURES / f"{scenario}.truth.json").read_text())
        expected = sorted((t["agent"], t["name"], t["outcome"]) for t in truth["tool_executions"])
        judged = sorted((a.agent, a.tool, a.outcome) for result in seen for a in result.verdict.chain)
        status = [result.verdict.eval_status for result in seen]
        same = judged == expected
        wrong += not same
        print(f"{scenario:24} {'right' if same else 'WRONG'}  {status}  {judged}" + ("" if same else f"  truth {expected}"))
    os.environ.pop(CONTENT_VARIABLE, None)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
