"""Agno's ``ReliabilityEval``, judged by this project's matcher: an Agno user changes one import.

    from agno.eval.reliability import ReliabilityEval     # before
    from otel_reliability.agno import ReliabilityEval     # after

The constructor, ``run()`` / ``arun()``, the result's seven fields, ``assert_passed()``,
``print_results``, ``file_path_to_save_results`` and ``db`` behave as Agno's (SPEC §5.1:
same lists, order and strings). The result is an Agno ``ReliabilityResult`` with more
in it: the run's ``chain`` of attempts, its ``score``, the ``errored`` / ``refused`` /
``pending`` tool lists and one ``explanation`` sentence — the reasons Agno leaves to the
reader. ``telemetry`` is accepted and never sends anything.

It reads what Agno's own eval reads from a ``RunOutput`` / ``TeamRunOutput``: each
``ToolExecution`` is an attempt (``tool_call_error`` → error, ``is_paused`` → pending,
else ok), and a tool the model requested in this run (``from_history`` messages left
out) that has no execution anywhere in the response is a refused attempt. A team's
members are read at every depth; an agent response alone. Needs ``agno`` installed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from itertools import count
from typing import Any, Iterator
from uuid import uuid4

from agno.db.base import AsyncBaseDb, BaseDb
from agno.db.schemas.evals import EvalType
from agno.eval.reliability import ReliabilityResult as AgnoReliabilityResult
from agno.eval.utils import async_log_eval, log_eval_run, store_result_in_file
from agno.run.agent import RunOutput
from agno.run.team import TeamRunOutput
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .expectations import Expectation
from .matcher import evaluate, explain
from .model import ERROR, OK, PENDING, REFUSED, Attempt, Run, Verdict

__all__ = ["ReliabilityEval", "ReliabilityResult"]

_AGNO_LISTS = (
    "failed_tool_calls", "passed_tool_calls", "additional_tool_calls", "missing_tool_calls",
    "failed_argument_checks", "passed_argument_checks",
)


@dataclass
class ReliabilityResult(AgnoReliabilityResult):
    """Agno's result (an instance of it) plus what Agno does not say: the chain and the reasons.

    >>> r = ReliabilityResult("run-1", "PASSED", [], ["multiply"], score=1.0)
    >>> r.passed_tool_calls, r.score
    (['multiply'], 1.0)
    """

    score: float = 1.0
    errored_tool_calls: list[str] = field(default_factory=list)
    refused_tool_calls: list[str] = field(default_factory=list)
    pending_tool_calls: list[str] = field(default_factory=list)
    explanation: str = ""
    chain: list[dict[str, Any]] = field(default_factory=list)  # {agent, tool, arguments, outcome, call_id}

    def print_eval(self, console: Console | None = None) -> None:
        """Agno's summary table, then the score, the reasons and the chain."""
        table = Table(title="Reliability Summary", show_header=True, header_style="bold magenta")
        rows = [
            ("Evaluation Status", self.eval_status),
            ("Failed Tool Calls", str(self.failed_tool_calls)),
            ("Passed Tool Calls", str(self.passed_tool_calls)),
        ]
        optional = _AGNO_LISTS[2:] + ("errored_tool_calls", "refused_tool_calls", "pending_tool_calls")
        rows += [(name.replace("_", " ").title(), str(getattr(self, name))) for name in optional if getattr(self, name)]
        rows += [("Score", f"{self.score:.2f}"), ("Explanation", self.explanation)]
        rows += [
            (f"Call {index}", f"{call['agent']}: {call['tool']}({json.dumps(call['arguments'], default=repr)}) {call['outcome']}")
            for index, call in enumerate(self.chain, start=1)
        ]
        for label, value in rows:
            table.add_row(label, Text(value))  # values come from the agent: never rich markup
        (console or Console()).print(table)

    def assert_passed(self) -> None:
        """Agno's assertion, its message led by the reason."""
        assert self.eval_status == "PASSED", f"ReliabilityEval failed: {self.explanation} {self}"


