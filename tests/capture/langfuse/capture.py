"""Capture Langfuse traces: a hand-written agent loop traced with ``@observe``, as Langfuse's docs say.

Langfuse's Python SDK (v3 and later) is built on OpenTelemetry: ``@observe(as_type=...)`` opens
an OTel span per observation, and its ``LangfuseSpanProcessor`` exports them. Here the client is
made with ``span_exporter=`` an in-memory exporter (the SDK's documented hook for a custom
exporter) and a tracer provider of our own, and its base URL is a closed port on 127.0.0.1:
no Langfuse server is ever contacted. What is saved is what the processor hands its exporter,
i.e. what a Langfuse server would receive.

The loop is ``scripted_loop``: the agent's run is ``@observe(as_type="agent", name=<agent>)``,
each tool ``@observe(as_type="tool", name=<tool>)``, the approval decision
``@observe(as_type="guardrail")``, and the model calls go through Langfuse's OpenAI drop-in
(``langfuse.openai.OpenAI``), which makes the ``generation`` observations, against
``ScriptedOpenAI`` on 127.0.0.1. A conversation is ``propagate_attributes(session_id=...)``.

Run:  /tmp/capture-langfuse/bin/python tests/capture/langfuse/capture.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
import scripted_loop as sl  # noqa: E402

for key in [k for k in os.environ if k.startswith(("LANGFUSE_", "OPENAI_", "OTEL_"))]:
    del os.environ[key]

from langfuse import Langfuse, observe, propagate_attributes  # noqa: E402
from langfuse.openai import OpenAI  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

FRAMEWORK = "langfuse"
exporter = InMemorySpanExporter()
provider = TracerProvider(resource=Resource.create({"service.name": "corpus-langfuse"}))
langfuse = Langfuse(public_key="pk-lf-local", secret_key="sk-lf-local", base_url="http://127.0.0.1:9",
                    tracer_provider=provider, span_exporter=exporter)
server = cc.ScriptedOpenAI()
client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, stream: bool) -> dict[str, Any]:
    options: dict[str, Any] = {"tools": tools} if tools else {}
    if stream:
        return sl.accumulate(client.chat.completions.create(model="scripted-model", messages=messages, stream=True,
                                                            **options))
    return sl.as_message(client.chat.completions.create(model="scripted-model", messages=messages, **options))


tracing = sl.Tracing(
    agent=lambda name: observe(name=name, as_type="agent"),
    tool=lambda name: observe(name=name, as_type="tool"),
    decision=lambda name: observe(name=name, as_type="guardrail"),
    chat=chat,
    conversation=lambda session: propagate_attributes(session_id=session),
    framework=FRAMEWORK,
    prefix="lf",
)



def save(scenario: str, truth: dict[str, Any]) -> None:
    langfuse.flush()  # the processor batches: hand every ended span to the exporter first
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), truth)


if __name__ == "__main__":
    with server:
        sl.run_all(sl.Loop(tracing, server), sys.argv[1:], exporter.clear, save)
    langfuse.shutdown()
