"""Capture pydantic-ai traces of agents whose tools are served by a real stdio MCP server.

The agent side: pydantic-ai's own instrumentation (``Agent.instrument_all(InstrumentationSettings(...))``,
GenAI conventions, content on), its model the real ``OpenAIChatModel`` pointed at
``cc.ScriptedOpenAI`` on 127.0.0.1 (dummy key, no network), its tools an ``MCPToolset`` over
stdio (pydantic-ai 2.x's successor of ``MCPServerStdio``) that starts ``server.py`` — the
``mcp`` SDK's ``MCPServer`` (``FastMCP`` before mcp 2) — in a process of its own, one per
scenario. The server has its own TracerProvider and service name; its spans are merged into
the scenario's trace file as a second ``resourceSpans``.

Two instrumentation modes, one corpus folder each:

  openinference  -> tests/fixtures/corpus/mcp_pydantic_ai/
      openinference-instrumentation-mcp on both sides (context propagation only). No global
      TracerProvider is set, so the MCP libraries' own spans (the mcp SDK's and fastmcp's,
      which use the global provider) are not recorded; the SDK's server span middleware is
      removed in the server.
  semconv        -> tests/fixtures/corpus/mcp_pydantic_ai_semconv/
      the MCP semantic-convention spans that the installed libraries emit natively: the mcp
      SDK (client ``MCP send …`` and server ``tools/call …`` spans) and fastmcp's client (which
      pydantic-ai's MCPToolset is built on); the client's and the server's providers are set
      as the global ones. No openinference.

Ground truth is recorded inside the server's tool bodies (``server.py``), read back from a
file; ids and agents come from the script (``tool_call_id_source: script``).

Run:  /tmp/capture-mcp_pydantic_ai/bin/python tests/capture/mcp_pydantic_ai/capture.py [--mode openinference|semconv] [scenario ...]
      (no --mode: both modes, each in a process of its own)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
SERVER_SERVICE = "mcp-tools-server"

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=("openinference", "semconv"))
parser.add_argument("scenarios", nargs="*")
ARGS = parser.parse_args()

if ARGS.mode is None:
    for mode in ("openinference", "semconv"):
        subprocess.run([sys.executable, __file__, "--mode", mode, *ARGS.scenarios], check=True)
    sys.exit(0)

MODE: str = ARGS.mode
FRAMEWORK = "mcp_pydantic_ai" if MODE == "openinference" else "mcp_pydantic_ai_semconv"
ID_PREFIX = "call_mcppa" if MODE == "openinference" else "call_mcppa_sc"

provider, exporter = cc.tracing("corpus-mcp-pydantic-ai")

if MODE == "openinference":
    # before pydantic_ai.mcp / fastmcp import mcp.client.stdio, so the post-import hook wraps it
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)
else:
    from opentelemetry import trace

    trace.set_tracer_provider(provider)

from fastmcp.client.transports import StdioTransport  # noqa: E402
from pydantic_ai import (  # noqa: E402
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolDenied,
    UsageLimits,
)
from pydantic_ai.capabilities import HandleDeferredToolCalls  # noqa: E402
from pydantic_ai.mcp import MCPToolset  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

Agent.instrument_all(InstrumentationSettings(tracer_provider=provider, include_content=True))

# -- the script: ids, agents, positions -----------------------------------------------------

_scenario = ""
_files: dict[str, Path] = {}
_ids: dict[str, dict[str, Any]] = {}  # "name canonical-args" -> {id, agent, pos}
_pos: dict[str, int] = {}  # call id -> position in the script


def _key(name: str, arguments: dict[str, Any]) -> str:
    """As server.py's lookup keys a call: integral floats as ints."""
    canonical = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in arguments.items()}
    return f"{name} {json.dumps(canonical, sort_keys=True)}"


def call(name: str, arguments: dict[str, Any] | str, n: int, agent: str) -> dict[str, Any]:
    """A scripted tool call ``call_mcppa_<scenario>_<tool>_<n>``, registered for the server to find."""
    call_id = f"{ID_PREFIX}_{_scenario}_{name}_{n}"
    _pos[call_id] = len(_pos)
    if isinstance(arguments, dict):
        _ids[_key(name, arguments)] = {"id": call_id, "agent": agent}
        _files["ids"].write_text(json.dumps(_ids), encoding="utf-8")
    return cc.tool_call(name, arguments, call_id)


def call_id(name: str, n: int) -> str:
    return f"{ID_PREFIX}_{_scenario}_{name}_{n}"


