"""``jaeger://HOST:PORT`` as an input of ``eval`` and ``inspect`` (SPEC §10), against a real
Jaeger v2 (``.ci/setup`` builds it from the Go module ``github.com/jaegertracing/jaeger``),
fed by the real Python OTLP/gRPC exporter.

The whole corpus goes to Jaeger; pulled back, it gets exactly the verdicts ``eval`` gives
the files, whether a search answers in one page or in many (a page of 7 traces halves the
window again and again), and ``--limit`` keeps that many traces and says it stopped. A
Jaeger that cannot be reached, refuses a request or has no such trace is one line naming
the URL and exit 2, without a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from otel_reliability.sources.backend_http import BackendQuery
from otel_reliability.sources.jaeger import pull

from .backend_harness import EXPORT_CALLS, JAEGER_BINARY, SINCE, cli, missing, one_line_naming, start_jaeger
from .receiver_harness import by_run, eval_json, export_split, remap_corpus, verdict_differences, wait_until

SERVICE = "otel-reliability-python-replay"  # the resource the replay exporter sends (receiver_harness)
JUDGED = (0, 1, 3)  # every run passed, one failed, or none failed and some were not evaluated


@pytest.fixture(scope="module")
def fed_jaeger(tmp_path_factory):
    """A Jaeger holding the whole corpus (fresh ids), and what ``eval`` says of the files."""
    if reason := missing(JAEGER_BINARY, "Jaeger (built with Go)"):
        pytest.fail(reason)
    workdir = tmp_path_factory.mktemp("jaeger")
    jaeger = start_jaeger(workdir / "server")
    try:
        files = remap_corpus(workdir / "corpus", salt="jaeger-source")
        expected = by_run(eval_json(files)["results"])
        sent = export_split(jaeger.grpc_endpoint, files, EXPORT_CALLS)
        assert sent["exported"] == sent["replayed"] > 0 and not sent["failed"], sent
        # Jaeger batches what it received before storing it: wait until every span can be read.
        query = BackendQuery(since_ns=0, until_ns=2**63 - 1, service=SERVICE, limit=100_000, page_size=100_000 - 1)
        wait_until(lambda: len(pull(jaeger.url, query).spans) >= sent["exported"], 120, "every span stored in Jaeger", 1.0)
        yield jaeger, expected, files
    finally:
        code = jaeger.stop()
        assert code == 0, f"Jaeger exited {code} on SIGTERM:\n{jaeger.log_text()}"


@pytest.mark.parametrize("paging", [[], ["--page-size", "7"]], ids=["one page", "pages of 7 traces"])
def test_the_corpus_pulled_back_from_jaeger_gets_eval_s_verdicts_on_the_files(fed_jaeger, paging):
    jaeger, expected, _ = fed_jaeger
    assert len(expected) >= 35 and any(r["eval_status"] == "FAILED" for r in expected)

    done = cli("eval", jaeger.url, "--since", SINCE, "--service", SERVICE, "--format", "json", *paging)

    assert done.returncode in JUDGED, done.stderr
    document = json.loads(done.stdout)
    assert {r["source"] for r in document["results"]} == {jaeger.url}
    got = by_run(document["results"])
    assert got == expected, verdict_differences(got, expected)


def test_every_service_is_searched_when_none_is_named_and_files_and_backends_mix(fed_jaeger, tmp_path):
    jaeger, expected, _ = fed_jaeger
    [elsewhere] = remap_corpus(tmp_path, salt="not-sent-to-jaeger")[:1]  # ids Jaeger does not hold
    alone = cli("eval", str(elsewhere), "--format", "json")
    assert alone.returncode in JUDGED, alone.stderr
    from_file = by_run(json.loads(alone.stdout)["results"])
    assert from_file

    done = cli("eval", str(elsewhere), jaeger.url, "--since", SINCE, "--format", "json")

    assert done.returncode in JUDGED, done.stderr
    results = json.loads(done.stdout)["results"]
    assert by_run(r for r in results if r["source"] == str(elsewhere)) == from_file
    assert by_run(r for r in results if r["source"] == jaeger.url) == expected


def test_limit_keeps_that_many_traces_and_says_it_stopped(fed_jaeger):
    jaeger, expected, _ = fed_jaeger

    done = cli("eval", jaeger.url, "--since", SINCE, "--service", SERVICE, "--limit", "5", "--page-size", "3", "--format", "json")

    assert done.returncode in JUDGED, done.stderr
    traces = {r["trace_id"] for r in json.loads(done.stdout)["results"]}
    assert len(traces) <= 5 and traces <= {r["trace_id"] for r in expected}
    assert f"{jaeger.url}: stopped at --limit 5 traces" in done.stderr


# A pull that yields no trace: the query, and the exit code without and with --allow-empty.
EMPTY_PULLS = {
    "a time window that holds no trace": ["--since", SINCE, "--until", "2000-01-02", "--service", SERVICE],
    "a service that sent no trace": ["--since", SINCE, "--service", "no-such-service"],
}


@pytest.mark.parametrize("query", EMPTY_PULLS.values(), ids=EMPTY_PULLS.keys())
@pytest.mark.parametrize(("allow", "code"), [([], 4), (["--allow-empty"], 0)], ids=["gate", "allow-empty"])
def test_a_pull_that_yields_no_trace_exits_4_unless_allowed(fed_jaeger, query, allow, code):
    jaeger, _, _ = fed_jaeger

    done = cli("eval", jaeger.url, *query, "--format", "json", *allow)

    assert done.returncode == code, done.stderr
    assert json.loads(done.stdout)["results"] == []
    assert "no agent runs found" in done.stderr and "Traceback" not in done.stderr
    assert (f"no span read from {jaeger.url}" in done.stderr) == (code == 4), done.stderr


def test_inspect_of_a_pulled_trace_says_what_jaeger_cannot_give(fed_jaeger):
    jaeger, expected, _ = fed_jaeger
    trace = expected[0]["trace_id"]

    done = cli("inspect", jaeger.url, "--trace-id", trace, "--format", "json")

    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert {s["trace_id"] for s in document["spans"]} == {trace}
    assert any(r["span_id"] == expected[0]["run_span_id"] for r in document["runs"])
    [backend] = document["backends"]
    assert backend["source"] == jaeger.url and backend["traces"] == 1
    assert any("log records" in line for line in backend["cannot"])
    table = cli("inspect", jaeger.url, "--trace-id", trace)
    assert f"read from {jaeger.url}: 1 trace(s)" in table.stdout and "cannot: no log records" in table.stdout


def test_a_jaeger_that_refuses_or_lacks_the_trace_is_one_line_naming_the_url(fed_jaeger):
    jaeger, _, _ = fed_jaeger
    cases = {
        # the memory store refuses a search deeper than it holds traces (max_traces 100,000)
        "refused": (["--page-size", "200000"], ["refused with HTTP", "search depth"]),
        "no such trace": (["--trace-id", "1" * 32], [f"trace {'1' * 32} is not in Jaeger"]),
    }
    for name, (options, words) in cases.items():
        done = cli("eval", jaeger.url, "--since", SINCE, "--service", SERVICE, *options)
        one_line_naming(done, jaeger.url, *words)


def test_a_pull_past_its_byte_bound_is_refused_not_cut_short(fed_jaeger):
    jaeger, _, _ = fed_jaeger

    done = cli("eval", jaeger.url, "--since", SINCE, "--service", SERVICE, "--max-pulled-mib", "1")

    one_line_naming(done, jaeger.url, "exceed the pull's byte bound", "--max-pulled-mib")


def test_the_attribute_filter_keeps_only_traces_with_a_span_that_has_it(fed_jaeger):
    jaeger, expected, files = fed_jaeger
    traces_with: dict[tuple[str, str], set[str]] = {}  # (key, text value) -> the traces a span of which has it
    for path in files:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        for rs in document.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for span in ss.get("spans", []):
                    for kv in span.get("attributes", []):
                        if "stringValue" in kv.get("value", {}):
                            traces_with.setdefault((kv["key"], kv["value"]["stringValue"]), set()).add(span["traceId"])
    judged = {r["trace_id"] for r in expected}
    # an attribute some judged traces have and others do not
    (key, value), having = next(
        (pair, traces & judged) for pair, traces in sorted(traces_with.items()) if 1 < len(traces & judged) < len(judged)
    )

    done = cli("eval", jaeger.url, "--since", SINCE, "--attribute", f"{key}={value}", "--format", "json")

    assert done.returncode in JUDGED, done.stderr
    kept = by_run(json.loads(done.stdout)["results"])
    assert kept == [r for r in expected if r["trace_id"] in having], (key, value)


def test_compare_and_report_judge_what_they_pull_as_eval_does(fed_jaeger, tmp_path):
    jaeger, expected, files = fed_jaeger
    on_files = tmp_path / "files.json"
    on_files.write_text(json.dumps(eval_json(files)), encoding="utf-8")
    pull = [jaeger.url, "--since", SINCE, "--service", SERVICE]

    compared = cli("compare", str(on_files), *pull, "--format", "json")

    assert compared.returncode == 0, compared.stderr
    document = json.loads(compared.stdout)
    assert document["candidate"]["source"] == jaeger.url and not document["regressed"]
    assert not document["newly_failing"] and not document["only_in_baseline"] and not document["only_in_candidate"]
    overall = document["overall"]
    assert overall["baseline"] == overall["candidate"] and overall["candidate"]["runs"] == len(expected), overall

    reported = cli("report", *pull)

    assert reported.returncode == (1 if any(r["eval_status"] != "PASSED" for r in expected) else 0), reported.stderr
    passed = sum(r["eval_status"] == "PASSED" for r in expected)
    assert f"**Correct runs:** {passed}/{len(expected)}" in reported.stdout, reported.stdout[:2000]


def _canonical(value):
    """A written expectation with its lists in a set's order: runs pulled back come in another order."""
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((_canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    return value


def test_expect_writes_from_a_pull_what_it_writes_from_the_files(fed_jaeger):
    jaeger, _, files = fed_jaeger

    from_files = cli("expect", *map(str, files))
    pulled = cli("expect", jaeger.url, "--since", SINCE, "--service", SERVICE)

    assert (from_files.returncode, pulled.returncode) == (0, 0), from_files.stderr + pulled.stderr
    written = [{e["name"]: _canonical(e) for e in yaml.safe_load(done.stdout)["expectations"]} for done in (from_files, pulled)]
    assert written[0] == written[1]
    assert f"of {jaeger.url}:" in pulled.stdout
