"""Reading many trace files on every core (``sources.parallel``) gives what reading them one
after the other gives: the same records in the same order, the same verdicts -- a run
paused in one file and resumed in another included -- and the same first error."""

from __future__ import annotations

import json

import pytest

from otel_reliability.cli import main
from otel_reliability.engine import Engine, judge_at_end
from otel_reliability.jsontext import encode_document
from otel_reliability.results import results_document
from otel_reliability.sources import TraceInputError
from otel_reliability.sources.parallel import read_records

from .corpus import CORPUS, trace_files

PAUSED_AND_RESUMED = CORPUS / "pydantic_ai" / "refused_approval_denied.json"


def split_by_trace(source, first_name, last_name, folder):
    """Write the earlier trace of ``source`` to ``first_name`` and the later to ``last_name``."""
    document = json.loads(source.read_text())
    traces: dict[str, list] = {}
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                traces.setdefault(span["traceId"], []).append(span)
    earlier, later = sorted(traces.values(), key=lambda spans: min(int(s["startTimeUnixNano"]) for s in spans))
    for name, spans in ((first_name, earlier), (last_name, later)):
        (folder / name).write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    return later[0]["traceId"].lower()


@pytest.fixture
def folder(tmp_path):
    """Every corpus trace, twice, and a paused run whose resumption is in the last file."""
    for copy in range(2):
        for path in trace_files():
            (tmp_path / f"{copy}-{path.parent.name}-{path.name}").write_bytes(path.read_bytes())
    split_by_trace(PAUSED_AND_RESUMED, "0-paused.json", "z-resumed.json", tmp_path)
    return tmp_path


def files_in(folder):
    return sorted(folder.iterdir())


def test_records_read_on_two_cores_are_the_serial_records_in_file_order(folder):
    assert read_records(files_in(folder), workers=2) == read_records(files_in(folder), workers=1)


def test_eval_of_a_folder_reports_what_judging_the_files_serially_reports(folder, capsys):
    serial = [j.result for j in judge_at_end(Engine(), read_records(files_in(folder), workers=1))]
    first_file: dict[tuple[int, int], str] = {}
    for path in files_in(folder):
        for record in read_records([path], workers=1):  # a run span, or the span a run was inferred from
            first_file.setdefault((record.trace_id, record.span_id), str(path))
    for result in serial:  # eval names the first file that holds the run span
        result.source = first_file[result.trace_id, result.run_span_id]
    code = main(["eval", "--format", "json", str(folder)])
    out, _ = capsys.readouterr()
    assert code == 1  # the corpus holds failed runs
    assert out == encode_document(results_document(serial)) + "\n"


def test_a_run_resumed_in_another_file_joins_the_paused_run(tmp_path, capsys):
    for number in range(20):  # files enough for the two to be read by different workers
        (tmp_path / f"m-{number:02d}.json").write_bytes((CORPUS / "pydantic_ai" / "single_tool.json").read_bytes())
    resumed_trace = split_by_trace(PAUSED_AND_RESUMED, "0-paused.json", "z-resumed.json", tmp_path)
    main(["eval", "--format", "json", str(tmp_path)])
    [resumed] = [r for r in json.loads(capsys.readouterr().out)["results"] if r["trace_id"] == resumed_trace]
    assert [(a["tool"], a["outcome"]) for a in resumed["chain"]] == [("delete_file", "refused")]


def test_the_first_unreadable_file_in_order_is_the_one_reported(folder):
    (folder / "1-bad.json").write_text("{not json")
    (folder / "5-bad.json").write_text("")
    with pytest.raises(TraceInputError) as serial:
        read_records(files_in(folder), workers=1)
    with pytest.raises(TraceInputError) as parallel:
        read_records(files_in(folder), workers=2)
    assert str(parallel.value) == str(serial.value)
    assert "1-bad.json" in str(parallel.value)