def turn(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    return cc.reply(content=text, tool_calls=list(calls))


def refused(name: str, arguments: dict[str, Any] | str, n: int, agent: str, reason: str, kind: str) -> None:
    cid = call_id(name, n)
    cc.add_refused(name, arguments, agent, reason, kind, tool_call_id=cid, tool_call_id_source="script", _pos=_pos.get(cid, 0))


def local_ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """A tool body that runs in the agent's own process (not on the MCP server) ran."""
    script = _ids[_key(name, arguments)]
    cc.record(name, arguments, outcome, script["agent"], tool_call_id=script["id"], tool_call_id_source="script",
              recorded_by="agent_process", _t=time.time_ns(), **extra)


# -- agents -----------------------------------------------------------------------------------


def model(server: cc.ScriptedOpenAI) -> OpenAIChatModel:
    return OpenAIChatModel(server.model, provider=OpenAIProvider(base_url=server.base_url, api_key="scripted-no-key"))


def mcp_tools(**kwargs: Any) -> MCPToolset:
    env = {
        "MCPPA_MODE": MODE,
        "MCPPA_SPANS": str(_files["spans"]),
        "MCPPA_TRUTH": str(_files["truth"]),
        "MCPPA_IDS": str(_files["ids"]),
        "MCPPA_SERVICE": SERVER_SERVICE,
        "PATH": os.environ.get("PATH", ""),
    }
    transport = StdioTransport(command=sys.executable, args=[str(SERVER)], env=env, keep_alive=False)
    return MCPToolset(transport, id="tools", **kwargs)


def agent(name: str, server: cc.ScriptedOpenAI, toolsets: list[Any] | None = None, **kwargs: Any) -> Agent:
    return Agent(model(server), name=name, toolsets=toolsets if toolsets is not None else [mcp_tools()], **kwargs)


# -- scenarios ----------------------------------------------------------------------------------


async def single_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(turn(call("multiply", {"a": 10, "b": 5}, 1, "calculator")), cc.reply("10 times 5 is 50"))
        await agent("calculator", server).run("What is 10 times 5?")


async def sequential_chain() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("search", {"query": "widget price"}, 1, "researcher")),
            turn(call("parse_price", {"html": "<td>price</td><td>42</td>"}, 1, "researcher")),
            turn(call("compute", {"expression": "42 * 3"}, 1, "researcher")),
            cc.reply("3 widgets cost 126"),
        )
        await agent("researcher", server).run("How much do 3 widgets cost?")


async def parallel_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("get_weather", {"city": "Paris"}, 1, "weather"), call("get_weather", {"city": "London"}, 2, "weather")),
            cc.reply("Paris is sunny, London rainy"),
        )
        await agent("weather", server).run("Weather in Paris and London?")


async def repeated_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("multiply", {"a": 2, "b": 3}, 1, "calculator")),
            turn(call("multiply", {"a": 6, "b": 7}, 2, "calculator")),
            cc.reply("2*3 = 6 and 6*7 = 42"),
        )
        await agent("calculator", server).run("What are 2 times 3 and 6 times 7?")


async def no_tools() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(cc.reply("Hello! I can multiply, add and divide numbers for you."))
        await agent("calculator", server).run("Hi, what can you do?")


async def tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("divide", {"a": 10, "b": 0}, 1, "calculator")),
            turn(call("divide", {"a": 10, "b": 2}, 2, "calculator")),
            cc.reply("10 / 2 = 5"),
        )
        await agent("calculator", server).run("Divide 10 by 0, or by something sensible")


async def mcp_tool_error() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("fetch_page", {"url": "https://example.invalid/prices"}, 1, "fetcher")),
            cc.reply("The page is unreachable right now."),
        )
        await agent("fetcher", server, [mcp_tools(tool_error_behavior="failed")]).run("Fetch the price page")


async def unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("format_disk", {"drive": "C:"}, 1, "calculator")),
            turn(call("multiply", {"a": 6, "b": 7}, 1, "calculator")),
            cc.reply("I cannot format disks; 6 times 7 is 42"),
        )
        refused("format_disk", {"drive": "C:"}, 1, "calculator",
                "no tool of that name in the agent's toolsets: pydantic-ai answers a retry prompt, "
                "the MCP server is never asked", "unknown_tool")
        await agent("calculator", server).run("Format the disk, then multiply 6 by 7")


