"""OpenInference over Haystack records no tool span: the calls are the model's requests and
their answers, Haystack's ``ToolCallResult`` reprs in the next generator span's ``input.value``
(``adapters/conventions/openinference_haystack.yaml``). A failed answer opens its call (a body
that raised and a call Haystack refused are both ``error=True``); one that ran stays read as
run with its outcome not recorded; a call no answer names after one that did may have run
after the last model turn (``max_agent_steps``)."""

from __future__ import annotations

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS

NOT_RECORDED = "outcome of {} not recorded: no span records the run's tool executions"

# scenario → verdict, chain (tool:outcome[|could be], * when the outcome is not recorded), unevaluated tool
READ = {
    "blocked_approval_rejected": ("FAILED", ["delete_file:error|refused"], None),
    "invalid_arguments": ("FAILED", ["multiply:error|refused", "multiply:ok*"], "multiply"),
    "tool_error": ("FAILED", ["divide:error|refused", "divide:ok*"], "divide"),
    "unknown_tool": ("FAILED", ["format_disk:error|refused", "multiply:ok*"], "multiply"),
    "single_tool": ("NOT_EVALUATED", ["multiply:ok*"], "multiply"),
    "blocked_tool_call_limit": ("NOT_EVALUATED", ["get_weather:ok*", "get_weather:ok*"], "get_weather"),
}


@pytest.mark.parametrize("scenario", READ)
def test_haystack_answers_open_the_calls_they_say_failed(scenario):
    status, chain, unevaluated = READ[scenario]
    [result] = judge_spans(Engine(), read_telemetry(CORPUS / "haystack" / f"{scenario}.json").spans)
    verdict = result.verdict
    read = [
        f"{a.tool}:{a.outcome}" + (f"|{a.could_be}" if a.could_be else "") + ("" if a.outcome_known else "*")
        for a in verdict.chain
    ]
    assert (verdict.eval_status, read) == (status, chain)
    assert (NOT_RECORDED.format(unevaluated) in verdict.unevaluated_checks) == (unevaluated is not None)
