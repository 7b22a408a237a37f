"""Capture MLflow tracing: a hand-written agent loop traced with ``@mlflow.trace``, exported over OTLP.

``mlflow-tracing`` (MLflow 3's tracing SDK) keeps a tracer provider of its own; with
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set it sends its spans over OTLP instead of to a
tracking server. That endpoint is ``otlp_receiver.OtlpReceiver`` on 127.0.0.1, so what is
saved is what a collector would get from MLflow.

The loop is ``scripted_loop``: the agent's run is ``@mlflow.trace(name=<agent>,
span_type=SpanType.AGENT)``, each tool ``@mlflow.trace(name=<tool>, span_type=SpanType.TOOL)``,
the approval decision ``SpanType.GUARDRAIL``, and the model call a ``SpanType.CHAT_MODEL``
function around the plain ``openai`` client (no autolog here: see ``capture_openai_agents.py`` for
MLflow's autolog over an agent framework) against ``ScriptedOpenAI`` on 127.0.0.1. A
conversation is MLflow's session: ``mlflow.update_current_trace(metadata={"mlflow.trace.session": …})``
in each run.

Run:  /tmp/capture-mlflow/bin/python tests/capture/mlflow/capture.py [scenario ...]
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402
import otlp_receiver  # noqa: E402
import scripted_loop as sl  # noqa: E402

for key in [k for k in os.environ if k.startswith(("MLFLOW_", "OPENAI_", "OTEL_", "DATABRICKS_"))]:
    del os.environ[key]
receiver = otlp_receiver.OtlpReceiver().__enter__()
os.environ.update(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/protobuf",
                  OTEL_SERVICE_NAME="corpus-mlflow", MLFLOW_TRACKING_URI="http://127.0.0.1:9")

import mlflow  # noqa: E402
from mlflow.entities import SpanType  # noqa: E402
from openai import OpenAI  # noqa: E402

FRAMEWORK = "mlflow"
server = cc.ScriptedOpenAI()
client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
session: contextvars.ContextVar[str | None] = contextvars.ContextVar("session", default=None)


@mlflow.trace(name="chat_completion", span_type=SpanType.CHAT_MODEL)
def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, stream: bool) -> dict[str, Any]:
    options: dict[str, Any] = {"tools": tools} if tools else {}
    if stream:
        return sl.accumulate(client.chat.completions.create(model="scripted-model", messages=messages, stream=True,
                                                            **options))
    return sl.as_message(client.chat.completions.create(model="scripted-model", messages=messages, **options))


def agent(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @mlflow.trace(name=name, span_type=SpanType.AGENT)
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            if session.get() is not None and mlflow.get_current_active_span().parent_id is None:
                mlflow.update_current_trace(metadata={"mlflow.trace.session": session.get()})
            return fn(*args, **kwargs)

        return run

    return decorate


@contextlib.contextmanager
def conversation(session_id: str) -> Iterator[None]:
    token = session.set(session_id)
    try:
        yield
    finally:
        session.reset(token)


tracing = sl.Tracing(
    agent=agent,
    tool=lambda name: mlflow.trace(name=name, span_type=SpanType.TOOL),
    decision=lambda name: mlflow.trace(name=name, span_type=SpanType.GUARDRAIL),
    chat=chat,
    conversation=conversation,
    framework=FRAMEWORK,
    prefix="mlf",
)


def flush() -> None:
    provider = mlflow.tracing.provider.provider.get()  # made at the first span
    if provider is not None:
        provider.force_flush()


def save(scenario: str, truth: dict[str, Any]) -> None:
    flush()
    otlp_receiver.save(FRAMEWORK, scenario, receiver.document(), truth)


if __name__ == "__main__":
    with server:
        sl.run_all(sl.Loop(tracing, server), sys.argv[1:], lambda: (flush(), receiver.clear()), save)
    receiver.__exit__()