async def mcp_unknown_tool() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("get_forecast", {"city": "Paris"}, 1, "weather")),
            turn(call("get_weather", {"city": "Paris"}, 1, "weather")),
            cc.reply("No forecast available; Paris is sunny now"),
        )
        refused("get_forecast", {"city": "Paris"}, 1, "weather",
                "the server lists get_forecast but has no such tool: tools/call answers isError "
                "'Unknown tool: get_forecast'", "unknown_tool")
        await agent("weather", server).run("Forecast for Paris?")


async def invalid_arguments() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("multiply", {"a": "ten", "b": 5}, 1, "calculator")),
            turn(call("multiply", {"a": 10, "b": 5}, 2, "calculator")),
            cc.reply("ten times 5 is 50"),
        )
        refused("multiply", {"a": "ten", "b": 5}, 1, "calculator",
                "pydantic-ai does not validate MCP tool arguments; the server's schema validation rejects "
                "a='ten' (tools/call answers isError), the body never runs", "invalid_arguments")
        await agent("calculator", server).run("What is ten times 5?")


async def mcp_missing_argument() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("add", {"a": 1}, 1, "calculator")),
            turn(call("add", {"a": 1, "b": 2}, 2, "calculator")),
            cc.reply("1 + 2 = 3"),
        )
        refused("add", {"a": 1}, 1, "calculator",
                "required argument b missing: the server's schema validation rejects it (isError)", "invalid_arguments")
        await agent("calculator", server).run("Add 1 and 2")


def _approval_handler(approve: bool) -> Callable[[RunContext[Any], DeferredToolRequests], DeferredToolResults]:
    def handle(ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults:
        if approve:
            return DeferredToolResults(approvals={part.tool_call_id: True for part in requests.approvals})
        return DeferredToolResults(
            approvals={part.tool_call_id: ToolDenied("The user refused to delete this file.") for part in requests.approvals}
        )

    return handle


def _janitor(server: cc.ScriptedOpenAI, approve: bool) -> Agent:
    toolset = mcp_tools().approval_required(lambda ctx, tool_def, args: tool_def.name == "delete_file")
    return agent("janitor", server, [toolset], capabilities=[HandleDeferredToolCalls(handler=_approval_handler(approve))])


async def approval_approved() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(turn(call("delete_file", {"path": "/tmp/old.log"}, 1, "janitor")), cc.reply("Deleted /tmp/old.log"))
        await _janitor(server, True).run("Delete /tmp/old.log")


async def blocked_approval_rejected() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(turn(call("delete_file", {"path": "/etc/passwd"}, 1, "janitor")),
                      cc.reply("The deletion was refused, so I left /etc/passwd alone."))
        refused("delete_file", {"path": "/etc/passwd"}, 1, "janitor",
                "approval_required on the MCP toolset; the HandleDeferredToolCalls handler answered ToolDenied",
                "approval_denied")
        await _janitor(server, False).run("Delete /etc/passwd")


async def blocked_tool_call_limit() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("multiply", {"a": 2, "b": 3}, 1, "calculator")),
            turn(call("add", {"a": 6, "b": 1}, 1, "calculator")),
            cc.reply("never reached"),
        )
        refused("add", {"a": 6, "b": 1}, 1, "calculator",
                "UsageLimits(tool_calls_limit=1): the second call would exceed it, UsageLimitExceeded ends the run",
                "limit")
        await agent("calculator", server).run("2 times 3, plus 1", usage_limits=UsageLimits(tool_calls_limit=1))


async def multi_turn() -> None:
    with cc.ScriptedOpenAI() as server:
        server.script(
            turn(call("multiply", {"a": 10, "b": 5}, 1, "calculator")),
            cc.reply("50"),
            turn(call("add", {"a": 50, "b": 7}, 1, "calculator")),
            cc.reply("57"),
        )
        calculator = agent("calculator", server)
        async with calculator:  # one MCP session (one server process) for the whole conversation
            first = await calculator.run("What is 10 times 5?")
            await calculator.run("Now add 7 to that", conversation=first.conversation)


