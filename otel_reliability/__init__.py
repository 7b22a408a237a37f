"""Tool-call reliability verdicts for AI agents, from the OpenTelemetry traces they emit.

>>> from opentelemetry.sdk.trace import TracerProvider
>>> from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
>>> from otel_reliability import ReliabilitySpanProcessor
>>> provider = TracerProvider()
>>> provider.add_span_processor(ReliabilitySpanProcessor(BatchSpanProcessor(ConsoleSpanExporter()), store=None))
"""

from .engine import Engine
from .expectations import Expectation, Match, load_expectations
from .inline import expect
from .matcher import evaluate
from .model import Attempt, Run, Verdict
from .processor import ReliabilitySpanProcessor
from .results import RunResult

__all__ = [
    "Attempt",
    "Engine",
    "Expectation",
    "Match",
    "ReliabilitySpanProcessor",
    "Run",
    "RunResult",
    "Verdict",
    "evaluate",
    "expect",
    "load_expectations",
]
