"""Capture openai-agents traces whose tools live on a real stdio MCP server.

The agents are the OpenAI Agents SDK's, traced by openinference-instrumentation-openai-agents;
their tools come from ``mcp_server.py`` (the mcp SDK's ``MCPServer``, formerly FastMCP), started
per scenario by ``MCPServerStdio``. MCP is instrumented in both processes with
openinference-instrumentation-mcp (W3C context propagation through the requests' ``_meta``).

Two modes, one corpus folder each:

    plain    -> tests/fixtures/corpus/mcp_openai_agents/          no global TracerProvider in either
                process, so the mcp SDK's own OpenTelemetry spans are no-ops: the trace is the
                OpenInference agents spans only (the server contributes no span).
    semconv  -> tests/fixtures/corpus/mcp_openai_agents_semconv/  each process's provider is also
                the global one, so the mcp SDK's built-in instrumentation (MCP semantic
                conventions: ``mcp.method.name``, ``gen_ai.tool.name``, ``jsonrpc.request.id``)
                records CLIENT spans here and SERVER spans in the server process.

The server process has its own TracerProvider (service.name ``corpus-mcp-openai-agents-server``);
it writes its spans to a file that is merged into the scenario's ExportTraceServiceRequest as a
second resourceSpans. The model is ``OpenAIChatCompletionsModel`` on an ``AsyncOpenAI`` client
pointed at ``capture_common.ScriptedOpenAI`` (127.0.0.1, no key). The ground truth of MCP tools
is recorded inside the server's tool bodies (another process: it is read back from a file); an
MCP server never learns the call id or the agent, so the body finds both in the script by
(name, arguments), unique within a scenario (``tool_call_id_source: script``).

Run:  /tmp/capture-mcp_openai_agents/bin/python tests/capture/mcp_openai_agents/capture.py [--mode plain|semconv] [scenario ...]
      (no --mode: both modes, each in a process of its own)
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import capture_common as cc  # noqa: E402


def _parse_args(argv: list[str]) -> tuple[str | None, set[str]]:
    mode, chosen, rest = None, set(), list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--mode":
            mode = rest.pop(0)
        elif arg.startswith("--mode="):
            mode = arg.split("=", 1)[1]
        else:
            chosen.add(arg)
    assert mode in (None, "plain", "semconv"), mode
    return mode, chosen


MODE, CHOSEN = _parse_args(sys.argv[1:])
if MODE is None:  # both modes, one process each (the global TracerProvider can be set once)
    for each in ("plain", "semconv"):
        subprocess.run([sys.executable, __file__, "--mode", each, *sorted(CHOSEN)], check=True)
    sys.exit(0)

os.environ.pop("OPENAI_API_KEY", None)  # nothing may reach OpenAI

FRAMEWORK = "mcp_openai_agents" if MODE == "plain" else "mcp_openai_agents_semconv"
ID_PREFIX = "call_mcpoa_" if MODE == "plain" else "call_mcpoa_semconv_"

from opentelemetry import trace as trace_api  # noqa: E402

provider, exporter = cc.tracing("corpus-mcp-openai-agents")
if MODE == "semconv":
    trace_api.set_tracer_provider(provider)

from openinference.instrumentation.mcp import MCPInstrumentor  # noqa: E402
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor  # noqa: E402

MCPInstrumentor().instrument(tracer_provider=provider)
# exclusive_processor (the default): the SDK's own exporter to OpenAI is replaced, so the SDK's
# tracing stays on (set_tracing_disabled(True) would also silence the OpenInference spans).
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, RunHooks, Runner, SQLiteSession, handoff, trace  # noqa: E402
from agents.mcp import MCPServerStdio  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

model_server = cc.ScriptedOpenAI()
RUN_CONFIG = RunConfig(trace_include_sensitive_data=True)  # content capture (the SDK's default, set explicitly)

# -- the scenario's script, shared with the MCP server through a file ------------------------------


class Scenario:
    def __init__(self, name: str) -> None:
        self.name = name
        self.workdir = Path(tempfile.mkdtemp(prefix=f"mcpoa-{name}-"))
        self.calls: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {}
        self.script_file = self.workdir / "script.json"
        self.truth_file = self.workdir / "server_truth.json"
        self.spans_files: list[Path] = []
        self.script_file.write_text("[]")

    def call(self, agent: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
        """A scripted tool call, id ``call_mcpoa_<scenario>_<tool>_<n>``, registered for the server."""
        self.counts[name] = self.counts.get(name, 0) + 1
        call_id = f"{ID_PREFIX}{self.name}_{name}_{self.counts[name]}"
        self.calls.append({"name": name, "arguments": arguments, "tool_call_id": call_id, "agent": agent})
        self.script_file.write_text(json.dumps(self.calls))
        return cc.tool_call(name, arguments, call_id)

    def id_of(self, name: str, n: int = 1) -> str:
        return f"{ID_PREFIX}{self.name}_{name}_{n}"


current: Scenario


def call(agent: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    return current.call(agent, name, arguments)


def scripted(name: str, n: int = 1) -> dict[str, Any]:
    call_id = current.id_of(name, n)
    return next(c for c in current.calls if c["tool_call_id"] == call_id)


@asynccontextmanager
async def mcp_server(retire: str = "", **options: Any) -> AsyncIterator[MCPServerStdio]:
    """A fresh stdio MCP server process for this scenario."""
    spans_file = current.workdir / f"server_spans_{len(current.spans_files) + 1}.json"
    current.spans_files.append(spans_file)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "MCPOA_MODE": MODE,
        "MCPOA_SPANS_FILE": str(spans_file),
        "MCPOA_TRUTH_FILE": str(current.truth_file),
        "MCPOA_SCRIPT_FILE": str(current.script_file),
        "MCPOA_RETIRE": retire,
    }
    params = {"command": sys.executable, "args": [str(HERE / "mcp_server.py")], "env": env, "cwd": str(HERE)}
    async with MCPServerStdio(params, name="calc-tools", client_session_timeout_seconds=30, **options) as server:
        yield server


def model() -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=model_server.base_url, api_key="scripted-no-key", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)


def agent(name: str, server: MCPServerStdio | None, **options: Any) -> Agent[Any]:
    return Agent(name=name, instructions="Use the tools.", model=model(),
                 mcp_servers=[server] if server is not None else [], **options)


async def run(starting_agent: Agent[Any], task: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("run_config", RUN_CONFIG)
    return await Runner.run(starting_agent, task, **kwargs)


# -- ground truth recorded in this process (client-side "bodies") and refusals ---------------------


def client_record(name: str, arguments: dict[str, Any], agent_name: str, call_id: str, **extra: Any) -> None:
    cc.record(name, arguments, "ok", agent_name, tool_call_id=call_id, tool_call_id_source="script",
              recorded_by="client", t=time.time(), **extra)


_refusals: list[tuple[int, dict[str, Any]]] = []


def refuse(position: int, name: str, arguments: Any, agent_name: str, reason: str, kind: str, call_id: str) -> None:
    """A call whose body never ran, placed at ``position`` (0-based) among the merged executions."""
    assert kind in cc.REFUSAL_KINDS, kind
    _refusals.append((position, {"name": name, "arguments": arguments, "outcome": "refused", "refusal_kind": kind,
                                 "agent": agent_name, "reason": reason, "tool_call_id": call_id,
                                 "tool_call_id_source": "script"}))


def merged_truth() -> list[dict[str, Any]]:
    """Client records and the server's (read back from its file), by time, refusals at their place."""
    entries = cc.truth_snapshot()
    if current.truth_file.exists():
        entries += json.loads(current.truth_file.read_text())
    entries.sort(key=lambda e: e["t"])
    for position, entry in _refusals:
        entries.insert(position, entry)
    return [{**{k: v for k, v in e.items() if k not in ("seq", "t")}, "seq": seq}
            for seq, e in enumerate(entries, start=1)]