async def delegation() -> None:
    with cc.ScriptedOpenAI() as router_server, cc.ScriptedOpenAI() as researcher_server:
        researcher_server.script(
            turn(call("lookup", {"term": "OCaml"}, 1, "researcher")),
            cc.reply("OCaml is a statically typed functional language"),
        )
        router_server.script(
            turn(call("ask_researcher", {"question": "What is OCaml?"}, 1, "router")),
            cc.reply("The researcher says OCaml is statically typed and functional"),
        )
        researcher = agent("researcher", researcher_server)
        router = agent("router", router_server, [])

        @router.tool
        async def ask_researcher(ctx: RunContext[None], question: str) -> str:
            """Delegate a question to the researcher agent."""
            local_ran("ask_researcher", {"question": question}, delegates_to="researcher")
            assert ctx.tool_call_id == call_id("ask_researcher", 1), ctx.tool_call_id
            result = await researcher.run(question, usage=ctx.usage)
            return result.output

        await router.run("Tell me about OCaml")


SCENARIOS: list[tuple[str, str, Callable[[], Awaitable[None]], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5) on the MCP server, then a text answer", single_tool, {}, ""),
    ("sequential_chain", "search, parse_price, compute: one MCP tool per model turn", sequential_chain, {}, ""),
    ("parallel_tools", "two get_weather calls in one model turn", parallel_tools, {},
     "pydantic-ai runs the calls of one turn concurrently over the one MCP session; seq is the order the server ran them"),
    ("repeated_tool", "multiply twice, different arguments, one turn each", repeated_tool, {}, ""),
    ("no_tools", "the model answers without calling a tool", no_tools, {},
     "the MCP handshake (server/discover: mcp 2.x's modern protocol has no initialize) and tools/list still happen; "
     "they are not tool calls" + ("; no span shows them in this mode" if MODE == "openinference" else "")),
    ("tool_error", "divide(b=0) raises ZeroDivisionError in the server body; tools/call answers isError; "
     "pydantic-ai (tool_error_behavior='retry') sends a retry prompt; the model retries with b=2", tool_error, {}, ""),
    ("mcp_tool_error", "fetch_page raises the SDK's ToolError on the server (isError); the toolset has "
     "tool_error_behavior='failed', so the error goes back to the model as a failed tool result; the model answers",
     mcp_tool_error, {}, ""),
    ("unknown_tool", "the model asks for format_disk, which no toolset has; then multiply", unknown_tool, {}, ""),
    ("mcp_unknown_tool", "the model asks for get_forecast, which the server lists but does not have (isError "
     "'Unknown tool'); then get_weather", mcp_unknown_tool, {}, ""),
    ("invalid_arguments", "multiply(a='ten') reaches the server, whose schema validation rejects it (isError); "
     "retry with a=10", invalid_arguments, {}, ""),
    ("mcp_missing_argument", "add(a=1) without b: the server's schema validation rejects it; retry with b=2",
     mcp_missing_argument, {}, ""),
    ("approval_approved", "delete_file needs approval (ApprovalRequiredToolset over the MCP toolset); the "
     "HandleDeferredToolCalls handler approves inside the run; the server runs it", approval_approved, {},
     "the approval is resolved inside the one run (one trace)"),
    ("blocked_approval_rejected", "delete_file needs approval; the handler answers ToolDenied; the model answers",
     blocked_approval_rejected, {}, "the denial is resolved inside the one run (one trace); the server is never called"),
    ("blocked_tool_call_limit", "UsageLimits(tool_calls_limit=1): multiply runs, the next turn's add exceeds the "
     "limit and UsageLimitExceeded ends the run", blocked_tool_call_limit, {}, "the run raises UsageLimitExceeded"),
    ("multi_turn", "run 1 multiplies; run 2 (conversation=run1.conversation) adds; one MCP session", multi_turn, {},
     "two agent runs, two traces in this file, sharing gen_ai.conversation.id" + (
         "; the MCP handshake (server/discover) happens when the toolset is entered, before run 1, so its spans "
         "are a third trace of their own" if MODE == "semconv" else "")),
    ("delegation", "router's local tool ask_researcher runs the researcher agent, whose MCP tool lookup runs on the "
     "server", delegation,
     {"type": "agent_as_tool", "parent_agent": "router", "child_agent": "researcher", "via_tool": "ask_researcher"},
     "ask_researcher is a local function tool (agent process), recorded when it starts; lookup runs on the MCP server"),
]


# -- running and saving ---------------------------------------------------------------------------


