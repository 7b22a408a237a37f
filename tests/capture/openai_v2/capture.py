"""Capture ``opentelemetry-instrumentation-openai-v2`` around a hand-written tool loop.

The real ``openai`` client talks to ``ScriptedOpenAI`` on 127.0.0.1; the instrumentation
traces each chat completion, and the loop (``tool_loop.py``) writes ``invoke_agent`` and
``execute_tool`` spans with ``opentelemetry-util-genai``. Ground truth is recorded inside the
tool bodies; calls the loop refused are added when the loop refuses them.

    /tmp/capture-openai_v2/bin/python tests/capture/openai_v2/capture.py

This is the default (v1.30 conventions) mode: message content goes to log records, with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (and off for one scenario).
``../openai_v2_latest/capture.py`` runs the same scenarios under
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import capture_common as cc  # noqa: E402
from call_id_mentions import annotate  # noqa: E402
from openai import OpenAI  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.util.genai.handler import TelemetryHandler  # noqa: E402
from tool_loop import GenAISpans, Refusal, Tool, ToolContext, ToolLoopAgent  # noqa: E402

CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


# -- tools: tiny deterministic bodies that record themselves --------------------------


def _ran(ctx: ToolContext, name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, ctx.agent, tool_call_id=ctx.tool_call_id, **extra)


def multiply(ctx: ToolContext, a: int, b: int) -> int:
    _ran(ctx, "multiply", {"a": a, "b": b})
    return a * b


def add(ctx: ToolContext, a: int, b: int) -> int:
    _ran(ctx, "add", {"a": a, "b": b})
    return a + b


def lookup_weather(ctx: ToolContext, city: str) -> str:
    _ran(ctx, "lookup_weather", {"city": city})
    return {"Paris": "sunny, 21 C", "London": "rain, 14 C"}.get(city, "unknown")


def convert_temperature(ctx: ToolContext, celsius: int) -> str:
    _ran(ctx, "convert_temperature", {"celsius": celsius})
    return f"{celsius * 9 / 5 + 32:.1f} F"


def fetch_url(ctx: ToolContext, url: str) -> str:
    _ran(ctx, "fetch_url", {"url": url}, "error", error="ConnectionError: network unreachable")
    raise ConnectionError("network unreachable")


def delete_file(ctx: ToolContext, path: str) -> str:
    _ran(ctx, "delete_file", {"path": path})
    return f"deleted {path}"


def lookup(ctx: ToolContext, term: str) -> str:
    _ran(ctx, "lookup", {"term": term})
    return f"{term}: a statically typed functional language"


def _tool(body: Callable[..., Any], description: str, **parameters: str) -> Tool:
    return Tool(body.__name__, description, parameters, body)


MULTIPLY = _tool(multiply, "Multiply two integers.", a="integer", b="integer")
ADD = _tool(add, "Add two integers.", a="integer", b="integer")
WEATHER = _tool(lookup_weather, "Current weather in a city.", city="string")
CONVERT = _tool(convert_temperature, "Celsius to Fahrenheit.", celsius="integer")
FETCH = _tool(fetch_url, "Fetch a URL.", url="string")
DELETE = _tool(delete_file, "Delete a file.", path="string")
LOOKUP = _tool(lookup, "Encyclopedia lookup.", term="string")


def _no_deletes(name: str, arguments: Any) -> str | None:
    """The application's policy: the agent may not delete files."""
    return f"blocked by policy: {name} is not allowed for this agent" if name == "delete_file" else None


def _refused(refusal: Refusal, agent: str) -> None:
    cc.add_refused(refusal.name, refusal.arguments, agent, refusal.reason, refusal.kind, tool_call_id=refusal.tool_call_id)


# -- the capture ---------------------------------------------------------------------