# -- scenarios ----------------------------------------------------------------------------------


async def single_tool() -> None:
    model_server.script(cc.reply(tool_calls=[call("calculator", "multiply", {"a": 10, "b": 5})]), cc.reply("50"))
    async with mcp_server() as server:
        await run(agent("calculator", server), "What is 10 times 5?")


async def sequential_chain() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("researcher", "search", {"query": "widget price"})]),
        cc.reply(tool_calls=[call("researcher", "compute", {"expression": "42 * 3"})]),
        cc.reply("3 widgets cost 126"),
    )
    async with mcp_server() as server:
        await run(agent("researcher", server), "How much do 3 widgets cost?")


async def parallel_tools() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("assistant", "get_weather", {"city": "Paris"}),
                             call("assistant", "multiply", {"a": 3, "b": 4})]),
        cc.reply("Paris is sunny; 3 * 4 = 12"),
    )
    async with mcp_server() as server:
        await run(agent("assistant", server), "Weather in Paris, and 3 times 4?")


async def repeated_tool() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 2, "b": 3})]),
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 4, "b": 5})]),
        cc.reply("2*3 = 6 and 4*5 = 20"),
    )
    async with mcp_server() as server:
        await run(agent("calculator", server), "What are 2 times 3 and 4 times 5?")


