"""A traced Python process that says what the receiver acknowledged.

It replays OTLP/JSON trace files through an SDK ``TracerProvider`` whose
``BatchSpanProcessor`` feeds the real ``OTLPSpanExporter`` (gRPC), at about ``RATE`` spans
per second; the exporter is wrapped (not replaced) so that every batch it reports as
``SUCCESS`` is written to ``ACKED`` as one line of ``trace_id span_id`` pairs (hex), flushed
before the next export: whatever is in that file was acknowledged, whenever this process
is killed. Used by ``test_receiver_durability.py``::

    python tests/acked_export.py ENDPOINT RATE ACKED FILE...
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.receiver_harness import _replay_files  # noqa: E402 - after the path is set


def main(endpoint: str, rate: float, acked: Path, files: list[Path]) -> int:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    # timeout: how long one export keeps retrying refusals; the default 10 s can run out while a
    # full intake log refuses, and a batch it gives up on is dropped, never acknowledged
    inner = OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=120)
    out = os.open(acked, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    class RecordingAcks(SpanExporter):
        def export(self, spans):
            result = inner.export(spans)
            if result is SpanExportResult.SUCCESS:
                line = " ".join(f"{s.context.trace_id:032x}:{s.context.span_id:016x}" for s in spans)
                os.write(out, (line + "\n").encode())
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return inner.force_flush(timeout_millis)

    # a queue that holds every span: while the receiver refuses, nothing is dropped before export
    batch = BatchSpanProcessor(
        RecordingAcks(), max_queue_size=100_000, max_export_batch_size=256, schedule_delay_millis=50
    )

    class Paced(SpanProcessor):
        """Hands ended spans to the batch processor no faster than ``rate`` per second."""

        def __init__(self) -> None:
            self.started = time.monotonic()
            self.ended = 0

        def on_start(self, span, parent_context=None) -> None:
            batch.on_start(span, parent_context)

        def on_end(self, span) -> None:
            self.ended += 1
            ahead = self.ended / rate - (time.monotonic() - self.started)
            if ahead > 0:
                time.sleep(ahead)
            batch.on_end(span)

        def shutdown(self) -> None:
            batch.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return batch.force_flush(timeout_millis)

    replayed = _replay_files(files, Paced())
    print(replayed, flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], float(sys.argv[2]), Path(sys.argv[3]), [Path(p) for p in sys.argv[4:]]))
