"""The in-process front door: ``ReliabilitySpanProcessor`` and what it is made of.

- ``span_processor`` — the processor: SDK spans in, forwarded to the processor it wraps,
  each top-level run judged when its span ends;
- ``span_worker`` — its backlog and worker thread (app threads queue, the worker takes batches);
- ``span_judging`` — the worker's side: records into the engine, runs judged, held spans forwarded;
- ``log_processor`` — its ``LogRecordProcessor``: SDK log records (GenAI events) to the same worker;
- ``forking`` — its fork hooks (a child gets a worker of its own);
- ``inline`` — ``expect()``, the expectation a block of code gives the runs it makes.

The receiver (``otel_reliability.receiver``) is the other front door; neither imports the other.
Names are imported when first asked for, as at the top of the package: ``expect`` needs no
OpenTelemetry SDK, the processors do.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "ReliabilitySpanProcessor": "span_processor",
    "ReliabilityLogRecordProcessor": "log_processor",
    "expect": "inline",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .inline import expect
    from .log_processor import ReliabilityLogRecordProcessor
    from .span_processor import ReliabilitySpanProcessor


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'otel_reliability.processor' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