class Capture:
    """One instrumented client and the providers that keep what it emitted."""

    def __init__(self, framework: str, content: str) -> None:
        self.framework = framework
        self.content = content
        self.tracer_provider, self.spans = cc.tracing(f"corpus-{framework.replace('_', '-')}")
        self.logger_provider, self.logs = cc.logging_provider(f"corpus-{framework.replace('_', '-')}")
        self.instrument(content)

    def instrument(self, content: str) -> None:
        """(Re-)instrument with a content-capture setting: both libraries read it when set up."""
        if content:
            os.environ[CONTENT_VARIABLE] = content
        else:
            os.environ.pop(CONTENT_VARIABLE, None)
        instrumentor = OpenAIInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        instrumentor.instrument(tracer_provider=self.tracer_provider, logger_provider=self.logger_provider)
        handler = TelemetryHandler(tracer_provider=self.tracer_provider, logger_provider=self.logger_provider)
        self.genai = GenAISpans(handler)

    def agent(self, server: cc.ScriptedOpenAI, name: str, tools: list[Tool], **options: Any) -> ToolLoopAgent:
        client = OpenAI(base_url=server.base_url, api_key="scripted", max_retries=0)
        return ToolLoopAgent(name, client, self.genai, tools, on_refusal=lambda r: _refused(r, name), **options)

    def run(self, scenario: str, description: str, body: Callable[["Capture", cc.ScriptedOpenAI], None], **truth: Any) -> None:
        self.spans.clear()
        self.logs.clear()
        cc.reset_truth()
        run_outcome, run_error = "ok", None
        with cc.ScriptedOpenAI() as server:
            try:
                body(self, server)
            except Exception as exc:  # the run's failure is part of the truth
                run_outcome, run_error = "error", f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            assert server.left() == 0, f"{scenario}: {server.left()} scripted answers unused"
        spans = list(self.spans.get_finished_spans())
        logs = list(self.logs.get_finished_logs())
        executions = cc.truth_snapshot()
        annotate(executions, spans, logs, _execution_by_call_id)
        cc.save_scenario(
            self.framework,
            scenario,
            spans,
            {
                "description": description,
                "run_outcome": run_outcome,
                "run_error": run_error,
                "tool_executions": executions,
                "delegation": truth.get("delegation", {}),
                "content_capture": os.environ.get(CONTENT_VARIABLE, "off"),
                "notes": truth.get("notes", ""),
            },
            logs,
        )


def _execution_by_call_id(span: Any, entry: dict[str, Any]) -> str | None:
    attributes = span.attributes or {}
    if attributes.get("gen_ai.operation.name") == "execute_tool" and attributes.get("gen_ai.tool.call.id") == entry.get("tool_call_id"):
        return "gen_ai.tool.call.id"
    return None


# -- scenarios -----------------------------------------------------------------------

T, R = cc.tool_call, cc.reply


def single_tool(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1")]), R("10 times 5 is 50."))
    cap.agent(server, "calculator", [MULTIPLY, ADD]).run("What is 10 times 5?")


def parallel_tools(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_paris"), T("lookup_weather", {"city": "London"}, "call_weather_london")]),
        R("Paris is sunny, London rainy."),
    )
    cap.agent(server, "weather_agent", [WEATHER]).run("Weather in Paris and London?")


def sequential_chain(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("lookup_weather", {"city": "Paris"}, "call_weather_1")]),
        R(tool_calls=[T("convert_temperature", {"celsius": 21}, "call_convert_1")]),
        R("Paris is sunny, 69.8 F."),
    )
    cap.agent(server, "weather_agent", [WEATHER, CONVERT]).run("Paris weather in Fahrenheit?")


def tool_error(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("fetch_url", {"url": "https://example.invalid/"}, "call_fetch_1")]), R("I could not fetch the page."))
    cap.agent(server, "browser", [FETCH]).run("Fetch https://example.invalid/")


def unknown_tool(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("get_stock_price", {"symbol": "ACME"}, "call_stock_1")]), R("I have no stock tool."))
    cap.agent(server, "calculator", [MULTIPLY, ADD]).run("Price of ACME?")


def invalid_arguments(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("multiply", {"a": 10, "b": "five"}, "call_mul_bad_1")]),
        R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_2")]),
        R("10 times 5 is 50."),
    )
    cap.agent(server, "calculator", [MULTIPLY, ADD]).run("What is 10 times five?")


