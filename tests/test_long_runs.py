"""Long runs (issue 11, item 7): a run of hundreds of tool turns, whose every model call replays
the whole history, is judged like a short one, and its model spans keep only the answers
they add -- so a span's cost and its record's size do not grow with the turn number.

The runs are recorded with the real OpenTelemetry SDK in two shapes: pydantic-ai's
(GenAI conventions: ``gen_ai.input.messages`` JSON on ``chat`` spans) and agno's
(OpenInference: ``llm.input_messages.<i>.message.*`` on ``LLM`` spans).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import count

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_reliability.adapters import to_record
from otel_reliability.engine import Engine, judge_spans
from otel_reliability.model import OK, PENDING, REFUSED, Role, SpanData
from otel_reliability.sources import from_readable_span

TURNS = 200
TOOL = "lookup"
CONVENTIONS = ("genai", "openinference")
LIMIT_REACHED = "Tool call limit reached. Tool call lookup not executed. Don't try to execute it again."


@dataclass
class Turn:
    """One model call asking for one tool call, and what answered it."""

    call_id: str
    record: int
    executed: bool = True  # False: the framework answered without running the tool
    answer: str | None = None  # None: the tool's result

    @property
    def arguments(self) -> str:
        return json.dumps({"record": self.record})

    @property
    def result(self) -> str:
        return self.answer if self.answer is not None else json.dumps({"record": self.record, "found": True})


def turns(number: int, prefix: str = "call") -> list[Turn]:
    return [Turn(f"{prefix}_{k}", k) for k in range(number)]


class Recorder:
    """Records agent runs with the SDK; every model call's input replays the history so far."""

    def __init__(self, convention: str) -> None:
        self.convention = convention
        self.exporter = InMemorySpanExporter()
        limits = SpanLimits(max_span_attributes=100_000, max_attributes=100_000)
        provider = TracerProvider(span_limits=limits)
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("long-runs")
        self.clock = count(1_000, 10)

    def run(self, history: list[Turn], new: list[Turn], pauses: bool = False, resumes: Turn | None = None) -> None:
        """One run in a new trace: its model calls ask for ``new`` in turn, each input replaying
        ``history`` (earlier runs' turns) and the turns before it, and a last model call answers.
        A run that ``pauses`` ends on the request of its last turn; one that ``resumes`` a
        paused call starts by running it."""
        name, attributes = self._run_span()
        root = self.tracer.start_span(name, attributes=attributes, start_time=next(self.clock))
        parent = trace.set_span_in_context(root)
        seen = list(history)
        if resumes is not None:
            self._span(parent, *self._tool_span(resumes))
            seen.append(resumes)
        for index, turn in enumerate(new):
            self._span(parent, *self._model_span(seen, turn))
            if pauses and index == len(new) - 1:
                break
            if turn.executed:
                self._span(parent, *self._tool_span(turn))
            seen.append(turn)
        else:
            self._span(parent, *self._model_span(seen, None))
        root.end(end_time=next(self.clock))

    def spans(self) -> list[SpanData]:
        return [from_readable_span(span) for span in self.exporter.get_finished_spans()]

    def _span(self, parent, name: str, attributes: dict) -> None:
        span = self.tracer.start_span(name, context=parent, attributes=attributes, start_time=next(self.clock))
        span.end(end_time=next(self.clock))

    def _run_span(self) -> tuple[str, dict]:
        if self.convention == "genai":
            return "invoke_agent librarian", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "librarian"}
        return "Librarian.run", {"openinference.span.kind": "AGENT", "agent.name": "librarian"}

    def _tool_span(self, turn: Turn) -> tuple[str, dict]:
        if self.convention == "genai":
            return f"execute_tool {TOOL}", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": TOOL,
                "gen_ai.tool.call.id": turn.call_id, "gen_ai.tool.call.arguments": turn.arguments,
            }
        return TOOL, {"openinference.span.kind": "TOOL", "tool.name": TOOL, "tool_call.id": turn.call_id,
                      "input.value": turn.arguments, "output.value": turn.result}

    def _model_span(self, seen: list[Turn], asks: Turn | None) -> tuple[str, dict]:
        if self.convention == "genai":
            messages = [{"role": "user", "parts": [{"type": "text", "content": "Find every record."}]}]
            for turn in seen:
                messages.append({"role": "assistant", "parts": [self._call_part(turn)]})
                messages.append({"role": "user", "parts": [
                    {"type": "tool_call_response", "id": turn.call_id, "name": TOOL, "result": turn.result}]})
            part = self._call_part(asks) if asks else {"type": "text", "content": "Done."}
            output = [{"role": "assistant", "parts": [part]}]
            return "chat scripted", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages),
                                     "gen_ai.output.messages": json.dumps(output)}
        attributes = {"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
                      "llm.input_messages.0.message.content": "Find every record."}
        for index, turn in enumerate(seen):
            asked = f"llm.input_messages.{2 * index + 1}.message."
            answered = f"llm.input_messages.{2 * index + 2}.message."
            attributes[asked + "role"] = "assistant"
            attributes.update(self._call_attributes(asked, turn))
            attributes.update({answered + "role": "tool", answered + "tool_call_id": turn.call_id,
                               answered + "content": turn.result})
        attributes["llm.output_messages.0.message.role"] = "assistant"
        if asks:
            attributes.update(self._call_attributes("llm.output_messages.0.message.", asks))
        else:
            attributes["llm.output_messages.0.message.content"] = "Done."
        return "OpenAIChat.invoke", attributes

    @staticmethod
    def _call_part(turn: Turn) -> dict:
        return {"type": "tool_call", "id": turn.call_id, "name": TOOL, "arguments": {"record": turn.record}}

    @staticmethod
    def _call_attributes(prefix: str, turn: Turn) -> dict:
        call = prefix + "tool_calls.0.tool_call."
        return {call + "id": turn.call_id, call + "function.name": TOOL, call + "function.arguments": turn.arguments}


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_long_run_is_judged_with_its_whole_chain(convention):
    recorder = Recorder(convention)
    recorder.run([], turns(TURNS))
    (result,) = judge_spans(Engine(), recorder.spans())
    assert result.passed
    assert [(a.tool, a.arguments, a.outcome, a.call_id) for a in result.verdict.chain] == [
        (TOOL, {"record": k}, OK, f"call_{k}") for k in range(TURNS)
    ]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_each_model_span_keeps_only_the_answers_its_input_adds(convention):
    recorder = Recorder(convention)
    recorder.run([], turns(TURNS))
    models = sorted((r for r in map(to_record, recorder.spans()) if r.role is Role.MODEL), key=lambda r: r.start_ns)
    assert len(models) == TURNS + 1
    assert [[a.call_id for a in model.responses] for model in models] == [[]] + [[f"call_{k}"] for k in range(TURNS)]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("turn", [1, TURNS - 20, TURNS - 1])
