"""OpenLLMetry over agno (``adapters/conventions/traceloop_agno.yaml``), on the captured traces:
an agent span that carries agno's run id is the run, also when it paused for a confirmation
with one model call and no tool span (its call is then pending, or refused: not evaluated); a
streamed run's spans are each the root of a trace of its own and no span holds them (no run)."""

from __future__ import annotations

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import NOT_EVALUATED
from otel_reliability.sources import read_telemetry

from .corpus import CORPUS

# scenario → (agent, tool:outcome[|could be]) per attempt and the verdict; None: no run found
READ = {
    "approval_approved": ([("Files Agent", "delete_file:pending|refused")], NOT_EVALUATED),
    "blocked_approval_rejected": ([("Files Agent", "delete_file:pending|refused")], NOT_EVALUATED),
    "single_tool": ([("Calculator Agent", "multiply:ok")], "PASSED"),
    "single_tool_stream": None,
    "team_delegation_stream": None,
}


@pytest.mark.parametrize("scenario", READ)
def test_an_agno_run_is_its_agent_span_with_a_run_id(scenario):
    results = judge_spans(Engine(), read_telemetry(CORPUS / "agno_traceloop" / f"{scenario}.json").spans)
    if READ[scenario] is None:
        assert results == []
        return
    chain, status = READ[scenario]
    [result] = results
    read = [(a.agent, f"{a.tool}:{a.outcome}" + (f"|{a.could_be}" if a.could_be else "")) for a in result.verdict.chain]
    assert (read, result.verdict.eval_status) == (chain, status)
