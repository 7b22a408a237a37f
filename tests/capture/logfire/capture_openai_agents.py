"""Capture Pydantic Logfire over the OpenAI Agents SDK: ``logfire.instrument_openai_agents()``.

``logfire.configure(send_to_logfire=False, console=False, additional_span_processors=[...])``:
nothing goes to Logfire's service, every span Logfire makes reaches an in-memory exporter of
ours (``capture_common.tracing``'s, fed by a synchronous processor). The Agents SDK's own
processors (its exporter to OpenAI) are removed with ``agents.set_trace_processors([])``;
Logfire's instrumentation wraps the SDK's trace provider and does not need them.
Scenarios, tools and scripts are ``agents_sdk``'s; written to
``tests/fixtures/corpus/logfire_openai_agents/``.

Run:  /tmp/capture-logfire/bin/python tests/capture/logfire/capture_openai_agents.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("LOGFIRE_", "OPENAI_", "OTEL_"))]:
    del os.environ[key]

import agents  # noqa: E402
import agents_sdk  # noqa: E402
import capture_common as cc  # noqa: E402
import logfire  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

FRAMEWORK = "logfire_openai_agents"
exporter = InMemorySpanExporter()
logfire.configure(send_to_logfire=False, console=False, service_name="corpus-logfire-openai-agents",
                  additional_span_processors=[SimpleSpanProcessor(exporter)])
agents.set_trace_processors([])
logfire.instrument_openai_agents()


def save(scenario: str, truth: dict[str, Any]) -> None:
    logfire.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), truth)


if __name__ == "__main__":
    agents_sdk.run_all("lfoa", sys.argv[1:], exporter.clear, save)
