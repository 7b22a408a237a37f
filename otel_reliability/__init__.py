"""Tool-call reliability verdicts for AI agents, from the OpenTelemetry traces they emit.

>>> from opentelemetry.sdk.trace import TracerProvider
>>> from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
>>> from otel_reliability import ReliabilitySpanProcessor
>>> provider = TracerProvider()
>>> provider.add_span_processor(ReliabilitySpanProcessor(BatchSpanProcessor(ConsoleSpanExporter()), store=None))

The names below are imported when first used, so that the pure parts (``matcher``,
``assembly``, ``expectations``, …) import without the OpenTelemetry SDK.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .version import VERSION as __version__

_EXPORTS = {
    "Attempt": "model",
    "Engine": "engine",
    "Expectation": "expectations",
    "ExpectationError": "expectations",
    "Match": "expectations",
    "OTLPJsonFileSpanExporter": "emitters.otlp_file",
    "ReliabilitySpanProcessor": "processor.span_processor",
    "Run": "model",
    "RunResult": "results",
    "TraceInputError": "sources.decoded",
    "Verdict": "model",
    "evaluate": "matcher",
    "expect": "processor.inline",
    "load_expectations": "expectations",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:
    from .engine import Engine
    from .emitters.otlp_file import OTLPJsonFileSpanExporter
    from .expectations import Expectation, ExpectationError, Match, load_expectations
    from .matcher import evaluate
    from .model import Attempt, Run, Verdict
    from .processor.inline import expect
    from .processor.span_processor import ReliabilitySpanProcessor
    from .results import RunResult
    from .sources.decoded import TraceInputError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'otel_reliability' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
