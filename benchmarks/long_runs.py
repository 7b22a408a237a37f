"""Whether a long agent run costs the same per span as a short one.

Run: ``python benchmarks/long_runs.py [--turns 1 10 100 1000] [--conventions genai openinference]``

Each trace is one agent run of ``T`` tool turns, built as ``SpanData`` in the shape its
convention's instrumentations give it: a turn is a model span that asks for one tool
call and the tool span that runs it, and a last model span answers in text -- ``2T + 2``
spans. Every model span's input replays the whole history so far (the user's question,
then each earlier call and its answer), as the conventions record it:

* genai -- pydantic-ai's shape: ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  JSON texts on ``chat`` spans, ``execute_tool`` spans with call ids;
* openinference -- agno's shape: ``llm.input_messages.<i>.message.*`` flattened into
  indexed attributes on ``LLM`` spans, ``TOOL`` spans with call ids.

So the input of turn ``k`` holds ``2k + 1`` messages, and a trace's attributes grow with
``T²``. Spans are made a batch at a time and dropped once adapted, as the receiver drops
them once it holds their records; making them is not timed. Printed per row: the CPU
time (``time.process_time``) per span of ``to_record``, of ``engine.judge_at_end``
(assembly and judging), and of both; and the bytes the records hold once their spans are
gone (each object they reach counted once, with ``sys.getsizeof``), per record. The last
lines give, per convention, the per-span CPU of the longest run over that of the
10-turn run: the goal is at most 2 (a long run costs what a short one does per span).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from otel_reliability.adapters import to_record  # noqa: E402
from otel_reliability.engine import Engine, judge_at_end  # noqa: E402
from otel_reliability.model import SpanData, SpanRecord  # noqa: E402

TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319D
RUN_SPAN_ID = 1
BATCH = 64  # spans made, then adapted under the clock, then dropped
QUESTION = "Look up every record from 0 to the end, one call at a time."
TOOL = "lookup"


def _arguments(turn: int) -> str:
    return json.dumps({"record": turn})


def _answer(turn: int) -> str:
    return json.dumps({"record": turn, "status": "found", "owner": f"team-{turn % 7}"})


def _span(span_id: int, parent_id: int, name: str, start_ns: int, end_ns: int, attributes: dict[str, Any]) -> SpanData:
    return SpanData(TRACE_ID, span_id, parent_id, name, start_ns, end_ns, attributes)


def genai_spans(turns: int) -> Iterator[SpanData]:
    """One ``invoke_agent`` run of ``turns`` tool turns in the GenAI conventions, run span last."""
    history = [json.dumps({"role": "user", "parts": [{"type": "text", "content": QUESTION}]})]
    for turn in range(turns + 1):
        start = 10 + 100 * turn
        if turn < turns:
            call = {"type": "tool_call", "id": f"call_{turn}", "name": TOOL, "arguments": {"record": turn}}
            output = [{"role": "assistant", "parts": [call]}]
        else:
            output = [{"role": "assistant", "parts": [{"type": "text", "content": "All records found."}]}]
        yield _span(2 + 2 * turn, RUN_SPAN_ID, "chat scripted", start, start + 40, {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": "[" + ",".join(history) + "]",
            "gen_ai.output.messages": json.dumps(output),
        })
        if turn == turns:
            break
        yield _span(3 + 2 * turn, RUN_SPAN_ID, f"execute_tool {TOOL}", start + 50, start + 90, {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": TOOL,
            "gen_ai.tool.call.id": f"call_{turn}",
            "gen_ai.tool.call.arguments": _arguments(turn),
        })
        history.append(json.dumps(output[0]))
        answer = {"type": "tool_call_response", "id": f"call_{turn}", "name": TOOL, "response": _answer(turn)}
        history.append(json.dumps({"role": "user", "parts": [answer]}))
    yield _span(RUN_SPAN_ID, 0, "invoke_agent longrun", 0, 100 * turns + 100, {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "longrun",
    })


def openinference_spans(turns: int) -> Iterator[SpanData]:
    """One agno-shaped ``AGENT`` run of ``turns`` tool turns in OpenInference, run span last."""
    history: list[tuple[str, Any]] = [("role", "user"), ("content", QUESTION)]  # (field, value) of message 0
    lengths = [len(history)]  # fields per message
    for turn in range(turns + 1):
        start = 10 + 100 * turn
        attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "scripted"}
        fields = iter(history)
        for index, length in enumerate(lengths):  # new keys and values per span, as a decoder makes them
            for _ in range(length):
                field, value = next(fields)
                attributes[f"llm.input_messages.{index}.message.{field}"] = value.encode().decode()
        call = "llm.output_messages.0.message.tool_calls.0.tool_call."
        attributes["llm.output_messages.0.message.role"] = "assistant"
        if turn < turns:
            attributes[call + "id"] = f"call_{turn}"
            attributes[call + "function.name"] = TOOL
            attributes[call + "function.arguments"] = _arguments(turn)
        else:
            attributes["llm.output_messages.0.message.content"] = "All records found."
        yield _span(2 + 2 * turn, RUN_SPAN_ID, "OpenAIChat.invoke", start, start + 40, attributes)
        if turn == turns:
            break
        yield _span(3 + 2 * turn, RUN_SPAN_ID, TOOL, start + 50, start + 90, {
            "openinference.span.kind": "TOOL", "tool.name": TOOL, "tool_call.id": f"call_{turn}",
            "input.value": _arguments(turn), "output.value": _answer(turn),
        })
        assistant = [("role", "assistant"), ("tool_calls.0.tool_call.id", f"call_{turn}"),
                     ("tool_calls.0.tool_call.function.name", TOOL),
                     ("tool_calls.0.tool_call.function.arguments", _arguments(turn))]
        tool = [("role", "tool"), ("tool_call_id", f"call_{turn}"), ("content", _answer(turn))]
        history += assistant + tool
        lengths += [len(assistant), len(tool)]
    yield _span(RUN_SPAN_ID, 0, "longrun.run", 0, 100 * turns + 100, {
        "openinference.span.kind": "AGENT", "agent.name": "longrun", "agno.run.id": "run-1",
    })


CONVENTIONS: dict[str, Callable[[int], Iterator[SpanData]]] = {
    "genai": genai_spans,
    "openinference": openinference_spans,
}


def _batches(spans: Iterator[SpanData]) -> Iterator[list[SpanData]]:
    batch = []
    for span in spans:
        batch.append(span)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def adapted(spans: Iterator[SpanData]) -> tuple[list[SpanRecord], float]:
    """The spans' records, and the CPU seconds ``to_record`` took on them."""
    records: list[SpanRecord] = []
    spent = 0.0
    for batch in _batches(spans):
        start = time.process_time()
        records.extend([to_record(span) for span in batch])
        spent += time.process_time() - start
    return records, spent