async def no_tools() -> None:
    model_server.script(cc.reply("Hello! How can I help?"))
    async with mcp_server() as server:
        await run(agent("calculator", server), "Hi there")


async def tool_error() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "divide", {"a": 10, "b": 0})]),
        cc.reply(tool_calls=[call("calculator", "divide", {"a": 10, "b": 2})]),
        cc.reply("10 / 2 = 5"),
    )
    async with mcp_server() as server:
        await run(agent("calculator", server), "Divide 10 by 0, or by something sensible")


async def unknown_tool() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "format_disk", {"drive": "C:"})]),
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 6, "b": 7})]),
        cc.reply("I cannot format disks; 6 * 7 = 42"),
    )
    refuse(0, "format_disk", {"drive": "C:"}, "calculator",
           "no tool of that name on the agent (RunConfig.tool_not_found_behavior='return_error_to_model'); "
           "never sent to the MCP server", "unknown_tool", current.id_of("format_disk"))
    async with mcp_server() as server:
        await run(agent("calculator", server), "Format the disk, then multiply 6 by 7",
                  run_config=RunConfig(trace_include_sensitive_data=True, tool_not_found_behavior="return_error_to_model"))


async def server_unknown_tool() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("researcher", "legacy_lookup", {"term": "OCaml"})]),
        cc.reply(tool_calls=[call("researcher", "lookup", {"term": "OCaml"})]),
        cc.reply("OCaml is a statically typed functional language"),
    )
    refuse(0, "legacy_lookup", {"term": "OCaml"}, "researcher",
           "the MCP server no longer has the tool (removed after the first tools/list): tools/call answers "
           "isError 'Unknown tool: legacy_lookup'", "unknown_tool", current.id_of("legacy_lookup"))
    async with mcp_server(retire="legacy_lookup") as server:
        await run(agent("researcher", server), "Look up OCaml")


async def invalid_arguments() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": "ten", "b": 5})]),
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 10, "b": 5})]),
        cc.reply("50"),
    )
    refuse(0, "multiply", {"a": "ten", "b": 5}, "calculator",
           "the MCP server's input schema rejects a='ten' (a is an integer); the SDK does not validate MCP "
           "arguments itself, the server answers isError", "invalid_arguments", current.id_of("multiply"))
    async with mcp_server() as server:
        await run(agent("calculator", server), "What is ten times 5?")


async def invalid_arguments_json() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "multiply", '{"a": 10, "b": ')]),
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 10, "b": 5})]),
        cc.reply("50"),
    )
    refuse(0, "multiply", '{"a": 10, "b": ', "calculator",
           "arguments are not valid JSON: the SDK refuses before any tools/call (ModelBehaviorError "
           "'Invalid JSON input for tool multiply'); the model is told 'An error occurred while running the tool. "
           "Please try again.'",
           "invalid_arguments", current.id_of("multiply"))
    async with mcp_server() as server:
        await run(agent("calculator", server), "What is 10 times 5?")


