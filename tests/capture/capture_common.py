"""What every capture script in ``tests/capture/<framework>/`` shares.

A capture script runs one framework's agents against a scripted model (no key, no
network), lets the framework's own instrumentation trace them, and writes per scenario

    tests/fixtures/corpus/<framework>/<scenario>.json        OTLP/JSON ExportTraceServiceRequest
    tests/fixtures/corpus/<framework>/<scenario>.logs.json   OTLP/JSON ExportLogsServiceRequest (when logs were emitted)
    tests/fixtures/corpus/<framework>/<scenario>.truth.json  what really ran, recorded inside the tool bodies

The truth file lists ``tool_executions`` in the order they happened, each
``{seq, name, arguments, outcome: ok|error|refused, agent, tool_call_id?, ...}``. A tool body
calls ``record`` when it runs; a call the framework refused (the body never ran) is added
by the scenario with ``add_refused``.

OTLP/JSON here is the OTLP specification's encoding: hex trace and span ids, integer
enums, 64-bit integers as strings (protobuf's own JSON mapping writes ids as base64).

Only the standard library, the OpenTelemetry SDK, its OTLP encoders and protobuf are
imported, so every framework's own virtual environment can run it. ``ScriptedOpenAI`` is
an OpenAI-compatible chat-completions server on 127.0.0.1 answering from a script, for
frameworks that only talk to a model over HTTP.
"""

from __future__ import annotations

import base64
import contextvars
import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable

from google.protobuf.json_format import MessageToDict
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
REFUSAL_KINDS = ("unknown_tool", "invalid_arguments", "limit", "policy_guard", "approval_denied")

# -- tracing ------------------------------------------------------------------------


def tracing(service: str, *before_export: Any) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A tracer provider that keeps every ended span in memory, synchronously. ``before_export``:
    span processors that see each span first (an instrumentation that rewrites spans as they end)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    for processor in before_export:
        provider.add_span_processor(processor)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def logging_provider(service: str):
    """A logger provider that keeps every emitted log record in memory (GenAI events go there)."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    return provider, exporter


# -- ground truth, from inside the tools ----------------------------------------------

_lock = threading.Lock()
_truth: list[dict[str, Any]] = []
current_agent: contextvars.ContextVar[str] = contextvars.ContextVar("current_agent", default="?")


def reset_truth() -> None:
    with _lock:
        _truth.clear()


def record(name: str, arguments: dict[str, Any], outcome: str, agent: str, **extra: Any) -> None:
    """A tool body ran (``outcome`` ok or error)."""
    assert outcome in ("ok", "error"), outcome
    with _lock:
        _truth.append({"seq": len(_truth) + 1, "name": name, "arguments": arguments, "outcome": outcome, "agent": agent, **extra})


def add_refused(name: str, arguments: dict[str, Any], agent: str, reason: str, refusal_kind: str, **extra: Any) -> None:
    """The model asked for a call that never ran (unknown tool, invalid arguments, guard, approval, limit)."""
    assert refusal_kind in REFUSAL_KINDS, refusal_kind
    with _lock:
        _truth.append(
            {
                "seq": len(_truth) + 1,
                "name": name,
                "arguments": arguments,
                "outcome": "refused",
                "refusal_kind": refusal_kind,
                "agent": agent,
                "reason": reason,
                **extra,
            }
        )


def truth_snapshot() -> list[dict[str, Any]]:
    with _lock:
        return [dict(entry) for entry in _truth]


# -- OTLP/JSON ------------------------------------------------------------------------

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(item) for item in node]
    return node


def spans_json(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return _hex_ids(MessageToDict(encode_spans(list(spans)), use_integers_for_enums=True))


def logs_json(log_records: Iterable[Any]) -> dict[str, Any]:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    return _hex_ids(MessageToDict(encode_logs(list(log_records)), use_integers_for_enums=True))


def span_index(spans: Iterable[ReadableSpan]) -> list[dict[str, Any]]:
    """Id, parent, name and status of every span, in start order: a map for reading the truth."""
    return [
        {
            "span_id": f"{span.context.span_id:016x}",
            "parent_span_id": f"{span.parent.span_id:016x}" if span.parent else None,
            "trace_id": f"{span.context.trace_id:032x}",
            "name": span.name,
            "status": span.status.status_code.name,
        }
        for span in sorted(spans, key=lambda s: s.start_time or 0)
    ]


def save_scenario(
    framework: str,
    scenario: str,
    spans: list[ReadableSpan],
    truth: dict[str, Any],
    log_records: list[Any] | None = None,
) -> None:
    """Write the trace (and its log records, if any) and the truth of one scenario."""
    folder = FIXTURES / framework
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / f"{scenario}.json", spans_json(spans))
    if log_records:
        _write(folder / f"{scenario}.logs.json", logs_json(log_records))
    truth = {"framework": framework, "scenario": scenario, **truth, "span_index": span_index(spans)}
    _write(folder / f"{scenario}.truth.json", truth)
    print(f"saved {framework}/{scenario}: {len(spans)} spans, {len(log_records or [])} log records, "
          f"{len(truth.get('tool_executions', []))} tool executions")


def _write(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


# -- a scripted OpenAI-compatible model -------------------------------------------------


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str) -> dict[str, Any]:
    """One entry of a scripted assistant message's ``tool_calls``."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def reply(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One scripted assistant message: text, tool calls, or both."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


class ScriptedOpenAI:
    """``POST /v1/chat/completions`` (and ``/chat/completions``) answered from a script, in order.

    Non-streaming and ``stream: true`` (server-sent events) are both served; every request
    body is kept in ``requests`` so a scenario can check what the framework sent. Use as a
    context manager; ``base_url`` is what the OpenAI client takes.
    """

    def __init__(self, model: str = "scripted-model") -> None:
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._script: deque[dict[str, Any]] = deque()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *messages: dict[str, Any]) -> None:
        """Queue the assistant messages the next requests get, one per request."""
        self._script.extend(messages)

    def left(self) -> int:
        return len(self._script)

    def __enter__(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        if not self._script:
            raise AssertionError(f"scripted model has no answer left for request {len(self.requests)}")
        return self._script.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404, f"scripted model serves only chat completions, not {self.path}")
                    return
                try:
                    message = scripted._next(body)
                except AssertionError as exc:
                    self.send_error(500, str(exc))
                    return
                if body.get("stream"):
                    self._stream(message, body)
                else:
                    self._json(_completion(scripted.model, message, len(scripted.requests)))

            def _json(self, document: dict[str, Any]) -> None:
                data = json.dumps(document).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any], body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _chunks(scripted.model, message, len(scripted.requests), body):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler


_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _completion(model: str, message: dict[str, Any], n: int) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-scripted-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


def _chunks(model: str, message: dict[str, Any], n: int, body: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-scripted-{n}", "object": "chat.completion.chunk", "created": 1_700_000_000 + n, "model": model}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
    for index, call in enumerate(message.get("tool_calls") or ()):
        part = {"index": index, "id": call["id"], "type": "function", "function": call["function"]}
        chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": None}]})
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": _USAGE})
    return chunks