def retained_bytes(roots: list[Any]) -> int:
    """Bytes of every object reachable from ``roots`` through containers and slots, each counted once."""
    seen: set[int] = set()
    total = 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if obj is None or isinstance(obj, (bool, Enum)) or id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif hasattr(type(obj), "__slots__"):
            stack.extend(getattr(obj, name) for name in type(obj).__slots__ if hasattr(obj, name))
    return total


def measure(convention: str, turns: int, engine: Engine) -> dict[str, float]:
    gc.collect()
    records, adapt_s = adapted(CONVENTIONS[convention](turns))
    start = time.process_time()
    results = [judgement.result for judgement in judge_at_end(engine, records)]
    judge_s = time.process_time() - start
    chain = results[0].verdict.chain if results else []
    if len(results) != 1 or len(chain) != turns or not results[0].passed:
        raise SystemExit(f"{convention} {turns} turns: expected one passing run of {turns} calls, got {results}")
    spans = len(records)
    return {
        "spans": spans,
        "adapt_us": adapt_s / spans * 1e6,
        "judge_us": judge_s / spans * 1e6,
        "total_us": (adapt_s + judge_s) / spans * 1e6,
        "bytes": retained_bytes(records) / spans,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--conventions", nargs="+", choices=sorted(CONVENTIONS), default=sorted(CONVENTIONS))
    args = parser.parse_args()
    engine = Engine()
    header = ("turns", "spans", "adapt µs", "judge µs", "total µs", "B/record")
    print(f"{'convention':<14} " + " ".join(f"{column:>9}" for column in header))
    totals: dict[tuple[str, int], float] = {}
    for convention in args.conventions:
        for turns in args.turns:
            row = measure(convention, turns, engine)
            totals[convention, turns] = row["total_us"]
            print(f"{convention:<14} {turns:>9} {row['spans']:>9} {row['adapt_us']:>9.1f} {row['judge_us']:>9.1f} "
                  f"{row['total_us']:>9.1f} {row['bytes']:>9.0f}", flush=True)
    longest = max(args.turns)
    if 10 in args.turns and longest > 10:
        for convention in args.conventions:
            ratio = totals[convention, longest] / totals[convention, 10]
            print(f"{convention}: CPU per span at {longest} turns / at 10 turns = {ratio:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
