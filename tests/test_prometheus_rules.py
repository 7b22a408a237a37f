"""``deploy/prometheus/``: the rules load, and their unit tests pass under ``promtool test rules``
(Debian package ``prometheus``, installed by ``.ci/setup``). Every rule has a unit test:
each recording rule is evaluated by a ``promql_expr_test`` and each alert by an
``alert_rule_test``. Whether the receiver exposes the series the rules read is
``test_prometheus_scrape.py``'s, with a real Prometheus scraping a real receiver."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "prometheus"
RULES = DEPLOY / "otel-reliability.rules.yml"
RULE_TESTS = DEPLOY / "tests" / "otel-reliability.rules.test.yml"


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: run .ci/setup, which installs the Debian package prometheus")
    return found


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"] for rule in group["rules"]]


@pytest.mark.parametrize(
    "args", [["check", "rules", str(RULES)], ["test", "rules", str(RULE_TESTS)]], ids=["check", "unit-tests"]
)
def test_promtool_accepts_the_rules_and_their_unit_tests_pass(args):
    done = subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=120, cwd=RULE_TESTS.parent)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_rule_has_a_unit_test():
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]
    tested_alerts = {case["alertname"] for test in tests for case in test.get("alert_rule_test", [])}
    exprs = " ".join(case["expr"] for test in tests for case in test.get("promql_expr_test", []))
    evaluated = set(re.findall(r"[a-z_]+:[a-z_]+:[a-z0-9_]+", exprs))
    assert {r["alert"] for r in rules() if "alert" in r} <= tested_alerts
    assert {r["record"] for r in rules() if "record" in r} <= evaluated
