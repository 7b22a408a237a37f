"""docs/frameworks/mlflow.md's snippet, run as written: its ``@mlflow.trace`` agent loop, with
``mlflow.openai.autolog()`` on the capture's scripted model, is judged and stored as the captured
mlflow unknown_tool scenario (the model asks for a tool the loop does not have, then for
multiply: ``FAILED``), while MLflow's own OTLP exporter still sends the run to the collector
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, as the page says: the harness's receiver). It runs in the MLflow capture's venv
(.venv-live-mlflow). ``MLFLOW_TRACKING_URI`` is a closed port: mlflow-tracing needs one, and
with an OTLP endpoint set it never sends there."""

from __future__ import annotations

from .harness import assert_page_stored_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    with cc.ScriptedOpenAI() as model:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
        monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")  # MLflow's usage telemetry: nothing leaves the machine
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "scripted-no-key")
        page = run_page_snippet("mlflow", tmp_path / "results.db", monkeypatch, endpoint="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        model.script(cc.reply(tool_calls=[cc.tool_call("format_disk", {"drive": "C:"}, "call_format_1")]),
                     cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 6, "b": 7}, "call_multiply_1")]),
                     cc.reply("I cannot format disks; 6*7 is 42."))
        page.namespace["calculator"]("Format the disk, then 6*7")
        assert model.left() == 0, model.left()
    stored = assert_page_stored_as_captured(page, "mlflow", "unknown_tool")
    run_spans = [page.receiver.span(r.trace_id, r.run_span_id) for r in stored]
    assert [s.name if s else None for s in run_spans] == ["calculator"], "MLflow exported the run span itself"
