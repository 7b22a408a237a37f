"""A run whose spans record no model call and no request cannot show a call the model asked for
that never ran (docs/conventions.md, "Left as they are, by decision", now reversed): its
``fail_on`` refused and pending are ``NOT_EVALUATED``, with a reason a user can act on, where
they used to pass. ``fail_on error`` is judged on its executions, a ``fail_on`` already broken by
an error or a refusal seen stays broken, and a run whose model turns something else stands for
(a transcript in its output, a runtime's message spans) is judged as before.
"""

from __future__ import annotations

import pytest

from otel_reliability.expectations import DEFAULT_EXPECTATION, Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, FAILED, NOT_EVALUATED, OK, PASSED, REFUSED, Attempt, Run

from .test_cold_doubt import ERRORS_ONLY, judged

UNSEEN = ("the spans record no model call and no request, so a call the model asked for that never ran would not be "
          "seen (instrument the model client, or enable content capture)")
REFUSED_UNSEEN = f"fail_on refused: {UNSEEN}"

# (trace, read cold, the verdict under the default expectation, (tool, outcome) of each call, its
# unevaluated checks)
SCENARIOS = [
    # autogen, an agent run alone: no model span and no runtime message span; the refused call
    # (an unknown tool, a workbench's refusal) is recorded nowhere: it was PASSED
    ("autogen/unknown_tool", False, NOT_EVALUATED, [("multiply", OK)], [REFUSED_UNSEEN]),
    ("autogen/blocked_workbench", False, NOT_EVALUATED, [("delete_file", OK)], [REFUSED_UNSEEN]),
    # the cost: a clean run of the same shape is no longer PASSED either, nor a sub-agent's
    ("autogen/single_tool", False, NOT_EVALUATED, [("multiply", OK)], [REFUSED_UNSEEN]),
    ("autogen/delegation_agent_tool", False, NOT_EVALUATED, [("researcher", OK), ("lookup", OK)], [REFUSED_UNSEEN]),
    # an error or a refusal seen breaks fail_on as before
    ("autogen/tool_error", False, FAILED, [("fetch_url", ERROR), ("fetch_url", ERROR)], []),
    ("autogen/invalid_arguments", False, FAILED, [("multiply", REFUSED), ("multiply", OK)], []),
    # a team run inside an application span: the runtime's message spans carry the requests
    ("autogen/unknown_tool_team", False, FAILED, [("format_disk", REFUSED), ("multiply", OK)], []),
    # read cold, those spans are no model turns: the refusal is unseen again
    ("autogen/unknown_tool_team", True, NOT_EVALUATED, [("multiply", OK)], [REFUSED_UNSEEN]),
    # CrewAI's default mode: no model span, but the run's transcript stands for its model turns
    ("crewai/unknown_tool", False, FAILED, [("format_disk", REFUSED), ("multiply", OK)], []),
    ("crewai/single_tool", False, PASSED, [("multiply", OK)], []),
    # Spring AI: model spans without messages (content not captured) are model calls: judged as before
    ("spring_ai/limit", False, PASSED, [("multiply", OK), ("multiply", OK)], []),
]


@pytest.mark.parametrize(("trace", "cold", "status", "chain", "unjudged"), SCENARIOS,
                         ids=[f"{t}-{'cold' if c else 'warm'}" for t, c, *_ in SCENARIOS])
def test_fail_on_refused_is_not_evaluated_where_no_request_can_be_seen(trace, cold, status, chain, unjudged):
    [verdict] = judged(trace, cold=cold)
    assert (verdict.eval_status, [(a.tool, a.outcome) for a in verdict.chain]) == (status, chain)
    assert verdict.unevaluated_checks == unjudged


def test_fail_on_error_alone_is_still_judged_on_the_executions():
    [clean] = judged("autogen/single_tool", ERRORS_ONLY, cold=False)
    [failed] = judged("autogen/tool_error", ERRORS_ONLY, cold=False)
    assert (clean.eval_status, clean.unevaluated_checks, failed.eval_status) == (PASSED, [], FAILED)


def _run(*attempts: Attempt, unseen: bool = True, members: tuple[Run, ...] = ()) -> Run:
    return Run(1, 2, "calc", "invoke_agent calc", 0, 9, own_attempts=list(attempts), members=list(members),
               requests_unseen=unseen)


def _call(outcome: str = OK) -> Attempt:
    return Attempt("multiply", {"a": 10}, outcome, "calc", ("calc",), start_ns=1)


PENDING_TOO = Expectation(name="all", fail_on=["error", "refused", "pending"])
REFUSALS = Expectation(name="refusals", fail_on=["refused"])

# (the run, the expectation, its verdict, its unevaluated checks)
SYNTHETIC = [
    pytest.param(_run(_call()), ERRORS_ONLY, PASSED, [], id="fail_on-error-alone-judged"),
    pytest.param(_run(_call()), DEFAULT_EXPECTATION, NOT_EVALUATED, [REFUSED_UNSEEN], id="default-not-evaluated"),
    pytest.param(_run(_call()), PENDING_TOO, NOT_EVALUATED, [f"fail_on refused, pending: {UNSEEN}"], id="pending-unseen-too"),
    pytest.param(_run(_call(ERROR)), DEFAULT_EXPECTATION, FAILED, [], id="an-error-seen-fails"),
    pytest.param(_run(_call(REFUSED)), REFUSALS, FAILED, [], id="a-refusal-seen-fails"),
    pytest.param(_run(_call(), unseen=False), DEFAULT_EXPECTATION, PASSED, [], id="requests-seen-judged"),
    # a member run whose model turns are recorded: the team's requests can be seen in part, judged as before
    pytest.param(_run(_call(), members=(_run(unseen=False),)), DEFAULT_EXPECTATION, PASSED, [], id="a-member-sees-requests"),
]


@pytest.mark.parametrize(("run", "expectation", "status", "unjudged"), SYNTHETIC)
def test_which_fail_on_checks_a_run_with_no_model_turn_leaves_unjudged(run, expectation, status, unjudged):
    verdict = evaluate(run, expectation)
    assert (verdict.eval_status, verdict.unevaluated_checks) == (status, unjudged)
