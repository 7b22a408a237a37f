"""Test-suite wiring: what pytest must not import, and the ``live`` / ``slow`` markers.

The capture scripts and the live framework tests run in each framework's own environment
(tests/capture/README.md, tests/test_live_frameworks.py), not in the test suite's: pytest
must not import them.

``pytest -m "not live and not slow"`` is the contributor's fast loop (README, "Run the
tests"); the full command runs everything. A module is marked here, with why, rather than in
each file: the table is the one place that says what the fast loop leaves out.
``tests/test_marked_modules.py`` checks it against what each module's tests reach.
"""

from __future__ import annotations

import pytest

collect_ignore_glob = ["capture/*", "live/*"]

# module → (marker, why): ``live`` drives something beyond .venv's Python (a framework's own
# venv, Node.js, the Collector, Jaeger, Phoenix, Prometheus, Chromium, the official BFCL checker); ``slow``
# takes tens of seconds (receivers in subprocesses through crashes, outages, floods, big payloads).
MARKED = {
    "test_live_frameworks": ("live", "each framework's runs in its own .venv-live-<framework>"),
    "test_framework_docs": ("live", "the docs pages' snippets in each framework's venv"),
    "test_framework_docs_node": ("live", "the Vercel AI SDK page under Node.js"),
    "test_framework_docs_genkit": ("live", "the Genkit page under Node.js"),
    "test_framework_docs_spring_ai": ("live", "the Spring AI page's app on the JVM, built with Maven from ~/.m2"),
    "test_live_agno": ("live", "agno agents and teams, instrumented"),
    "test_live_pydantic_ai": ("live", "pydantic-ai agents, instrumented"),
    "test_reputation_live": ("live", "pydantic-ai agents feeding standings"),
    "test_receiver_loadbalancing": ("live", "the OpenTelemetry Collector routing to receivers"),
    "test_collector_config": ("live", "the OpenTelemetry Collector"),
    "test_prometheus_scrape": ("live", "a real Prometheus scraping receivers"),
    "test_prometheus_rules": ("live", "promtool on the rules"),
    "test_grafana_dashboard": ("live", "a real Prometheus answering the dashboard's queries"),
    "test_reports_chromium": ("live", "Chromium rendering the HTML report"),
    "test_receiver_exporters": ("live", "the Python and Node.js OTLP exporters against a receiver"),
    "test_bfcl_agreement": ("live", "the official BFCL checker over the dataset"),
    "test_sources_jaeger": ("live", "a real Jaeger, built with Go into .cache/jaeger"),
    "test_sources_phoenix": ("live", "a real Phoenix server, from .venv-phoenix"),
    "test_receiver_byte_budget": ("slow", "gigabytes sent to measure memory under the byte budget"),
    "test_receiver_durability": ("slow", "receivers killed and restarted"),
    "test_receiver_restart": ("slow", "receivers restarted with traffic in flight"),
    "test_intake_faults": ("slow", "full and read-only disks under a receiver"),
    "test_store_outage": ("slow", "PostgreSQL stopped under a receiver"),
    "test_receiver_shards": ("slow", "receivers with worker processes"),
    "test_receiver_slow_clients": ("slow", "clients that stall until the read timeouts"),
    "test_receiver_postgres": ("slow", "receivers sharing a PostgreSQL store"),
    "test_long_runs": ("slow", "runs of thousands of turns"),
    "test_sources_fuzz": ("slow", "property-based fuzzing of the readers"),
    "test_json_slices": ("slow", "property-based: any JSON document against json.loads"),
    "test_engine_sizes": ("slow", "tracemalloc measures the buffer's byte estimates"),
    "test_wheel": ("slow", "builds and installs the wheel"),
    "test_zero_code": ("slow", "opentelemetry-instrument in subprocesses"),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marked = MARKED.get(item.path.stem)  # doctests of the package are in no table: fast
        if marked is not None:
            item.add_marker(getattr(pytest.mark, marked[0]))
