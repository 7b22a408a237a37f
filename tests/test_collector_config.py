"""``collector-config/loadbalancing.yaml`` as the Collector's docs recommend (issue 14, item 10):
the real Collector accepts it as it ships; ``memory_limiter`` is the first processor and
``batch`` follows it; ``health_check`` is on; and it keeps the OTLP ports 4317/4318,
which is why receivers on the same host are documented elsewhere. That the health check
answers and the pipeline routes whole traces is ``test_receiver_loadbalancing.py``'s
(``start_collector`` waits for the health check)."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from .receiver_harness import COLLECTOR_CONFIG, collector_binary

CONFIG = COLLECTOR_CONFIG / "loadbalancing.yaml"


def test_the_collector_accepts_the_config_as_it_ships():
    binary = collector_binary()
    if not binary.is_file():
        pytest.fail(f"{binary} is missing: run .ci/setup, which builds it from collector-config/builder.yaml")
    env = {**os.environ, "OTEL_RELIABILITY_RECEIVERS": "[127.0.0.1:4327, 127.0.0.1:4337]"}
    done = subprocess.run(
        [str(binary), "validate", f"--config=file:{CONFIG}"], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr


def test_the_pipeline_limits_memory_first_then_batches_and_reports_health():
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    traces = config["service"]["pipelines"]["traces"]
    assert traces["processors"][0] == "memory_limiter"
    assert traces["processors"].index("batch") > 0
    assert "health_check" in config["service"]["extensions"]


def test_the_collector_takes_the_otlp_ports_and_receivers_on_its_host_go_elsewhere():
    protocols = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["receivers"]["otlp"]["protocols"]
    assert (protocols["grpc"]["endpoint"], protocols["http"]["endpoint"]) == ("0.0.0.0:4317", "0.0.0.0:4318")
    readme = (COLLECTOR_CONFIG / "README.md").read_text(encoding="utf-8")
    for receiver_port in ("4327", "4328", "4337", "4338"):
        assert f"127.0.0.1:{receiver_port}" in readme
