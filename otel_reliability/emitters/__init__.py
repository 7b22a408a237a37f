"""Publishing a verdict, one module per output (SPEC §6).

- ``span_attributes``: the ``reliability.*`` run-span attributes and the ``gen_ai.evaluation.result`` event;
- ``metrics``: ``ReliabilityMetrics``, the OpenTelemetry instruments;
- ``table``: rich tables in the shape of Agno's "Reliability Summary".

Stores live in ``otel_reliability.stores``.
"""
