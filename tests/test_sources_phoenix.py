"""``phoenix://HOST:PORT/PROJECT`` as an input of ``eval`` and ``inspect`` (SPEC §10), against
a real Phoenix (``arize-phoenix`` from PyPI, in ``.venv-phoenix``), fed by the real Python
OTLP/gRPC exporter.

The whole corpus goes to Phoenix's ``default`` project; pulled back through its REST API it
gets the verdicts ``eval`` gives the files, field for field but the times: Phoenix keeps
times to the microsecond, so ``started_at``/``ended_at`` may differ by up to that and the
durations by as much (``docs/backends.md``). It does so whether the first pass reads the
window in one page or in pages of 50 spans.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pytest

from otel_reliability.results import parse_rfc3339
from otel_reliability.sources.backend_http import BackendQuery
from otel_reliability.sources.phoenix import pull

from .backend_harness import EXPORT_CALLS, PHOENIX_BINARY, SINCE, cli, missing, one_line_naming, start_phoenix
from .receiver_harness import by_run, eval_json, export_split, remap_corpus, verdict_differences, wait_until

TIMES = ("started_at", "ended_at")
MICROSECOND_NS = 1000


def _untimed(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result without what Phoenix's microseconds change: its times and durations."""
    kept = {k: v for k, v in result.items() if k not in (*TIMES, "duration_ms")}
    if isinstance(kept.get("usage"), dict):
        kept["usage"] = {k: v for k, v in kept["usage"].items() if k != "duration_ms"}
    return kept


@pytest.fixture(scope="module")
def fed_phoenix(tmp_path_factory):
    """A Phoenix holding the whole corpus (fresh ids) in its default project, and what
    ``eval`` says of the files."""
    if reason := missing(PHOENIX_BINARY, "Phoenix into .venv-phoenix"):
        pytest.fail(reason)
    workdir = tmp_path_factory.mktemp("phoenix")
    phoenix = start_phoenix(workdir / "server")
    try:
        files = remap_corpus(workdir / "corpus", salt="phoenix-source")
        expected = by_run(eval_json(files)["results"])
        sent = export_split(phoenix.grpc_endpoint, files, EXPORT_CALLS)
        assert sent["exported"] == sent["replayed"] > 0 and not sent["failed"], sent
        # Phoenix writes what it received in batches: wait until every span can be read.
        query = BackendQuery(since_ns=0, until_ns=2**62, limit=100_000, page_size=1000)
        # Each look reads every span, and Phoenix ingests on the loop that answers: look seldom.
        wait_until(lambda: len(pull(phoenix.url, query).spans) >= sent["exported"], 300, "every span stored in Phoenix", 3.0)
        yield phoenix, expected
    finally:
        phoenix.stop()  # fails the test when Phoenix ignores SIGTERM


@pytest.mark.parametrize("paging", [[], ["--page-size", "50"]], ids=["one page", "pages of 50 spans"])
def test_the_corpus_pulled_back_from_phoenix_gets_eval_s_verdicts_on_the_files(fed_phoenix, paging):
    phoenix, expected = fed_phoenix
    assert len(expected) >= 35 and any(r["eval_status"] == "FAILED" for r in expected)

    done = cli("eval", phoenix.url, "--since", SINCE, "--format", "json", *paging)

    assert done.returncode in (0, 1, 3), done.stderr
    results = json.loads(done.stdout)["results"]
    assert {r["source"] for r in results} == {phoenix.url}
    got = by_run(results)
    assert [_untimed(r) for r in got] == [_untimed(r) for r in expected], verdict_differences(
        map(_untimed, got), map(_untimed, expected)
    )
    for mine, wanted in zip(got, expected):
        for key in TIMES:
            assert abs(parse_rfc3339(mine[key]) - parse_rfc3339(wanted[key])) <= MICROSECOND_NS, (key, mine[key], wanted[key])


def test_limit_keeps_that_many_traces_and_says_it_stopped(fed_phoenix):
    phoenix, expected = fed_phoenix

    done = cli("eval", phoenix.url, "--since", SINCE, "--limit", "4", "--page-size", "10", "--format", "json")

    assert done.returncode in (0, 1, 3), done.stderr
    traces = {r["trace_id"] for r in json.loads(done.stdout)["results"]}
    assert len(traces) <= 4 and traces <= {r["trace_id"] for r in expected}
    assert f"{phoenix.url}: stopped at --limit 4 traces" in done.stderr


def test_inspect_of_a_pulled_trace_says_what_phoenix_cannot_give(fed_phoenix):
    phoenix, expected = fed_phoenix
    trace = expected[0]["trace_id"]

    done = cli("inspect", phoenix.url, "--trace-id", trace, "--format", "json")

    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert {s["trace_id"] for s in document["spans"]} == {trace}
    assert any(r["span_id"] == expected[0]["run_span_id"] for r in document["runs"])
    [backend] = document["backends"]
    assert backend["source"] == phoenix.url and backend["traces"] == 1
    assert any("microsecond" in line for line in backend["cannot"])


@pytest.mark.parametrize(("allow", "code"), [([], 4), (["--allow-empty"], 0)], ids=["gate", "allow-empty"])
def test_a_window_that_holds_no_trace_exits_4_unless_allowed(fed_phoenix, allow, code):
    phoenix, _ = fed_phoenix

    done = cli("eval", phoenix.url, "--since", SINCE, "--until", "2000-01-02", "--format", "json", *allow)

    assert done.returncode == code, done.stderr
    assert json.loads(done.stdout)["results"] == []
    assert "no agent runs found" in done.stderr and "Traceback" not in done.stderr
    assert (f"no span read from {phoenix.url}" in done.stderr) == (code == 4), done.stderr


def test_a_project_phoenix_does_not_have_is_one_line_naming_it(fed_phoenix):
    phoenix, _ = fed_phoenix
    url = phoenix.url.rsplit("/", 1)[0] + "/no-such-project"

    done = cli("eval", url, "--since", SINCE)

    one_line_naming(done, url, "Phoenix has no project 'no-such-project'")