async def _approval(approve: bool, outer_trace: bool = True) -> None:
    model_server.script(
        cc.reply(tool_calls=[call("janitor", "delete_file", {"path": "/srv/scratch.txt"})]),
        cc.reply("Deleted." if approve else "I was not allowed to delete it."),
    )
    async with mcp_server(require_approval={"always": {"tool_names": ["delete_file"]}}) as server:
        janitor = agent("janitor", server)
        if outer_trace:  # one SDK trace for both runs: without it the resumed run exports no span
            with trace("approval workflow"):
                await _both_runs(janitor, approve)
        else:
            await _both_runs(janitor, approve)


async def _both_runs(janitor: Agent[Any], approve: bool) -> None:
    first = await run(janitor, "Delete /srv/scratch.txt")
    if len(first.interruptions) != 1:
        raise AssertionError(f"expected one approval interruption, got {len(first.interruptions)}")
    state = first.to_state()
    if approve:
        state.approve(first.interruptions[0])
    else:
        state.reject(first.interruptions[0], rejection_message="operator rejected: scratch file is still in use")
        refuse(0, "delete_file", {"path": "/srv/scratch.txt"}, "janitor",
               "MCP require_approval 'always'; RunState.reject", "approval_denied", current.id_of("delete_file"))
    await run(janitor, state)


async def approval_approved() -> None:
    await _approval(True)


async def approval_approved_no_outer_trace() -> None:
    await _approval(True, outer_trace=False)


async def blocked_approval_rejected() -> None:
    await _approval(False)


async def blocked_tool_call_limit() -> None:
    # max_turns=1: the SDK checks the limit before asking the model, so turn 1's call runs and
    # the run stops (MaxTurnsExceeded) before a second model call: nothing is left requested.
    model_server.script(cc.reply(tool_calls=[call("calculator", "multiply", {"a": 10, "b": 5})]))
    async with mcp_server() as server:
        await run(agent("calculator", server), "What is 10 times 5, plus 7?", max_turns=1)


async def multi_turn() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("calculator", "multiply", {"a": 10, "b": 5})]), cc.reply("50"),
        cc.reply(tool_calls=[call("calculator", "add", {"a": 50, "b": 7})]), cc.reply("57"),
    )
    session = SQLiteSession(f"mcpoa-{current.name}")  # in memory
    async with mcp_server() as server:
        calculator = agent("calculator", server)
        await run(calculator, "What is 10 times 5?", session=session)
        await run(calculator, "Now add 7 to that", session=session)


class RecordsAgentTools(RunHooks[Any]):
    """An agent-as-tool is run by the SDK, not by a body of ours: its start is its execution."""

    def __init__(self, tool_names: set[str]) -> None:
        self.tool_names = tool_names

    async def on_tool_start(self, context: Any, agent: Agent[Any], tool: Any) -> None:
        if tool.name in self.tool_names:
            entry = scripted(tool.name)
            client_record(tool.name, entry["arguments"], agent.name, getattr(context, "tool_call_id", None)
                          or entry["tool_call_id"], agent_tool=True)


async def delegation_agent_tool() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("manager", "ask_researcher", {"input": "What is OCaml?"})]),
        # the researcher's own run (same scripted model, asked next)
        cc.reply(tool_calls=[call("researcher", "lookup", {"term": "OCaml"})]),
        cc.reply("OCaml is a statically typed functional language"),
        cc.reply("The researcher says OCaml is statically typed and functional"),
    )
    async with mcp_server() as server:
        researcher = agent("researcher", server)
        ask = researcher.as_tool(tool_name="ask_researcher", tool_description="Ask the researcher a question.")
        manager = agent("manager", None, tools=[ask])
        await run(manager, "Tell me about OCaml", hooks=RecordsAgentTools({"ask_researcher"}))


