"""A real Prometheus for tests, and the queries of ``deploy/`` it is asked.

- ``start_prometheus`` runs the ``prometheus`` binary (Debian package ``prometheus``,
  installed by ``.ci/setup``) on a free loopback port with its storage in a temporary
  directory, scraping the given targets' ``/metrics`` and evaluating the given rule files
  every second; ``Prometheus.query`` runs an instant query through its HTTP API.
- ``rule_expressions`` and ``dashboard_queries`` read every PromQL expression of
  ``deploy/prometheus`` and ``deploy/grafana``; ``concrete`` replaces the dashboard's
  variables by what Grafana sends when "All" is selected.
- ``DASHBOARD_QUERIES`` is what each dashboard query must return against receivers fed
  with the corpus: the labels every series carries. ``test_prometheus_scrape.py`` runs
  each against a real Prometheus; ``test_grafana_dashboard.py`` checks that every panel
  asks one of them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from .receiver_harness import STARTUP_TIMEOUT_S, STOP_TIMEOUT_S, free_port, terminate, wait_until

REPO = Path(__file__).resolve().parent.parent
RULES = REPO / "deploy" / "prometheus" / "otel-reliability.rules.yml"
DASHBOARD = REPO / "deploy" / "grafana" / "otel-reliability.json"
ALL_AGENTS = ".+"  # the dashboard's allValue for $agent

A = '{gen_ai_agent_name=~"$agent"}'
DASHBOARD_QUERIES: dict[str, set[str]] = {
    f"agent_expectation:agent_reliability_pass:ratio_rate1h{A}": {"gen_ai_agent_name", "reliability_expectation"},
    f"agent_expectation_status:agent_reliability_evaluations:rate1h{A} * 3600": {
        "gen_ai_agent_name", "reliability_expectation", "reliability_status"
    },
    f"agent:agent_reliability_score:mean_rate1h{A}": {"gen_ai_agent_name"},
    f"agent:agent_reliability_pass:ratio_rate1h{A}": {"gen_ai_agent_name"},
    f"agent_version:agent_reliability_pass:ratio_rate1h{A}": {"gen_ai_agent_name", "gen_ai_agent_version"},
    f"agent:agent_reliability_tool_call_errors:ratio_rate1h{A}": {"gen_ai_agent_name"},
    f"agent:agent_reliability_tool_call_refusals:ratio_rate1h{A}": {"gen_ai_agent_name"},
    f"agent:agent_reliability_tool_calls_unexpected:ratio_rate1h{A}": {"gen_ai_agent_name"},
    f"sum by (gen_ai_tool_name, reliability_outcome) (agent_tool_outcome:agent_reliability_tool_calls:rate1h{A}) * 3600": {
        "gen_ai_tool_name", "reliability_outcome"
    },
    f"agent_tool:agent_reliability_tool_calls_unexpected:increase1h{A}": {"gen_ai_agent_name", "gen_ai_tool_name"},
    f"agent:agent_reliability_reputation_score:min{A}": {"gen_ai_agent_name"},
    f"agent:agent_reliability_reputation_grade:min{A}": {"gen_ai_agent_name"},
    "instance:agent_reliability_spans_received:rate5m": {"job", "instance"},
    "instance_reason:agent_reliability_spans_dropped:rate5m": {"job", "instance", "reason"},
    "instance_reason:agent_reliability_traces_dropped:rate5m": {"job", "instance", "reason"},
    "instance:agent_reliability_receiver_request_duration_seconds:p99_rate5m": {"job", "instance"},
    "instance:agent_reliability_traces_buffered:sum": {"job", "instance"},
    "instance:agent_reliability_evaluations_late:rate5m": {"job", "instance"},
}


def prometheus_binary() -> str | None:
    return shutil.which("prometheus")


@dataclass
class Prometheus:
    process: subprocess.Popen
    port: int
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def api(self, path: str, **params: str) -> Any:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[tuple[dict[str, str], float]]:
        """An instant query: (labels, value) per series of the resulting vector."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", (expr, data)
        return [(series["metric"], float(series["value"][1])) for series in data["result"]]

    def stop(self) -> int:
        return terminate(self.process, STOP_TIMEOUT_S, "prometheus", self.log_text)


def start_prometheus(workdir: Path, targets: Sequence[str], rule_files: Sequence[Path] = ()) -> Prometheus:
    """Scrape ``targets`` (HOST:PORT serving /metrics) every second as job ``otel-reliability``."""
    binary = prometheus_binary()
    assert binary, "prometheus is missing: run .ci/setup, which installs the Debian package prometheus"
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [{"job_name": "otel-reliability", "static_configs": [{"targets": list(targets)}]}],
    }), encoding="utf-8")
    port = free_port()
    log = workdir / "prometheus.log"
    args = [
        binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    prometheus = Prometheus(process, port, log)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"prometheus exited with {process.returncode}:\n{prometheus.log_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    try:
        wait_until(ready, STARTUP_TIMEOUT_S, "prometheus to be ready", interval=0.1)
    except AssertionError:
        process.kill()
        process.wait(10)
        raise
    return prometheus


def rule_expressions() -> dict[str, str]:
    """Every rule's name (``record`` or ``alert``) and its expression."""
    groups = yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
    return {rule.get("record") or rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels(board: dict) -> list[dict]:
    """Every panel, those inside rows included; rows themselves are not panels that query."""
    found = []
    for panel in board["panels"]:
        if panel["type"] == "row":
            found += panel.get("panels", [])
        else:
            found.append(panel)
    return found


def dashboard_queries(board: dict) -> list[str]:
    return [target["expr"] for panel in panels(board) for target in panel["targets"]]


def concrete(expr: str) -> str:
    """The query Grafana sends with every agent selected."""
    return expr.replace("$agent", ALL_AGENTS)


def wait_for(prometheus: Prometheus, expr: str, check: Callable[[list], bool], what: str, timeout: float = 60.0) -> None:
    """Poll ``expr`` until ``check(result)`` holds."""
    wait_until(lambda: check(prometheus.query(expr)), timeout, what, interval=0.25)
