"""``ReliabilityLogRecordProcessor``: GenAI event log records into the span processor's engine.

Instrumentations in their default mode (``opentelemetry-instrumentation-openai-v2``, Google
ADK) write message content — the calls a model asked for, the tool results sent back — as
log records through the logs API, not on spans. Added to the app's ``LoggerProvider``, this
processor hands each record to the ``ReliabilitySpanProcessor`` it was made by, on the same
queue as the spans: a record emitted before its run span ended is judged with the run.
Records are only read; the app's own log processors still export them.
"""

from __future__ import annotations

from typing import Protocol

from opentelemetry.sdk._logs import LogRecordProcessor

from ..adapters import may_be_genai_event
from ..model import LogData
from ..sources.sdk import from_sdk_log_record


class LogIntake(Protocol):
    """What the processor needs of a ``ReliabilitySpanProcessor``."""

    def queue_log(self, log: LogData) -> None: ...

    def drain(self, timeout: float = 30.0) -> bool: ...


class ReliabilityLogRecordProcessor(LogRecordProcessor):
    """Feeds log records correlated with a span to a ``ReliabilitySpanProcessor``.

    >>> from opentelemetry.sdk._logs import LoggerProvider
    >>> from otel_reliability import ReliabilitySpanProcessor
    >>> spans = ReliabilitySpanProcessor(store=None)
    >>> LoggerProvider().add_log_record_processor(spans.log_record_processor())
    >>> spans.shutdown()
    """

    def __init__(self, span_processor: LogIntake) -> None:
        self._span_processor = span_processor

    def on_emit(self, log_record) -> None:
        record = getattr(log_record, "log_record", log_record)
        # Only a GenAI event under a span can join one: the app's other logs stay off the queue
        # the spans share.
        if record.span_id and may_be_genai_event(record.event_name, record.attributes):
            self._span_processor.queue_log(from_sdk_log_record(record))

    def emit(self, log_data) -> None:  # the SDK's name for on_emit before 1.39
        self.on_emit(log_data)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Wait until every record queued so far has been buffered (and any run it completes judged)."""
        return self._span_processor.drain(timeout_millis / 1000)

    def shutdown(self) -> None:
        """Nothing of its own to stop: the span processor's shutdown stops the worker."""