async def delegation_handoff() -> None:
    model_server.script(
        cc.reply(tool_calls=[call("triage", "transfer_to_researcher", {})]),
        cc.reply(tool_calls=[call("researcher", "lookup", {"term": "OCaml"})]),
        cc.reply("OCaml is a statically typed functional language"),
    )

    def on_handoff(ctx: Any) -> None:
        entry = scripted("transfer_to_researcher")
        client_record("transfer_to_researcher", {}, "triage", entry["tool_call_id"], framework_tool=True, handoff=True)

    async with mcp_server() as server:
        researcher = agent("researcher", server, handoff_description="Looks terms up.")
        triage = agent("triage", None, handoffs=[handoff(researcher, on_handoff=on_handoff)])
        await run(triage, "Tell me about OCaml")


APPROVAL_NOTE = ("MCPServerStdio(require_approval={'always': {'tool_names': ['delete_file']}}): run 1 ends with an "
                 "interruption (no tools/call sent); RunState.{decision} and the resumed Runner.run(agent, state) is a "
                 "second SDK run. Both runs are inside `with agents.trace('approval workflow')`, so they share one trace.")
ScenarioBody = Callable[[], Awaitable[None]]
SCENARIOS: list[tuple[str, str, ScenarioBody, dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5) on the MCP server, then text", single_tool, {}, ""),
    ("sequential_chain", "search, then compute in the next turn, then text", sequential_chain, {}, ""),
    ("parallel_tools", "get_weather(Paris) and multiply(3, 4) in one model turn, then text", parallel_tools, {},
     "the SDK runs both calls concurrently over one MCP session; seq is the order the server ran them"),
    ("repeated_tool", "multiply(2, 3), then multiply(4, 5) in the next turn, then text", repeated_tool, {}, ""),
    ("no_tools", "the model answers with text; tools/list still happens", no_tools, {}, ""),
    ("tool_error", "divide(b=0) raises in the server; the server answers isError; the model retries with b=2",
     tool_error, {}, "the MCP 'server tool that raises' case"),
    ("unknown_tool", "the model asks for format_disk, which the agent does not have (returned to the model as an "
     "error, RunConfig.tool_not_found_behavior='return_error_to_model'); then multiply", unknown_tool, {}, ""),
    ("server_unknown_tool", "the model calls legacy_lookup, listed by tools/list but removed from the server right "
     "after: tools/call answers isError 'Unknown tool'; then lookup", server_unknown_tool, {},
     "the MCP 'tool name the server does not have' case: the client's tool list is stale"),
    ("invalid_arguments", "multiply(a='ten') is sent to the server, whose input schema rejects it (isError, the body "
     "never runs); retry with a=10", invalid_arguments, {}, "the MCP 'arguments the server's schema rejects' case"),
    ("invalid_arguments_json", "multiply's arguments are not valid JSON: the SDK refuses it before any tools/call; "
     "retry with valid arguments", invalid_arguments_json, {}, ""),
    ("approval_approved", "delete_file needs approval (MCP require_approval); run 1 interrupts, RunState.approve, "
     "run 2 sends the tools/call", approval_approved, {}, APPROVAL_NOTE.replace("{decision}", "approve")),
    ("blocked_approval_rejected", "delete_file needs approval; run 1 interrupts, RunState.reject, run 2 tells the "
     "model", blocked_approval_rejected, {}, APPROVAL_NOTE.replace("{decision}", "reject")),
    ("approval_approved_no_outer_trace", "approval_approved without the outer agents.trace", 
     approval_approved_no_outer_trace, {}, APPROVAL_NOTE.replace("{decision}", "approve")
     + " Without an outer agents.trace the resumed run exports no OpenInference span."),
    ("blocked_tool_call_limit", "max_turns=1: multiply runs in turn 1, then MaxTurnsExceeded ends the run before the "
     "model is asked again", blocked_tool_call_limit, {},
     "the SDK checks max_turns before each model call, so no requested call is ever cut off: nothing is refused"),
    ("multi_turn", "two Runner.run calls sharing an SQLiteSession: multiply, then add", multi_turn, {},
     "two runs, two traces (no outer agents.trace)"),
    ("delegation_agent_tool", "manager calls researcher.as_tool('ask_researcher'); the researcher calls lookup on "
     "the MCP server", delegation_agent_tool,
     {"type": "agent_as_tool", "parent_agent": "manager", "child_agent": "researcher", "via_tool": "ask_researcher",
      "via_tool_call_id": "ask_researcher", "child_tool_calls": ["lookup"]},
     "ask_researcher has no body of ours: its truth entry (agent_tool: true) is recorded by RunHooks.on_tool_start"),
    ("delegation_handoff", "triage hands off to researcher (transfer_to_researcher); researcher calls lookup",
     delegation_handoff,
     {"type": "handoff", "parent_agent": "triage", "child_agent": "researcher", "via_tool": "transfer_to_researcher",
      "via_tool_call_id": "transfer_to_researcher", "child_tool_calls": ["lookup"]},
     "transfer_to_researcher is the SDK's handoff pseudo-tool (framework_tool: true), recorded in on_handoff"),
]


