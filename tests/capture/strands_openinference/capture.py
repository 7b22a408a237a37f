"""Capture Strands Agents traces, as openinference-instrumentation-strands-agents rewrites them.

Strands' own telemetry makes the spans (strands takes the global tracer provider: the capture's
is set as the global one before strands is imported); ``StrandsAgentsToOpenInferenceProcessor``
turns them into OpenInference spans as they end, before the exporting processor. The scenarios are
those of the corpus's ``strands/`` folder (captured with strands' own conventions alone, so one
framework reads under two instrumentations). Agents use strands' ``OpenAIModel`` against
``ScriptedOpenAI`` on 127.0.0.1: no key, no network.

Strands hands a tool neither its call id nor its agent here: ids come from the script, found by the
call's name and arguments (unique within a scenario); each tool belongs to one agent. A call the
framework refused is added by the scenario that set the refusal up.

Run:  /tmp/capture-strands_openinference/bin/python tests/capture/strands_openinference/capture.py [scenario ...]
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from openinference.instrumentation.strands_agents import StrandsAgentsToOpenInferenceProcessor  # noqa: E402
from opentelemetry import trace  # noqa: E402

FRAMEWORK = "strands_openinference"
provider, exporter = cc.tracing("corpus-strands-openinference", StrandsAgentsToOpenInferenceProcessor())
trace.set_tracer_provider(provider)

from strands import Agent, tool  # noqa: E402
from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

_scripted_ids: dict[tuple[str, str], str] = {}
_scenario_tag = ""  # set per scenario by run()


def _key(name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


def scripted_id(call_id: str) -> str:
    """``call_mul_1`` made unique in the whole corpus: the engine joins traces that share a call id."""
    return f"call_strandsoi_{_scenario_tag}_{call_id.removeprefix('call_')}"


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    _scripted_ids[_key(name, arguments)] = scripted_id(call_id)
    return cc.tool_call(name, arguments, scripted_id(call_id))


def _ids(name: str, arguments: dict[str, Any]) -> dict[str, str]:
    call_id = _scripted_ids.get(_key(name, arguments))
    return {"tool_call_id": call_id, "tool_call_id_source": "script"} if call_id else {}


def ran(name: str, arguments: dict[str, Any], agent: str, outcome: str = "ok", **extra: Any) -> None:
    cc.record(name, arguments, outcome, agent, **_ids(name, arguments), **extra)


def refused(name: str, arguments: dict[str, Any], agent: str, reason: str, kind: str) -> None:
    cc.add_refused(name, arguments, agent, reason, kind, **_ids(name, arguments))


# -- tools (each belongs to one agent) ----------------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b}, "calculator")
    return a * b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        ran("divide", {"a": a, "b": b}, "calculator", "error", error="ZeroDivisionError: float division by zero")
    else:
        ran("divide", {"a": a, "b": b}, "calculator")
    return a / b


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran("delete_file", {"path": path}, "janitor")
    return f"deleted {path}"


@tool
def search(query: str) -> str:
    """Search the web."""
    ran("search", {"query": query}, "researcher")
    return "<html><td>price</td><td>42</td></html>"


@tool
def parse(html: str) -> str:
    """Extract the price from an HTML snippet."""
    ran("parse", {"html": html}, "researcher")
    return "42"


@tool
def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression}, "researcher")
    left, right = expression.split("*")
    return float(int(left) * int(right))


@tool
def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term}, "researcher")
    return f"{term}: a statically typed functional language"


def model(server: cc.ScriptedOpenAI) -> OpenAIModel:
    return OpenAIModel(client_args={"base_url": server.base_url, "api_key": "scripted-no-key", "max_retries": 0},
                       model_id=server.model)


def agent(name: str, server: cc.ScriptedOpenAI, tools: list[Any], **kwargs: Any) -> Agent:
    return Agent(name=name, model=model(server), tools=tools, callback_handler=None, **kwargs)


# -- scenarios --------------------------------------------------------------------------


def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply(tool_calls=[call("multiply", {"a": 10, "b": 5}, "call_mul_1")]), cc.reply("50"))
        agent("calculator", server, [multiply])("What is 10 times 5?")


def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("search", {"query": "widget price"}, "call_search")]),
            cc.reply(tool_calls=[call("parse", {"html": "<html><td>price</td><td>42</td></html>"}, "call_parse")]),
            cc.reply(tool_calls=[call("compute", {"expression": "42 * 3"}, "call_compute")]),
            cc.reply("3 widgets cost 126"),
        )
        agent("researcher", server, [search, parse, compute])("How much do 3 widgets cost?")


def error_retry() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("divide", {"a": 10.0, "b": 0.0}, "call_div_1")]),
            cc.reply(tool_calls=[call("divide", {"a": 10.0, "b": 2.0}, "call_div_2")]),
            cc.reply("10 / 2 = 5"),
        )
        agent("calculator", server, [divide])("Divide 10 by 0, or by something sensible")


def refused_unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
            cc.reply(tool_calls=[call("multiply", {"a": 6, "b": 7}, "call_mul_after_unknown")]),
            cc.reply("42"),
        )
        refused("format_disk", {"drive": "C:"}, "calculator", "unknown tool (not in registry)", "unknown_tool")
        agent("calculator", server, [multiply])("Format the disk, then multiply 6 by 7")


class NoSystemFiles(HookProvider):
    """Cancels delete_file on /etc: the body never runs, strands answers the model with the message."""

    def register_hooks(self, registry: HookRegistry, **_: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.guard)

    def guard(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_file" and str(event.tool_use["input"].get("path", "")).startswith("/etc"):
            event.cancel_tool = "deleting system files is not allowed"


def refused_hook_cancel() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            cc.reply(tool_calls=[call("delete_file", {"path": "/etc/passwd"}, "call_del_etc")]),
            cc.reply(tool_calls=[call("delete_file", {"path": "/srv/scratch.txt"}, "call_del_tmp")]),
            cc.reply("I could only delete /srv/scratch.txt"),
        )
        refused("delete_file", {"path": "/etc/passwd"}, "janitor", "BeforeToolCallEvent hook set cancel_tool",
                "policy_guard")
        agent("janitor", server, [delete_file], hooks=[NoSystemFiles()])("Delete /etc/passwd and /srv/scratch.txt")


def delegation_agent_as_tool() -> None:
    with cc.ScriptedOpenAI() as lead_server, cc.ScriptedOpenAI() as researcher_server:
        lead_server.script(
            cc.reply(tool_calls=[call("ask_researcher", {"question": "What is OCaml?"}, "call_delegate_1")]),
            cc.reply("OCaml is a statically typed functional language"),
        )
        researcher_server.script(
            cc.reply(tool_calls=[call("lookup", {"term": "OCaml"}, "call_lookup_1")]),
            cc.reply("OCaml is a statically typed functional language"),
        )

        @tool
        def ask_researcher(question: str) -> str:
            """Ask the researcher agent a question."""
            # recorded as the body starts: it ran before the sub-agent's lookup (and returns normally)
            ran("ask_researcher", {"question": question}, "orchestrator", note="agent-as-tool; recorded at start")
            return str(agent("researcher", researcher_server, [lookup])(question))

        agent("orchestrator", lead_server, [ask_researcher])("Tell me about OCaml")


SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any]]] = [
    ("single_tool", "multiply(a=10, b=5), then final text", single_tool, {}),
    ("sequential_chain", "search -> parse -> compute, one tool per model turn", sequential_chain, {}),
    ("error_retry", "divide(b=0) raises ZeroDivisionError -> strands returns an error toolResult; the model "
     "retries divide(b=2) -> ok", error_retry, {}),
    ("refused_unknown_tool", "model calls format_disk (not registered) -> error toolResult 'Unknown tool', then "
     "multiply ok", refused_unknown_tool, {}),
    ("refused_hook_cancel", "BeforeToolCallEvent hook sets cancel_tool for delete_file('/etc/passwd'); "
     "delete_file('/srv/scratch.txt') runs", refused_hook_cancel, {}),
    ("delegation_agent_as_tool", "orchestrator tool ask_researcher invokes researcher Agent, which calls lookup",
     delegation_agent_as_tool,
     {"type": "agent-as-tool", "parent_agent": "orchestrator", "via_tool": "ask_researcher",
      "via_tool_call_id": "call_delegate_1", "child_agent": "researcher", "child_tool_calls": ["call_lookup_1"]}),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation: dict[str, Any]) -> None:
    global _scenario_tag
    exporter.clear()
    cc.reset_truth()
    _scripted_ids.clear()
    _scenario_tag = scenario
    outcome, error = "ok", None
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    if delegation:
        delegation = {**delegation, "via_tool_call_id": scripted_id(delegation["via_tool_call_id"]),
                      "child_tool_calls": [scripted_id(c) for c in delegation["child_tool_calls"]]}
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": delegation,
        "run_outcome": outcome,
        "run_error": error,
        "notes": "",
    })


if __name__ == "__main__":
    chosen = {name for name in sys.argv[1:] if not name.startswith("--")}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
