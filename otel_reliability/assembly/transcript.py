"""A run's model turns read from its own transcript, where no model-call span records them.

Some instrumentations trace a run and its tool executions but not the model calls in between
(docs/frameworks/ says where), while the run span's output keeps the run's
conversation as chat messages: ``{"messages": [{"role": "assistant", "tool_calls": [{"id",
"function": {"name", "arguments"}}]}, {"role": "tool", "tool_call_id", "content"}, …]}``, the
chat-completions format. Those messages are the calls' two other witnesses (SPEC §3): each
assistant message is a model output that asked for calls (a request), each tool message
the answer handed to the model next. A call the framework refused before it ran (an unknown
tool, a usage limit, a hook) has no execution span; only its request and its answer tell.

So a run whose spans record no model call, and whose output holds such a transcript, is read
as if a model-call record stood for each assistant message of the run's own turn: the messages
after the last user message (what came before replays earlier turns, which a model input
replays too). The transcript keeps no times: each turn is placed at the start of the first
execution that carries one of its requests (same call id, else same tool and equal
arguments), else right after the executions of the turns before it. These records are no
model calls (``model_call`` False): they count no usage.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Sequence

from ..adapters import frameworks
from ..adapters.common import loads
from ..adapters.decoders import tool_call_requests
from ..model import Role, SpanRecord, ToolRequest, ToolResponse
from .arguments import parse_arguments

_MODEL, _TOOL = Role.MODEL, Role.TOOL
_ROLE = attrgetter("role")
_MARK = '"messages"'
TURN = "turn in the run's transcript"  # the name of each record read from it


def turns(run: SpanRecord, owned: Sequence[SpanRecord]) -> list[SpanRecord]:
    """Model-turn records read from ``run``'s output transcript; [] when a span records a model
    call of the run (``owned``), or its output holds no transcript of calls.

    >>> out = '{"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "nope", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "Tool not found"}, {"role": "assistant", "content": "done"}]}'
    >>> read = turns(SpanRecord(1, 1, 0, "agent", 0, 9, role=Role.AGENT_RUN, output=out), [])
    >>> [(t.requests[0].name if t.requests else None, [r.content for r in t.responses]) for t in read]
    [('nope', []), (None, ['Tool not found'])]
    """
    if not run.output or _MARK not in run.output or _MODEL in map(_ROLE, owned):
        return []
    messages = _own_turn(loads(run.output))
    if not any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages):
        return []
    executions = sorted((r for r in owned if r.role is _TOOL), key=lambda r: r.start_ns)
    used: set[int] = set()
    cursor = run.start_ns
    read: list[SpanRecord] = []
    answers: list[ToolResponse] = []
    for message in messages:
        role = message.get("role")
        if role == "tool" and message.get("tool_call_id") is not None:
            content = str(message.get("content") or "")
            answers.append(ToolResponse(str(message["tool_call_id"]), content, refusal=not frameworks.answer_says_it_ran(content)))
        elif role == "assistant":
            requests = tool_call_requests(message.get("tool_calls"))
            carried = _carried(requests, executions, used, cursor)
            at = min((e.start_ns for e in carried), default=cursor)
            read.append(SpanRecord(run.trace_id, 0, run.span_id, TURN, at, at, role=_MODEL, requests=requests, responses=tuple(answers)))
            answers = []
            cursor = max([at, *(e.end_ns for e in carried)])
    return read


def _own_turn(output: Any) -> list[dict[str, Any]]:
    """The transcript's messages after its last user message (the run's own turn)."""
    messages = output.get("messages") if isinstance(output, dict) else None
    if not isinstance(messages, list):
        return []
    messages = [m for m in messages if isinstance(m, dict)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[last_user + 1:]


def _carried(requests: tuple[ToolRequest, ...], executions: list[SpanRecord], used: set[int], cursor: int) -> list[SpanRecord]:
    """The first unused execution from ``cursor`` on that carries each request (marked used)."""
    carried = []
    for request in requests:
        for execution in executions:
            if id(execution) in used or execution.start_ns < cursor or execution.tool_name != request.name:
                continue
            if execution.call_id is not None and request.call_id is not None:
                same = execution.call_id == request.call_id
            else:
                same = parse_arguments(execution.arguments) == parse_arguments(request.arguments)
            if same:
                used.add(id(execution))
                carried.append(execution)
                break
    return carried