def blocked(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(R(tool_calls=[T("delete_file", {"path": "/srv/scratch.txt"}, "call_delete_1")]), R("I am not allowed to delete files."))
    cap.agent(server, "janitor", [DELETE], guard=_no_deletes).run("Delete /srv/scratch.txt")


def delegation(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    researcher = cap.agent(server, "researcher", [LOOKUP])

    def ask_researcher(ctx: ToolContext, question: str) -> str:
        _ran(ctx, "ask_researcher", {"question": question}, delegates_to="researcher")
        return researcher.run(question)

    ask = _tool(ask_researcher, "Ask the research agent.", question="string")
    server.script(
        R(tool_calls=[T("ask_researcher", {"question": "What is OCaml?"}, "call_research_1")]),
        R(tool_calls=[T("lookup", {"term": "OCaml"}, "call_lookup_1")]),
        R("OCaml is a statically typed functional language."),
        R("The researcher says OCaml is a statically typed functional language."),
    )
    cap.agent(server, "coordinator", [ask]).run("Tell me about OCaml.")


def multi_turn(cap: Capture, server: cc.ScriptedOpenAI) -> None:
    server.script(
        R(tool_calls=[T("multiply", {"a": 10, "b": 5}, "call_mul_1")]),
        R("10 times 5 is 50."),
        R(tool_calls=[T("add", {"a": 50, "b": 7}, "call_add_1")]),
        R("50 plus 7 is 57."),
    )
    agent = cap.agent(server, "calculator", [MULTIPLY, ADD])
    history: list[dict[str, Any]] = []
    for run, question in enumerate(("What is 10 times 5?", "Add 7 to that."), start=1):
        start = len(cc.truth_snapshot())
        agent.run(question, history, conversation_id="conv-multi-turn-1")
        with cc._lock:  # mark which user turn each execution belongs to
            for entry in cc._truth[start:]:
                entry["run"] = run


SCENARIOS: list[tuple[str, str, Callable[[Capture, cc.ScriptedOpenAI], None], dict[str, Any]]] = [
    ("single_tool", "one multiply(a=10, b=5) call, then a text answer", single_tool, {}),
    ("parallel_tools", "two lookup_weather calls in one model turn, run one after the other by the loop", parallel_tools, {}),
    ("sequential_chain", "lookup_weather in turn 1, convert_temperature in turn 2", sequential_chain, {}),
    ("tool_error", "fetch_url raises ConnectionError; the loop tells the model and the run goes on", tool_error,
     {"notes": "the exception is caught by the loop after the execute_tool span failed; the run itself succeeds"}),
    ("unknown_tool", "the model asks for get_stock_price, which the agent does not have", unknown_tool,
     {"notes": "the loop answers 'error: unknown tool' without running anything and writes no execute_tool span"}),
    ("invalid_arguments", "multiply(b='five') fails the loop's schema check; the model retries with b=5", invalid_arguments,
     {"notes": "the refused call gets no execute_tool span; the retry runs"}),
    ("blocked", "the application's guard refuses delete_file", blocked,
     {"notes": "guard in the loop (policy_guard): no execute_tool span, the model gets 'error: blocked by policy…'"}),
    ("delegation", "coordinator's tool ask_researcher runs the researcher agent, which calls lookup", delegation,
     {"delegation": {"parent_agent": "coordinator", "child_agent": "researcher", "via_tool": "ask_researcher",
                     "delegating_call_id": "call_research_1", "child_call_ids": ["call_lookup_1"]},
      "notes": "agent as tool: the researcher's invoke_agent span is a child of execute_tool ask_researcher"}),
    ("multi_turn", "two user turns with shared history and gen_ai.conversation.id conv-multi-turn-1", multi_turn,
     {"notes": "each user turn is its own invoke_agent root, so its own trace; run 2's model input repeats call_mul_1"}),
]


def main(framework: str, content: str) -> None:
    capture = Capture(framework, content)
    for scenario, description, body, truth in SCENARIOS:
        capture.run(scenario, description, body, **truth)
    capture.instrument("")
    capture.run("single_tool_content_off", "single_tool with message content capture off", single_tool,
                notes="OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unset")


if __name__ == "__main__":
    main("openai_v2", "true")
