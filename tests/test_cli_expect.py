"""``otel-reliability expect``: an expectation file written from real runs makes ``eval`` pass on
those runs, and fail on the same runs with a tool removed or an argument changed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from otel_reliability.cli import main
from otel_reliability.engine import Engine, judge_all_at_end
from otel_reliability.expectations import load_expectations
from otel_reliability.model import OK
from otel_reliability.sources.parallel import read_files

from .corpus import CORPUS, INVARIANT_BROKEN, scenario_id

FOLDERS = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())  # every corpus folder, adapted or still lifting
NO_RUN = ("otel-reliability: no agent run found in the sources, nothing to write from: see how their spans were read "
          "with 'otel-reliability inspect SOURCE'")
PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.*-]{2,}")  # a value a text edit of the trace changes everywhere alike


def expect(capsys, *args) -> tuple[int, str, str]:
    code = main(["expect", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def evaluate(capsys, tmp_path, paths, expectations) -> tuple[int, list[dict]]:
    report = tmp_path / "report.json"
    code = main(["eval", *map(str, paths), "--expectations", str(expectations), "--format", "json", "--output", str(report)])
    capsys.readouterr()
    return code, json.loads(report.read_text())["results"]


def judged(paths):
    files = read_files(list(paths), skippable=set(paths))
    records = [r for f in files for r in f.records]
    judgements, _ = judge_all_at_end(Engine([]), records, [e for f in files for e in f.events])
    return [j.result for j in judgements]


def trace_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if not p.name.endswith((".truth.json", ".logs.json")))


def scenario_files(trace: Path) -> list[Path]:
    logs = trace.with_name(trace.name.replace(".json", ".logs.json"))
    return [trace, logs] if logs.exists() else [trace]


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_written_file_passes_eval_on_every_run_it_came_from(folder, tmp_path, capsys):
    written = tmp_path / "expectations.yaml"
    code, _, err = expect(capsys, CORPUS / folder, "--ordered", "--arguments", "exact", "--output", written)
    if not judged(trace_files(CORPUS / folder)):  # no convention reads the folder yet: nothing to write from
        assert (code, err.splitlines()[-1]) == (4, NO_RUN), err
        return
    assert code == 0, err
    loaded = load_expectations([written])  # the file reads back
    assert loaded and all(e.match is not None and e.match.agent == e.name for e in loaded)
    code, results = evaluate(capsys, tmp_path, [CORPUS / folder], written)
    # a run whose spans do not record whether its calls ran is not evaluated under any
    # expectation that names them (the written file says so), nor one whose spans record no call
    # at all, not even a model's (fail_on has nothing to read), nor one whose spans cannot show a
    # call that never ran (no model call and no request, or a model call that asked for tools after
    # which nothing ran: the written fail_on refused cannot see it); every other run passes
    unseen = unseen_calls(sorted((CORPUS / folder).glob("*.json")))  # with the log records, as eval reads the folder
    never_ran = {e.name for e in loaded if {"refused", "pending"} & set(e.fail_on)}  # agents whose file fails on them
    unknowable = {(f"{r.trace_id:032x}", f"{r.run_span_id:016x}") for r in judged(trace_files(CORPUS / folder))
                  if any(not a.outcome_known for a in r.verdict.chain)
                  or (not r.verdict.chain and r.verdict.usage.model_calls == 0) or requests_unseen(r.verdict)
                  or (r.run_span_id in unseen and r.agent in never_ran)}
    for result in results:
        if (result["trace_id"], result["run_span_id"]) in unknowable:
            assert result["eval_status"] == "NOT_EVALUATED", result["explanation"]
        else:
            assert result["eval_status"] == "PASSED", result["explanation"]
    assert code == (3 if unknowable else 0)


def requests_unseen(verdict) -> bool:
    """Whether the run's spans record no model call and no call the model asked for: the written
    ``fail_on`` refused and pending are then not evaluated on it."""
    return verdict.usage.model_calls == 0 and not any(a.witnesses is not None and a.witnesses.request for a in verdict.chain)


def unseen_calls(paths) -> set[int]:
    """The run spans whose runs hold a model call that asked for tools after which nothing ran
    (``Run.unseen_calls``): the written ``fail_on`` refused and pending are not evaluated on them."""
    files = read_files(list(paths), skippable=set(paths))
    judgements, _ = judge_all_at_end(Engine([]), [r for f in files for r in f.records], [e for f in files for e in f.events])
    return {j.result.run_span_id for j in judgements if any(run.unseen_calls for run in j.run.walk())}


def mutable_call(folder: str, argument: bool):
    """A trace file of the folder whose one run made a clean call (whose spans record it ran, its
    outcome not left open, and with ``argument``, with a plain string argument they captured), the call and that value;
    None when the folder has no such run. Runs that called two tools or more come first:
    without its only tool, a run that no span marks (found from its tool spans) is no run at all.
    A trace whose reading holds a call's request beside its execution (``INVARIANT_BROKEN``) is
    left out: without the execution, that request stays an open outcome, honestly NOT_EVALUATED."""
    candidates = []
    for trace in trace_files(CORPUS / folder):
        if scenario_id(trace) in INVARIANT_BROKEN:
            continue
        results = judged(scenario_files(trace))
        if len(results) == 1:
            tools = {a.tool for a in results[0].verdict.chain if a.outcome == OK}
            candidates.append((len(tools) < 2, trace.name, trace, results))
    for _, _, trace, results in sorted(candidates):
        agents = {a.agent for a in results[0].verdict.chain}  # a sub-agent called as a tool is more than its spans
        for attempt in results[0].verdict.chain:
            if attempt.outcome != OK or not attempt.outcome_known or attempt.could_be is not None or attempt.span_id is None or attempt.tool in agents:
                continue
            if not argument:
                return trace, attempt, None
            for value in attempt.arguments.values() if attempt.arguments_captured else ():
                if isinstance(value, str) and PLAIN.fullmatch(value) and value not in attempt.tool:
                    return trace, attempt, value
    return None


def copy_scenario(trace: Path, tmp_path: Path) -> list[Path]:
    folder = tmp_path / "mutated"
    folder.mkdir()
    return [Path(shutil.copy(path, folder / path.name)) for path in scenario_files(trace)]


def remove_spans(path: Path, span_ids: set[str]) -> None:
    """The spans gone, their children handed to the nearest ancestor that stays (as if never made)."""
    document = json.loads(path.read_text())
    scopes = [scope for resource in document.get("resourceSpans", ()) for scope in resource.get("scopeSpans", ())]
    parent_of = {span["spanId"]: span.get("parentSpanId", "") for scope in scopes for span in scope.get("spans", ())}
    for scope in scopes:
        kept = [span for span in scope.get("spans", ()) if span["spanId"] not in span_ids]
        for span in kept:
            while span.get("parentSpanId") in span_ids:
                span["parentSpanId"] = parent_of.get(span["parentSpanId"], "")
        scope["spans"] = kept
    path.write_text(json.dumps(document))


@pytest.mark.parametrize("mutation", ["tool removed", "argument changed"])
@pytest.mark.parametrize("folder", FOLDERS)
def test_the_written_file_fails_the_same_run_mutated(folder, mutation, tmp_path, capsys):
    found = mutable_call(folder, argument=mutation == "argument changed")
    if found is None:
        pytest.skip(f"{folder}: no single-run trace with a clean call (and for an argument, one the spans captured)")
    trace, attempt, value = found
    written = tmp_path / "expectations.yaml"
    assert expect(capsys, *scenario_files(trace), "--output", written)[0] == 0
    unmutated = judged(scenario_files(trace))[0].verdict
    unknowable = requests_unseen(unmutated) or bool(unseen_calls(scenario_files(trace)))
    assert evaluate(capsys, tmp_path, scenario_files(trace), written)[0] == (3 if unknowable else 0)
    mutated = copy_scenario(trace, tmp_path)
    if mutation == "tool removed":
        calls = [a for a in judged(scenario_files(trace))[0].verdict.chain if a.tool == attempt.tool]
        span_ids = {f"{span:016x}" for a in calls for span in (a.span_id, *a.evidence) if span is not None}
        remove_spans(mutated[0], span_ids)
    else:
        for path in mutated:
            path.write_text(path.read_text().replace(str(value), f"{value}-changed"))
    code, [result] = evaluate(capsys, tmp_path, mutated, written)
    if mutation == "tool removed" and result["eval_status"] == "NOT_EVALUATED":
        # with no tool span left in the trace, the answer the model was handed may be the call's
        # result (it ran, untraced): the reader says it cannot tell, naming the call
        assert code == 3 and f"whether {attempt.tool} was refused or ok" in result["explanation"], result["explanation"]
        return
    assert (code, result["eval_status"]) == (1, "FAILED"), result["explanation"]
    if mutation == "tool removed":
        assert any(entry.startswith(attempt.tool) for entry in result["missing_tool_calls"]), result["explanation"]
    else:
        assert attempt.tool in result["failed_argument_checks"], result["explanation"]


def written(capsys, *args) -> dict[str, dict]:
    code, out, err = expect(capsys, *args)
    assert code == 0, err
    return {e.name: e.model_dump(exclude_defaults=True) for e in load_expectations_text(out)}


def load_expectations_text(text: str):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "written.yaml"
        path.write_text(text)
        return load_expectations([path])


PYDANTIC_AI = CORPUS / "pydantic_ai"


@pytest.mark.parametrize(
    ("sources", "options", "agent", "fields"),
    [
        pytest.param(["parallel_tools.json"], ["--ordered"], "weather",
                     {"expected_tool_calls": ["get_weather"], "order": "in_order",
                      "expected_chain": [["get_weather", "get_weather"]],
                      "expected_tool_call_arguments": {"get_weather": [{"city": "Paris"}, {"city": "London"}]}},
                     id="calls-asked-in-one-model-turn-are-one-parallel-group"),
        pytest.param(["sequential_chain.json"], ["--ordered", "--arguments", "names"], "researcher",
                     {"expected_tool_calls": ["search", "parse", "compute"], "order": "in_order",
                      "expected_chain": ["search", "parse", "compute"]},
                     id="a-chain-of-turns-is-one-step-each-and-names-writes-no-arguments"),
        pytest.param(["single_tool.json"], ["--arguments", "exact", "--margin", "0"], "calculator",
                     {"expected_tool_calls": ["multiply"], "argument_match": "exact",
                      "expected_tool_call_arguments": {"multiply": {"a": 10, "b": 5}},
                      "fail_on": ["error", "refused", "pending"], "max_model_calls": 2, "max_repeated_calls": 1},
                     id="margin-0-writes-the-observed-budgets"),
        pytest.param(["refused_unknown_tool.json"], [], "calculator",
                     {"expected_tool_calls": ["multiply"], "allow_additional_tool_calls": True,
                      "allowed_tools": ["format_disk", "multiply"]},
                     id="a-refused-call-is-allowed-never-expected"),
        pytest.param(["single_tool.json", "error_retry.json"], ["--arguments", "names"], "calculator",
                     {"expected_tool_calls": [], "allow_additional_tool_calls": True, "allowed_tools": ["multiply", "divide"],
                      "fail_on": ["refused", "pending"]},
                     id="a-call-only-some-runs-made-is-allowed-not-expected"),
    ],
)
def test_what_is_written_from_real_runs(sources, options, agent, fields, capsys):
    expectation = written(capsys, *(PYDANTIC_AI / s for s in sources), *options)[agent]
    for key, value in fields.items():
        got = expectation.get(key)
        if key == "allowed_tools":
            got, value = sorted(got), sorted(value)
        assert got == value, key


def test_the_file_says_where_it_came_from_and_what_was_left_out(capsys):
    code, out, _ = expect(capsys, PYDANTIC_AI / "single_tool.json", PYDANTIC_AI / "error_retry.json", "--agent", "calculator")
    assert code == 0
    assert re.search(r"^# Written by otel-reliability expect \S+ on \d{4}-\d\d-\d\dT", out, re.M)
    assert f"in trace 03b2cdb329569df8fe94873154545381 of {PYDANTIC_AI / 'single_tool.json'}" in out
    assert re.search(r"^  # multiply: no clean call in 1 of 2 runs \(\w+\); allowed, not expected$", out, re.M)
    assert "  # not failing on error calls: the runs written from had some" in out


def test_the_runs_chosen_by_run_id_and_agent(capsys):
    both = [PYDANTIC_AI / "single_tool.json", PYDANTIC_AI / "parallel_tools.json"]
    assert set(written(capsys, *both)) == {"calculator", "weather"}
    assert set(written(capsys, *both, "--agent", "weather")) == {"weather"}
    assert set(written(capsys, *both, "--run-id", "03b2cdb329569df8fe94873154545381")) == {"calculator"}
    assert set(written(capsys, *both, "--run-id", "7ef6e514fd10c1e5")) == {"weather"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([PYDANTIC_AI / "single_tool.json", "--agent", "nobody"],
                     "otel-reliability: none of the 1 run(s) found is of the agent(s) and run id(s) asked for; agents found: calculator",
                     id="no-run-of-the-agent"),
        pytest.param([PYDANTIC_AI / "single_tool.json", "--run-id", "xyz"],
                     "otel-reliability: --run-id 'xyz': expected a trace id (32 hex digits) or a run span id (16)",
                     id="run-id-not-hex"),
        pytest.param([PYDANTIC_AI / "single_tool.json", "--margin", "-1"],
                     "otel-reliability: --margin must be 0 or more, got -1.0", id="negative-margin"),
    ],
)
def test_nothing_to_write_from_is_one_line_and_exit_2(args, message, capsys):
    code, out, err = expect(capsys, *args)
    assert (code, out, err.strip()) == (2, "", message)


def test_a_source_eval_cannot_read_is_refused_as_eval_refuses_it(capsys):
    missing = PYDANTIC_AI / "no-such-trace.json"
    code, out, err = expect(capsys, missing)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith(f"otel-reliability: {missing}"), err


def test_a_results_store_is_a_source(tmp_path, capsys):
    from otel_reliability.stores import open_store

    store_path = tmp_path / "results.db"
    store = open_store(str(store_path))
    store.add_many(judged([PYDANTIC_AI / "parallel_tools.json"]))
    store.close()
    from_store = written(capsys, store_path, "--arguments", "exact")["weather"]
    from_traces = written(capsys, PYDANTIC_AI / "parallel_tools.json", "--arguments", "exact")["weather"]
    assert from_store == from_traces