def _server_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _merge_server_spans(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """All the server's export lines as one resourceSpans (scopes merged by name)."""
    resource: dict[str, Any] | None = None
    scopes: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for rs in doc.get("resourceSpans", []):
            resource = resource or rs.get("resource")
            for ss in rs.get("scopeSpans", []):
                name = ss.get("scope", {}).get("name", "")
                scopes.setdefault(name, {**{k: v for k, v in ss.items() if k != "spans"}, "spans": []})["spans"].extend(ss["spans"])
    if not scopes:
        return []
    for ss in scopes.values():
        ss["spans"].sort(key=lambda s: int(s.get("startTimeUnixNano", 0)))
    return [{"resource": resource or {}, "scopeSpans": list(scopes.values())}]


def _server_index(resource_spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    status = {0: "UNSET", 1: "OK", 2: "ERROR"}
    return [
        {"span_id": s["spanId"], "parent_span_id": s.get("parentSpanId") or None, "trace_id": s["traceId"], "name": s["name"],
         "status": status[s.get("status", {}).get("code", 0)], "service": SERVER_SERVICE}
        for rs in resource_spans for ss in rs["scopeSpans"] for s in ss["spans"]
    ]


def _ordered_truth(server_entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Executed calls (server and agent process) by the time their body ran; each refusal placed
    before the first executed call that comes after it in the script."""
    local = cc.truth_snapshot()
    executed = sorted([e for e in local if e["outcome"] != "refused"] + server_entries, key=lambda e: e["_t"])
    merged = list(executed)
    for entry in (e for e in local if e["outcome"] == "refused"):
        pos = entry["_pos"]
        at = next((i for i, e in enumerate(merged) if e["outcome"] != "refused" and _pos.get(e.get("tool_call_id"), -1) > pos),
                  len(merged))
        merged.insert(at, entry)
    out = []
    for seq, entry in enumerate(merged, 1):
        out.append({"seq": seq, **{k: v for k, v in entry.items() if k not in ("seq", "_t", "_pos")}})
    return out


def run_scenario(name: str, description: str, body: Callable[[], Awaitable[None]], delegation: dict[str, Any],
                 notes: str) -> None:
    global _scenario
    _scenario = name
    exporter.clear()
    cc.reset_truth()
    _ids.clear()
    _pos.clear()
    with tempfile.TemporaryDirectory(prefix=f"mcppa-{name}-") as tmp:
        _files.update(spans=Path(tmp) / "spans.jsonl", truth=Path(tmp) / "truth.jsonl", ids=Path(tmp) / "ids.json")
        _files["ids"].write_text("{}", encoding="utf-8")
        outcome, error = "ok", None
        try:
            asyncio.run(body())
        except Exception as exc:  # noqa: BLE001 - the run's outcome is part of the truth
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        time.sleep(0.5)  # the server process has exited with the session; let its last writes land
        provider.force_flush()
        spans = list(exporter.get_finished_spans())
        server_docs = _server_lines(_files["spans"])
        server_truth = [json.loads(line) for line in _files["truth"].read_text(encoding="utf-8").splitlines()
                        if line.strip()] if _files["truth"].exists() else []
    truth_list = _ordered_truth(server_truth)
    if delegation:
        delegation = {**delegation, "via_tool_call_id": call_id("ask_researcher", 1),
                      "child_tool_calls": [e["tool_call_id"] for e in truth_list if e["agent"] == delegation["child_agent"]]}
    server_rs = _merge_server_spans(server_docs)
    folder = cc.FIXTURES / FRAMEWORK
    folder.mkdir(parents=True, exist_ok=True)
    trace_doc = cc.spans_json(spans)
    trace_doc["resourceSpans"].extend(server_rs)
    (folder / f"{name}.json").write_text(json.dumps(trace_doc, indent=2) + "\n", encoding="utf-8")
    truth = {
        "framework": FRAMEWORK,
        "scenario": name,
        "description": description,
        "tool_executions": truth_list,
        "delegation": delegation,
        "run_outcome": outcome,
        "run_error": error,
        "notes": notes,
        "span_index": [{**entry, "service": "corpus-mcp-pydantic-ai"} for entry in cc.span_index(spans)] + _server_index(server_rs),
    }
    (folder / f"{name}.truth.json").write_text(json.dumps(truth, indent=2, default=str) + "\n", encoding="utf-8")
    n_server = sum(len(ss["spans"]) for rs in server_rs for ss in rs["scopeSpans"])
    print(f"saved {FRAMEWORK}/{name}: {len(spans)} agent spans + {n_server} server spans, "
          f"{len(truth_list)} tool executions, run {outcome}")


if __name__ == "__main__":
    only = set(ARGS.scenarios)
    for entry in SCENARIOS:
        if not only or entry[0] in only:
            run_scenario(*entry)
