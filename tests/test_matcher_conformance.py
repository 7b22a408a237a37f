"""Agno parity (SPEC §5.1): the matcher reproduces Agno's ReliabilityEval exactly.

Two sources of truth:

- the 43 upstream Agno test scenarios, recorded as evidence plus Agno's result in
  ``fixtures/conformance/agno_reliability_cases.json``;
- Agno itself (installed for the tests): random evidence is given to both
  ``ReliabilityEval`` and ``evaluate``, and the seven result fields must agree.

The evidence → ``Run`` conversion below is test-only glue standing in for trace
assembly (SPEC §4): Agno's ``ToolExecution``s become executions, and each
requested name with no execution anywhere in the run becomes a ``refused``
attempt. Agno only ever uses a request's *name*, and a name that has an
execution is never request-only, so this is exactly the evidence Agno sees.
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_reliability.expectations import Expectation
from otel_reliability.matcher import evaluate
from otel_reliability.model import ERROR, OK, PENDING, REFUSED, Attempt, Run

from .corpus import AGNO_FIELDS

CASES = json.loads((Path(__file__).parent / "fixtures/conformance/agno_reliability_cases.json").read_text(encoding="utf-8"))
PAUSE_FLAGS = ("requires_confirmation", "requires_user_input", "external_execution_required")


def run_from_response(response: dict[str, Any], *, team: bool) -> Run:
    """A ``Run`` with the evidence Agno reads from a serialised ``RunOutput`` / ``TeamRunOutput``.

    An agent response is read alone (Agno ignores its ``member_responses``); a team
    response recursively, depth-first. Start times follow evidence order, so the
    chain and the evidence agree.
    """
    executed = {tool["tool_name"] for node in _walk(response, team) for tool in node.get("tools") or [] if tool["tool_name"]}
    return _build(response, team, executed, count(), ())


def _walk(node: dict[str, Any], team: bool):
    yield node
    if team:
        for member in node.get("member_responses") or []:
            yield from _walk(member, team)


def _build(node: dict[str, Any], team: bool, executed: set[str], clock, parents: tuple[str, ...]) -> Run:
    start = next(clock)
    agent = f"agent-{start}"
    path = (*parents, agent)
    attempts = [
        Attempt(tool["tool_name"] or "", tool["tool_args"] or {}, _outcome(tool), agent, path, tool["tool_call_id"],
                start_ns=next(clock))
        for tool in node.get("tools") or []
    ]
    for message in node.get("messages") or []:
        if message.get("from_history"):
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if name and name not in executed:
                attempts.append(Attempt(name, {}, REFUSED, agent, path, call.get("id"), start_ns=next(clock)))
    members = [_build(member, team, executed, clock, path) for member in node.get("member_responses") or []] if team else []
    return Run(trace_id=1, span_id=start, agent=agent, span_name=f"invoke_agent {agent}", start_ns=start, end_ns=next(clock),
               own_attempts=attempts, members=members)


def _outcome(tool: dict[str, Any]) -> str:
    if tool["tool_call_error"]:
        return ERROR
    if tool.get("is_paused") or any(tool.get(flag) for flag in PAUSE_FLAGS):
        return PENDING
    return OK


def expectation_from(config: dict[str, Any]) -> Expectation:
    return Expectation(name="agno", **config)


def agno_fields(verdict) -> dict[str, Any]:
    return {name: getattr(verdict, name) for name in AGNO_FIELDS}


def test_fixture_holds_all_43_upstream_cases():
    assert len(CASES) == 43
    assert len({case["id"] for case in CASES}) == 43


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_verdict_equals_agno_result(case):
    run = run_from_response(case["response"], team=case["input"] == "team_response")
    verdict = evaluate(run, expectation_from(case["config"]))
    assert agno_fields(verdict) == case["expected"]


# --- differential: random evidence through Agno itself and through the matcher ---

TOOL_NAMES = st.sampled_from(["search", "fetch", "add", "delete_db"])
ARGUMENT_DICTS = st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from([1, 1.0, True, "1", 2, {"x": 1}]), max_size=2)
ARGUMENTS = st.none() | ARGUMENT_DICTS
TOOLS = st.fixed_dictionaries(
    {
        "tool_call_id": st.just("call"),
        "tool_name": TOOL_NAMES | st.sampled_from(["", None]),
        "tool_args": ARGUMENTS,
        "tool_call_error": st.sampled_from([None, False, True]),
        "requires_confirmation": st.sampled_from([None, False, True]),
        "requires_user_input": st.sampled_from([None, True]),
        "external_execution_required": st.sampled_from([None, True]),
    }
)
def _request(name: str) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": "{}"}}


MESSAGES = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["assistant", "tool"]),
        "from_history": st.booleans(),
        "tool_calls": st.none()
        | st.lists(st.builds(_request, TOOL_NAMES | st.just("")), max_size=3),
    }
)


def _response(members) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "tools": st.none() | st.lists(TOOLS, max_size=4),
            "messages": st.none() | st.lists(MESSAGES, max_size=2),
            "member_responses": members,
        }
    )


RESPONSES = st.recursive(_response(st.just([])), lambda inner: _response(st.lists(inner, max_size=2)), max_leaves=4)
CONFIGS = st.fixed_dictionaries(
    {
        "expected_tool_calls": st.none() | st.lists(TOOL_NAMES, max_size=3),
        "allow_additional_tool_calls": st.booleans(),
        "expected_tool_call_arguments": st.none()
        | st.dictionaries(TOOL_NAMES, ARGUMENT_DICTS | st.lists(ARGUMENT_DICTS, max_size=2), max_size=2),
    }
)


def _agno_response(node: dict[str, Any], team: bool):
    from agno.models.message import Message
    from agno.models.response import ToolExecution
    from agno.run.agent import RunOutput
    from agno.run.team import TeamRunOutput

    tools = None if node["tools"] is None else [ToolExecution(**tool) for tool in node["tools"]]
    messages = None if node["messages"] is None else [Message(**message) for message in node["messages"]]
    if not team:
        return RunOutput(tools=tools, messages=messages)
    members = [_agno_response(member, team) for member in node["member_responses"]]
    return TeamRunOutput(tools=tools, messages=messages, member_responses=members)


@settings(max_examples=300, deadline=None, database=None)
@given(response=RESPONSES, config=CONFIGS, team=st.booleans())
def test_random_evidence_gets_agno_own_result(response, config, team):
    from agno.eval.reliability import ReliabilityEval

    evidence = _agno_response(response, team)
    inputs = {"team_response": evidence} if team else {"agent_response": evidence}
    expected = ReliabilityEval(**inputs, **config, telemetry=False, show_spinner=False).run()
    verdict = evaluate(run_from_response(response, team=team), expectation_from(config))
    assert agno_fields(verdict) == {name: getattr(expected, name) for name in AGNO_FIELDS}

