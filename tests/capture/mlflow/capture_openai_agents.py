"""Capture MLflow tracing over the OpenAI Agents SDK: ``mlflow.openai.autolog()``, exported over OTLP.

``mlflow.openai.autolog()`` registers MLflow's processor with the Agents SDK's tracing (and
patches the ``openai`` client); MLflow sends its spans over OTLP to ``otlp_receiver`` on
127.0.0.1 (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), never to a tracking server. The SDK's own
processors (its exporter to OpenAI) are removed first with ``agents.set_trace_processors([])``.
Scenarios, tools and scripts are ``agents_sdk``'s; written to ``tests/fixtures/corpus/mlflow_openai_agents/``.

Run:  /tmp/capture-mlflow/bin/python tests/capture/mlflow/capture_openai_agents.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import otlp_receiver  # noqa: E402

for key in [k for k in os.environ if k.startswith(("MLFLOW_", "OPENAI_", "OTEL_", "DATABRICKS_"))]:
    del os.environ[key]
receiver = otlp_receiver.OtlpReceiver().__enter__()
os.environ.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
                  OTEL_SERVICE_NAME="corpus-mlflow-openai-agents", MLFLOW_TRACKING_URI="http://127.0.0.1:9")

import agents  # noqa: E402
import agents_sdk  # noqa: E402
import mlflow  # noqa: E402

FRAMEWORK = "mlflow_openai_agents"
agents.set_trace_processors([])
mlflow.openai.autolog()


def flush() -> None:
    provider = mlflow.tracing.provider.provider.get()  # made at the first span
    if provider is not None:
        provider.force_flush()


def save(scenario: str, truth: dict[str, Any]) -> None:
    flush()
    otlp_receiver.save(FRAMEWORK, scenario, receiver.document(), truth)


if __name__ == "__main__":
    agents_sdk.run_all("mlfoa", sys.argv[1:], lambda: (flush(), receiver.clear()), save)
    receiver.__exit__()
