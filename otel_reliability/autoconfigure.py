"""Zero-code setup: verdicts for an unmodified app run under ``opentelemetry-instrument``.

.. code-block:: bash

    OTEL_PYTHON_CONFIGURATOR=otel_reliability \\
    OTEL_RELIABILITY_EXPECTATIONS=expectations.yaml OTEL_RELIABILITY_STORE=verdicts.db \\
    OTEL_TRACES_EXPORTER=otlp opentelemetry-instrument python app.py

``opentelemetry-instrument`` loads one ``opentelemetry_configurator`` entry point (the one
``OTEL_PYTHON_CONFIGURATOR`` names, else the first it finds), which sets up the SDK. This
one (``otel_reliability``) sets it up exactly as the SDK's own configurator does from the
``OTEL_*`` variables — exporters, sampler, resource, metrics, logs — and puts one
``ReliabilitySpanProcessor`` in front of every trace exporter's ``BatchSpanProcessor``, so
each exporter still gets every span, the run spans with their verdict. Name it in
``OTEL_PYTHON_CONFIGURATOR`` when another configurator is installed (opentelemetry-distro
has one), or which of the two sets up the SDK is left to installation order.

Settings are the processor's keywords as ``OTEL_RELIABILITY_<NAME>`` variables:
``EXPECTATIONS`` (files, comma-separated), ``STORE`` (a path, ``none`` for no store; default
``otel-reliability.db``), ``MAX_TRACES``, ``MAX_SPANS_PER_TRACE``, ``TRACE_TTL``,
``MAX_PAUSED_RUNS``, ``MAX_QUEUE``, ``MAX_LABEL_VALUES``, ``PRINT_RESULTS``. A setting or expectation file that
cannot be used is logged and the SDK set up without judging: the app's telemetry does not
stop for it. With ``OTEL_CONFIG_FILE`` the SDK follows that file alone and nothing is judged.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from typing import Any, Mapping

from opentelemetry.sdk._configuration import _OTelSDKConfigurator
from opentelemetry.sdk.trace import SpanProcessor, SynchronousMultiSpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import ReliabilitySpanProcessor
from .expectations import ExpectationError
from .input_errors import validation_problems

logger = logging.getLogger(__name__)

ENV_PREFIX = "OTEL_RELIABILITY_"


class ZeroCodeSettings(BaseModel):
    """``ReliabilitySpanProcessor``'s keywords, read from ``OTEL_RELIABILITY_*`` variables; the
    processor's own defaults stand for the ones not given (``keywords()`` holds only those given).

    >>> ZeroCodeSettings.from_environ({"OTEL_RELIABILITY_EXPECTATIONS": "a.yaml,b.yaml", "OTEL_RELIABILITY_STORE": "none"}).keywords()
    {'expectations': ['a.yaml', 'b.yaml'], 'store': None}
    """

    model_config = ConfigDict(extra="forbid")

    expectations: list[str] = Field(default_factory=list)
    conventions: list[str] = Field(default_factory=list)
    store: str | None = None
    # Types only: the processor checks the bounds (EngineSettings), naming the setting.
    max_traces: int | None = None
    max_spans_per_trace: int | None = None
    trace_ttl: float | None = None
    max_paused_runs: int | None = None
    max_queue: int | None = None
    max_label_values: int | None = None
    print_results: bool | None = None

    @field_validator("store")
    @classmethod
    def _none_means_no_store(cls, value: str | None) -> str | None:
        return None if value is None or value.strip().lower() in ("", "none") else value

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> ZeroCodeSettings:
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            raw = environ.get(ENV_PREFIX + name.upper())
            if raw is not None:
                values[name] = [part.strip() for part in raw.split(",") if part.strip()] if name in ("expectations", "conventions") else raw
        return cls.model_validate(values)

    def keywords(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class ReliabilityConfigurator(_OTelSDKConfigurator):
    """The ``opentelemetry_configurator`` entry point ``otel_reliability`` (see the module's docstring)."""

    def _configure(self, **kwargs: Any) -> None:
        reliability = None if os.environ.get("OTEL_CONFIG_FILE") else _reliability_processor()
        if reliability is not None:
            exporters, processor = reliability
            kwargs["span_processors"] = [*(kwargs.get("span_processors") or ()), processor]
            kwargs["export_span_processor"] = lambda exporter: _behind(exporters, exporter)
        super()._configure(**kwargs)


class _Exported(SpanProcessor):
    """Stands where the SDK would put an exporter's own processor: that one sits behind ours."""


def _behind(exporters: SynchronousMultiSpanProcessor, exporter: SpanExporter) -> SpanProcessor:
    exporters.add_span_processor(BatchSpanProcessor(exporter))
    return _Exported()


def _reliability_processor() -> tuple[SynchronousMultiSpanProcessor, ReliabilitySpanProcessor] | None:
    try:
        settings = ZeroCodeSettings.from_environ()
        exporters = SynchronousMultiSpanProcessor()
        return exporters, ReliabilitySpanProcessor(exporters, **settings.keywords())
    except ValidationError as exc:
        problems = validation_problems(exc, rename=lambda place: ENV_PREFIX + place.upper())
        logger.error("otel-reliability is not judging this process: %s", problems)
    except (ExpectationError, ValueError, OSError, sqlite3.Error) as exc:
        logger.error("otel-reliability is not judging this process: %s", exc)
    return None