@dataclass
class ReliabilityEval:
    """Agno's ``ReliabilityEval`` (same fields, same verdicts), judged by otel-reliability.

    >>> from agno.models.response import ToolExecution
    >>> response = RunOutput(tools=[ToolExecution(tool_name="multiply", tool_args={"a": 10, "b": 5})])
    >>> result = ReliabilityEval(agent_response=response, expected_tool_calls=["multiply"],
    ...                          expected_tool_call_arguments={"multiply": {"a": 10}}).run()
    >>> result.eval_status, result.passed_argument_checks, result.chain[0]["outcome"]
    ('PASSED', ['multiply'], 'ok')
    """

    name: str | None = None
    agent_response: RunOutput | None = None
    team_response: TeamRunOutput | None = None
    expected_tool_calls: list[str] | None = None
    allow_additional_tool_calls: bool = False
    expected_tool_call_arguments: dict[str, dict[str, Any] | list[dict[str, Any]]] | None = None
    result: ReliabilityResult | None = None
    print_results: bool = False
    show_spinner: bool = True  # accepted for Agno's signature: judging is instant, nothing spins
    file_path_to_save_results: str | None = None
    debug_mode: bool = False  # accepted for Agno's signature: this eval logs nothing to debug
    db: BaseDb | AsyncBaseDb | None = None
    telemetry: bool = True  # accepted for Agno's signature: nothing is ever sent

    def run(self, *, print_results: bool = False) -> ReliabilityResult:
        """Judge the response; the result is also kept in ``self.result``."""
        if isinstance(self.db, AsyncBaseDb):
            raise ValueError("run() is not supported with an async DB. Please use arun() instead.")
        run_id, result = self._judge(print_results)
        if self.db is not None:
            log_eval_run(db=self.db, **self._log_entry(run_id, result))
        return result

    async def arun(self, *, print_results: bool = False) -> ReliabilityResult:
        """``run()`` for async code (and async databases)."""
        run_id, result = self._judge(print_results)
        if self.db is not None:
            await async_log_eval(db=self.db, **self._log_entry(run_id, result))
        return result

    def _judge(self, print_results: bool) -> tuple[str, ReliabilityResult]:
        if self.agent_response is None and self.team_response is None:
            raise ValueError("You need to provide 'agent_response' or 'team_response' to run the evaluation.")
        if self.agent_response is not None and self.team_response is not None:
            raise ValueError("You need to provide only one of 'agent_response' or 'team_response' to run the evaluation.")
        run_id = str(uuid4())
        expectation = Expectation(
            name=self.name or "agno",
            expected_tool_calls=self.expected_tool_calls,
            allow_additional_tool_calls=self.allow_additional_tool_calls,
            expected_tool_call_arguments=self.expected_tool_call_arguments,
        )
        if self.agent_response is not None:
            run = run_of(self.agent_response, team=False)
        elif self.team_response is not None:
            run = run_of(self.team_response, team=True)
        else:
            raise ValueError("ReliabilityEval needs agent_response or team_response")
        self.result = result = _result(run_id, evaluate(run, expectation))
        if self.file_path_to_save_results is not None:
            store_result_in_file(file_path=self.file_path_to_save_results, name=self.name, run_id=run_id, result=result)
        if self.print_results or print_results:
            result.print_eval()
        return run_id, result

    def _log_entry(self, run_id: str, result: ReliabilityResult) -> dict[str, Any]:
        """What Agno logs to its database for a reliability eval."""
        response = self.agent_response if self.agent_response is not None else self.team_response
        return {
            "run_id": run_id,
            "run_data": asdict(result),
            "eval_type": EvalType.RELIABILITY,
            "name": self.name,
            "agent_id": self.agent_response.agent_id if self.agent_response is not None else None,
            "team_id": self.team_response.team_id if self.team_response is not None else None,
            "model_id": response.model if response is not None else None,
            "model_provider": response.model_provider if response is not None else None,
            "eval_input": {
                "expected_tool_calls": self.expected_tool_calls,
                "allow_additional_tool_calls": self.allow_additional_tool_calls,
                "expected_tool_call_arguments": self.expected_tool_call_arguments,
            },
        }


def run_of(response: RunOutput | TeamRunOutput, *, team: bool) -> Run:
    """The ``Run`` the matcher judges: the evidence Agno's eval reads from ``response``.

    >>> from agno.models.response import ToolExecution
    >>> run = run_of(RunOutput(agent_name="calc", tools=[ToolExecution(tool_name="add", tool_call_error=True)]), team=False)
    >>> [(a.tool, a.outcome) for a in run.evidence()]
    [('add', 'error')]
    """
    executed = {tool.tool_name for node in _nodes(response, team) for tool in node.tools or [] if tool.tool_name}
    return _run(response, team, executed, count(1), ())


def _nodes(response: Any, team: bool) -> Iterator[Any]:
    yield response
    if team:
        for member in getattr(response, "member_responses", None) or []:
            yield from _nodes(member, team)


def _run(node: Any, team: bool, executed: set[str], clock: Iterator[int], parents: tuple[str, ...]) -> Run:
    start = next(clock)  # evidence order stands in for time: RunOutput keeps no per-call times
    agent = _name_of(node)
    path = (*parents, agent)
    attempts = [
        Attempt(tool.tool_name or "", dict(tool.tool_args or {}), _outcome(tool), agent, path, tool.tool_call_id,
                start_ns=next(clock))
        for tool in node.tools or []
    ]
    for message in node.messages or []:
        if getattr(message, "from_history", False):  # an earlier run's call, replayed as context
            continue
        for call in message.tool_calls or []:
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if name and isinstance(function, dict) and name not in executed:
                attempts.append(Attempt(name, _requested_arguments(function), REFUSED, agent, path, call.get("id"),
                                        start_ns=next(clock)))
    members = [_run(m, team, executed, clock, path) for m in getattr(node, "member_responses", None) or []] if team else []
    return Run(trace_id=0, span_id=start, agent=agent, span_name=f"invoke_agent {agent}", start_ns=start,
               end_ns=next(clock), run_key=getattr(node, "run_id", None), own_attempts=attempts, members=members)


def _name_of(node: Any) -> str:
    for attribute in ("agent_name", "team_name", "agent_id", "team_id"):
        value = getattr(node, attribute, None)
        if value:
            return str(value)
    return "team" if isinstance(node, TeamRunOutput) else "agent"


def _outcome(tool: Any) -> str:
    if tool.tool_call_error:
        return ERROR
    if tool.is_paused:  # waiting for a confirmation, user input or an external execution
        return PENDING
    return OK


def _requested_arguments(function: dict[str, Any]) -> dict[str, Any]:
    """A refused request's arguments, for the chain only (no check reads them)."""
    raw = function.get("arguments")
    if isinstance(raw, dict):
        return dict(raw)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _result(run_id: str, verdict: Verdict) -> ReliabilityResult:
    return ReliabilityResult(
        run_id=run_id,
        eval_status=verdict.eval_status,
        **{name: list(getattr(verdict, name)) for name in _AGNO_LISTS},
        score=verdict.score,
        errored_tool_calls=list(verdict.errored_tool_calls),
        refused_tool_calls=list(verdict.refused_tool_calls),
        pending_tool_calls=list(verdict.pending_tool_calls),
        explanation=explain(verdict),
        chain=[
            {"agent": a.agent, "tool": a.tool, "arguments": a.arguments, "outcome": a.outcome, "call_id": a.call_id}
            for a in verdict.chain
        ],
    )