def _server_documents() -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in current.spans_files if path.exists()]


def _server_index(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for document in documents:
        for resource in document.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    rows.append({"span_id": span["spanId"], "parent_span_id": span.get("parentSpanId") or None,
                                 "trace_id": span["traceId"], "name": span["name"],
                                 "status": {0: "UNSET", 1: "OK", 2: "ERROR"}[span.get("status", {}).get("code", 0)],
                                 "service": "corpus-mcp-openai-agents-server", "_start": int(span["startTimeUnixNano"])})
    rows.sort(key=lambda r: r.pop("_start"))
    return rows


def save(name: str, description: str, delegation: dict[str, Any], outcome: str, error: str | None, notes: str) -> None:
    spans = list(exporter.get_finished_spans())
    if delegation:
        delegation = {**delegation, "via_tool_call_id": current.id_of(delegation["via_tool_call_id"]),
                      "child_tool_calls": [current.id_of(c) for c in delegation["child_tool_calls"]]}
    truth = {"description": description, "tool_executions": merged_truth(), "delegation": delegation,
             "run_outcome": outcome, "run_error": error, "notes": notes, "mode": MODE}
    cc.save_scenario(FRAMEWORK, name, spans, truth)
    # the server's spans: a second resourceSpans of the same ExportTraceServiceRequest
    documents = _server_documents()
    folder = cc.FIXTURES / FRAMEWORK
    trace_path, truth_path = folder / f"{name}.json", folder / f"{name}.truth.json"
    trace_doc = json.loads(trace_path.read_text())
    for document in documents:
        trace_doc.setdefault("resourceSpans", []).extend(document.get("resourceSpans", []))
    trace_path.write_text(json.dumps(trace_doc, indent=2) + "\n")
    truth_doc = json.loads(truth_path.read_text())
    server_rows = _server_index(documents)
    truth_doc["server_span_index"] = server_rows
    truth_path.write_text(json.dumps(truth_doc, indent=2, default=str) + "\n")
    print(f"  + {len(server_rows)} server spans")


async def run_all() -> None:
    global current
    for name, description, body, delegation, notes in SCENARIOS:
        if CHOSEN and name not in CHOSEN:
            continue
        current = Scenario(name)
        exporter.clear()
        cc.reset_truth()
        _refusals.clear()
        outcome, error = "ok", None
        try:
            await body()
        except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
            outcome, error = "error", f"{type(exc).__name__}: {exc}"
            print(f"{name}: {error}")
        await asyncio.sleep(0.2)  # let the server process exit and write its last spans
        provider.force_flush()
        if model_server.left():
            raise AssertionError(f"{name}: {model_server.left()} scripted answers were never asked for")
        save(name, description, delegation, outcome, error, notes)


if __name__ == "__main__":
    with model_server:
        asyncio.run(run_all())
