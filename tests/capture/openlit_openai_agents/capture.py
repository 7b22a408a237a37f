"""Capture OpenLIT over the OpenAI Agents SDK: ``openlit.init`` auto-instrumenting ``agents``.

``openlit.init`` reuses the tracer and logger providers already set globally
(``trace.set_tracer_provider``, ``_logs.set_logger_provider``), so both are ``capture_common``'s
in-memory ones: no OTLP endpoint, nothing leaves this machine; metrics are off. Its
``openai_agents`` instrumentation calls ``agents.set_trace_processors([its processor])``, which
replaces the SDK's own processors, so the SDK's exporter to OpenAI is gone as well (and no
``OPENAI_API_KEY`` is set). OpenLIT also instruments the ``openai`` client the SDK's
``OpenAIChatCompletionsModel`` uses, and plain HTTP. ``pricing_json`` is the empty local table
``../openlit/pricing.json``: without it ``openlit.init`` fetches a price list from the web.
Scenarios, tools and scripts are ``agents_sdk``'s; written to
``tests/fixtures/corpus/openlit_openai_agents/``.

Run:  /tmp/capture-openlit_openai_agents/bin/python tests/capture/openlit_openai_agents/capture.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("OPENLIT_", "OPENAI_", "OTEL_"))]:
    del os.environ[key]

import capture_common as cc  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

FRAMEWORK = "openlit_openai_agents"
provider, exporter = cc.tracing("corpus-openlit-openai-agents")
logger_provider, log_exporter = cc.logging_provider("corpus-openlit-openai-agents")
trace.set_tracer_provider(provider)
_logs.set_logger_provider(logger_provider)

import openlit  # noqa: E402

PRICING = Path(__file__).parents[1] / "openlit" / "pricing.json"
openlit.init(application_name="corpus-openlit-openai-agents", environment="capture", disable_metrics=True,
             capture_message_content=True, pricing_json=str(PRICING))

import agents_sdk  # noqa: E402


def clear() -> None:
    exporter.clear()
    log_exporter.clear()


def save(scenario: str, truth: dict[str, Any]) -> None:
    provider.force_flush()
    logger_provider.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), truth,
                     list(log_exporter.get_finished_logs()))


if __name__ == "__main__":
    agents_sdk.run_all("oloa", sys.argv[1:], clear, save)
