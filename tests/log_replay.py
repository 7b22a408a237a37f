"""Replay OTLP/JSON log files (``<scenario>.logs.json``) through the OpenTelemetry logs SDK.

- ``emit_logs(provider, files)`` emits every record of the files through a ``LoggerProvider``
  with its own trace and span id as the current span context (as an instrumentation emits
  its GenAI events while its span is open), its event name, body and attributes.
- ``remap_ids(files, dest, salt)`` copies trace and log files with fresh trace ids (the same
  mapping across all of them), so that one receiver can take several copies of a scenario.
- Run as a script, this module is a logging Python process whose ``BatchLogRecordProcessor``
  feeds the real ``opentelemetry-exporter-otlp`` gRPC or HTTP log exporter::

      python tests/log_replay.py {grpc|http}[+gzip] ENDPOINT FILE...
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

REPO = Path(__file__).resolve().parent.parent


def _value(value: Mapping[str, Any]) -> Any:
    """An OTLP/JSON AnyValue as the logs API takes it (kvlists as dicts, arrays as lists)."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _value(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    return None


def emit_logs(provider: Any, files: Sequence[Path]) -> int:
    """Emit every log record of ``files`` through ``provider``; returns how many."""
    from opentelemetry import trace
    from opentelemetry._logs import LogRecord
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    emitted = 0
    for path in files:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        for resource_logs in data.get("resourceLogs", []):
            for scope_logs in resource_logs.get("scopeLogs", []):
                logger = provider.get_logger(scope_logs.get("scope", {}).get("name", "replay"))
                for r in scope_logs.get("logRecords", []):
                    span = SpanContext(int(r["traceId"], 16), int(r["spanId"], 16), is_remote=False,
                                       trace_flags=TraceFlags(TraceFlags.SAMPLED))
                    logger.emit(LogRecord(
                        timestamp=int(r["timeUnixNano"]) if r.get("timeUnixNano") else None,
                        observed_timestamp=int(r.get("observedTimeUnixNano") or 0) or None,
                        context=trace.set_span_in_context(NonRecordingSpan(span)),
                        body=_value(r["body"]) if "body" in r else None,
                        attributes={kv["key"]: _value(kv["value"]) for kv in r.get("attributes", [])},
                        event_name=r.get("eventName"),
                    ))
                    emitted += 1
    return emitted


def remap_ids(files: Sequence[Path], dest: Path, salt: str) -> list[Path]:
    """Copy ``files`` into ``dest`` with every trace id replaced by one derived from ``salt``."""
    dest.mkdir(parents=True, exist_ok=True)
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    trace_ids = {m for text in texts.values() for m in re.findall(r'"traceId": "([0-9a-f]{32})"', text)}
    mapping = {old: hashlib.sha256(f"{salt}/{old}".encode()).hexdigest()[:32] for old in trace_ids}
    out = []
    for path, text in texts.items():
        for old, new in mapping.items():
            text = text.replace(f'"{old}"', f'"{new}"')
        target = dest / path.name
        target.write_text(text, encoding="utf-8")
        out.append(target)
    return out


def replay(exporter_spec: str, endpoint: str, files: Sequence[Path]) -> int:
    """Emit the records of ``files`` through a ``LoggerProvider`` and the real OTLP log exporter."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
    from opentelemetry.sdk.resources import Resource

    kind, _, compress = exporter_spec.partition("+")
    if kind == "grpc":
        import grpc
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcExporter

        inner = GrpcExporter(endpoint=endpoint, insecure=True,
                             compression=grpc.Compression.Gzip if compress else grpc.Compression.NoCompression)
    elif kind == "http":
        from opentelemetry.exporter.otlp.proto.http import Compression
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpExporter

        inner = HttpExporter(endpoint=endpoint,
                             compression=Compression.Gzip if compress else Compression.NoCompression)
    else:
        raise SystemExit(f"unknown exporter {kind!r}: use grpc or http")

    class Checked(LogRecordExporter):
        """The real exporter, with every batch's result counted."""

        def __init__(self) -> None:
            self.exported = 0
            self.failed = 0

        def export(self, batch):
            result = inner.export(batch)
            if result is LogRecordExportResult.SUCCESS:
                self.exported += len(batch)
            else:
                self.failed += len(batch)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return True

    exporter = Checked()
    provider = LoggerProvider(resource=Resource.create({"service.name": "otel-reliability-log-replay"}))
    provider.add_log_record_processor(BatchLogRecordProcessor(exporter, schedule_delay_millis=50))
    emitted = emit_logs(provider, files)
    provider.force_flush(30_000)
    provider.shutdown()
    print(json.dumps({"replayed": emitted, "exported": exporter.exported, "failed": exporter.failed}))
    return 0 if exporter.exported == emitted and not exporter.failed else 1


def run_log_replay(exporter_kind: str, endpoint: str, files: Sequence[Path]) -> dict:
    """Run this module as a logging Python process; returns its summary."""
    done = subprocess.run(
        [sys.executable, __file__, exporter_kind, endpoint, *map(str, files)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO,
    )
    assert done.returncode == 0, f"log replay through the {exporter_kind} exporter failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    sys.exit(replay(sys.argv[1], sys.argv[2], [Path(p) for p in sys.argv[3:]]))
