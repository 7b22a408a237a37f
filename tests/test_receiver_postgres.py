"""A receiver whose results store is PostgreSQL (``--store postgresql://…``, a real server):
the results API answers from it as from SQLite, and ``report`` and ``reputation`` read
the verdicts and standings the receiver kept there."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from .receiver_harness import REPO, by_run, eval_json, receivers, remap_corpus, wait_until  # noqa: F401 - fixture
from .reputation_postgres import fresh_schema_url, postgres_server  # noqa: F401 - fixture

FRAMEWORKS = ("pydantic_ai", "openai_agents")  # paused and resumed runs, failures, several agents


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "otel_reliability.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_a_receiver_on_postgresql_serves_eval_s_verdicts_and_the_clis_read_its_store(
    receivers, postgres_server, tmp_path  # noqa: F811 - the imported fixtures
):
    url = fresh_schema_url(postgres_server)
    receiver = receivers.start(store=url)
    files = [f for f in remap_corpus(tmp_path / "corpus", salt="postgres") if f.parent.name in FRAMEWORKS]
    expected = by_run(eval_json(files)["results"])
    assert any(r["eval_status"] == "FAILED" for r in expected) and any(r["eval_status"] == "PASSED" for r in expected)
    trace_ids = {r["trace_id"] for r in expected}

    for path in files:
        reply = receiver.post_traces(path.read_bytes(), "application/json")
        assert reply.status == 200, (reply.status, reply.body)

    wait_until(lambda: by_run(receiver.results_for(trace_ids)) == expected, 30, "eval's verdicts from the receiver")
    failed = [r for r in expected if r["eval_status"] == "FAILED"]
    assert by_run(receiver.results(status="failed")["results"]) == failed  # filters as on SQLite
    agent = expected[0]["agent"]
    assert by_run(receiver.results(agent=agent)["results"]) == [r for r in expected if r["agent"] == agent]
    assert len(receiver.results(limit=2)["results"]) == 2

    report = _cli("report", url)
    assert report.returncode == 1, report.stderr  # some runs failed
    passed = sum(r["eval_status"] == "PASSED" for r in expected)  # a paused run is NOT_EVALUATED, not correct
    assert f"**Correct runs:** {passed}/{len(expected)}" in report.stdout

    def standings() -> Counter:
        done = _cli("reputation", "--store", url, "--format", "json")
        assert done.returncode == 0, done.stderr
        return Counter({s["agent"]: s["total_evaluations"] for s in json.loads(done.stdout)["standings"]})

    wait_until(lambda: standings() == Counter(r["agent"] for r in expected), 15, "every run in the standings once")