def test_a_call_the_framework_refused_late_in_a_long_run_is_refused(convention, turn):
    recorder = Recorder(convention)
    calls = turns(TURNS)
    calls[turn].executed, calls[turn].answer = False, LIMIT_REACHED
    recorder.run([], calls)
    (result,) = judge_spans(Engine(), recorder.spans())
    chain = result.verdict.chain
    assert len(chain) == TURNS
    assert [(a.call_id, a.error) for a in chain if a.outcome == REFUSED] == [(f"call_{turn}", LIMIT_REACHED)]
    assert all(a.outcome == OK for a in chain if a.call_id != f"call_{turn}")


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_run_paused_after_a_long_history_is_continued_by_the_run_that_answers_it(convention):
    recorder = Recorder(convention)
    before = turns(TURNS)
    paused = Turn("call_approve", TURNS)
    recorder.run([], before + [paused], pauses=True)
    recorder.run(before, [], resumes=paused)  # approved: the resuming run runs the call, then answers
    first, second = judge_spans(Engine(), recorder.spans())
    assert [(a.call_id, a.outcome) for a in first.verdict.chain][-2:] == [
        (f"call_{TURNS - 1}", OK), ("call_approve", PENDING)
    ]
    assert [(a.call_id, a.outcome) for a in second.verdict.chain] == (
        [(f"call_{k}", OK) for k in range(TURNS)] + [("call_approve", OK)]
    )


@pytest.mark.parametrize("without_role", [0, 1, 4, 5, 8, 9])
def test_an_input_message_without_a_role_does_not_hide_the_answers_after_it(without_role):
    attributes = {"openinference.span.kind": "LLM"}
    for index in range(11):  # user, then five calls, each answered; the last answer is the newest
        prefix = f"llm.input_messages.{index}.message."
        if index == 0:
            attributes[prefix + "content"] = "Find every record."
        elif index % 2:
            attributes.update(Recorder._call_attributes(prefix, Turn(f"call_{index // 2}", index // 2)))
        else:
            attributes.update({prefix + "tool_call_id": f"call_{index // 2 - 1}", prefix + "content": "found"})
        if index != without_role:
            attributes[prefix + "role"] = ("user", "assistant", "tool")[0 if index == 0 else 2 - index % 2]
    record = to_record(SpanData(1, 2, 1, "OpenAIChat.invoke", 10, 20, attributes))
    assert [a.call_id for a in record.responses][-1:] == ["call_4"]
