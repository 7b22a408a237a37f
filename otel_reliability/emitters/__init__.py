"""Publishing a verdict, one module per output (SPEC §6).

- ``span_attributes``: the ``reliability.*`` run-span attributes and the ``gen_ai.evaluation.result`` event;
- ``metrics``: ``ReliabilityMetrics``, the OpenTelemetry instruments;
- ``table``: rich tables in the shape of Agno's "Reliability Summary";
- ``otlp_file``: ``OTLPJsonFileSpanExporter``, spans written as OTLP/JSON Lines for ``eval`` to read.

Stores live in ``otel_reliability.stores``.
"""
