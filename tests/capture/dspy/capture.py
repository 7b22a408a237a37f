"""Capture DSPy traces, as openinference-instrumentation-dspy emits them.

Every agent is a real ``dspy.ReAct`` module with plain Python function tools, on DSPy's own
``dspy.LM("openai/scripted-model", api_base=..., api_key=<dummy>)`` pointed at
``ScriptedOpenAI`` on 127.0.0.1: no key, no network. DSPy's response caches are off, so
every model call reaches the script.

Two modes, as OpenInference's DSPy guide sets them up (``DSPyInstrumentor`` and
``LiteLLMInstrumentor``, both instrumented in both modes):

* default (``dspy/``): ``dspy.LM(engine="auto")``, DSPy's default, which talks to the
  model through its own vendored ``lm15`` client, not litellm, so the litellm
  instrumentation has nothing to trace;
* ``--litellm`` (``dspy_litellm/``): ``dspy.LM(engine="litellm")``, DSPy's litellm
  backend; every ``LM.__call__`` span then gets a litellm ``completion`` LLM span under it.

ReAct does not use the API's tool calling: each iteration the model answers in DSPy's
``[[ ## next_tool_name ## ]]`` text fields (no ``tools`` in the request, no ``tool_calls`` in
the reply), so **no call id exists**: the truth has no ``tool_call_id``. Tool bodies record
the truth when they run; ReAct's built-in ``finish`` step (a lambda of DSPy's) is recorded
from the scenario when the module's returned trajectory shows it ran (``framework_tool``).

Run:  /tmp/capture-dspy/bin/python tests/capture/dspy/capture.py [--litellm] [scenario ...]
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

# before litellm/dspy are imported: nothing may leave this machine, nothing is written to ~
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DSPY_CACHEDIR", "/tmp/capture-dspy-cache")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import capture_common as cc  # noqa: E402

from openinference.instrumentation import TraceConfig, using_session  # noqa: E402
from openinference.instrumentation.dspy import DSPyInstrumentor  # noqa: E402
from openinference.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402

LITELLM = "--litellm" in sys.argv
FRAMEWORK = "dspy_litellm" if LITELLM else "dspy"
ENGINE = "litellm" if LITELLM else "auto"
provider, exporter = cc.tracing(f"corpus-{FRAMEWORK.replace('_', '-')}")
# TraceConfig() = OpenInference's defaults: inputs, outputs and messages all recorded
# (no OPENINFERENCE_HIDE_* variable is set)
DSPyInstrumentor().instrument(tracer_provider=provider, config=TraceConfig())
LiteLLMInstrumentor().instrument(tracer_provider=provider, config=TraceConfig())

import dspy  # noqa: E402

dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


# -- the agent running now, and what ran -------------------------------------------------


def ran(name: str, arguments: dict[str, Any], outcome: str = "ok", **extra: Any) -> None:
    """Record, from inside a tool body, that it ran (ReAct gives no call id: there is none)."""
    cc.record(name, arguments, outcome, cc.current_agent.get(), **extra)


def refused(name: str, arguments: dict[str, Any], reason: str, kind: str, agent: str = "ReAct") -> None:
    cc.add_refused(name, arguments, agent, reason, kind)


def run_agent(module: dspy.ReAct, agent: str, **inputs: Any) -> dspy.Prediction:
    """Call a ReAct module as its agent; record its ``finish`` step if the trajectory shows it ran."""
    token = cc.current_agent.set(agent)
    try:
        prediction = module(**inputs)
    finally:
        cc.current_agent.reset(token)
    trajectory = prediction.trajectory
    for key, value in trajectory.items():
        if key.startswith("tool_name_") and value == "finish":
            index = key.removeprefix("tool_name_")
            cc.record("finish", dict(trajectory.get(f"tool_args_{index}") or {}), "ok", agent, framework_tool=True,
                      recorded_from="trajectory")
    return prediction


# -- tools ---------------------------------------------------------------------------------


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    ran("multiply", {"a": a, "b": b})
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers."""
    ran("add", {"a": a, "b": b})
    return a + b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    try:
        result = a / b
    except ZeroDivisionError as exc:
        ran("divide", {"a": a, "b": b}, "error", error=f"{type(exc).__name__}: {exc}")
        raise
    ran("divide", {"a": a, "b": b})
    return result


def get_weather(city: str) -> str:
    """Current weather for a city."""
    ran("get_weather", {"city": city})
    return {"Paris": "sunny, 21C", "London": "rain, 14C"}.get(city, "unknown")


def search(query: str) -> str:
    """Search the web."""
    ran("search", {"query": query})
    return "widget price: 42"


def compute(expression: str) -> float:
    """Evaluate a product of two integers written as 'x * y'."""
    ran("compute", {"expression": expression})
    left, right = expression.split("*")
    return float(int(left) * int(right))


def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount in USD to another currency."""
    ran("convert_currency", {"amount": amount, "currency": currency})
    return f"{amount * 0.9:.2f} {currency}"


def lookup(term: str) -> str:
    """Encyclopedia lookup."""
    ran("lookup", {"term": term})
    return f"{term}: a statically typed functional language"


# -- the scripted model's answers, in DSPy's ChatAdapter / JSONAdapter formats -----------------


def step(thought: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """One ReAct iteration: the model picks a tool (ChatAdapter's field markers)."""
    return cc.reply(f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
                    f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n[[ ## completed ## ]]")


def step_json(thought: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The same, as JSONAdapter (ChatAdapter's fallback after a reply it cannot parse) wants it."""
    return cc.reply(json.dumps({"next_thought": thought, "next_tool_name": tool, "next_tool_args": args}))


def finish(thought: str = "I have what I need.") -> dict[str, Any]:
    return step(thought, "finish", {})


def extract(reasoning: str, answer: str) -> dict[str, Any]:
    """ReAct's closing ChainOfThought over the trajectory: the module's answer."""
    return cc.reply(f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]")


@contextmanager
def model() -> Iterator[cc.ScriptedOpenAI]:
    with cc.ScriptedOpenAI() as server:
        lm = dspy.LM(f"openai/{server.model}", api_base=server.base_url, api_key="scripted-no-key", cache=False,
                     num_retries=0, engine=ENGINE)
        with dspy.context(lm=lm):
            yield server
        if server.left():
            raise AssertionError(f"{server.left()} scripted answers were never asked for")


def react(tools: list[Callable[..., Any]], signature: Any = "question -> answer", cls: type = dspy.ReAct,
          **kwargs: Any) -> dspy.ReAct:
    return cls(signature, tools=tools, **kwargs)


# -- scenarios -------------------------------------------------------------------------------


def single_tool() -> None:
    with model() as server:
        server.script(step("Multiply 10 by 5.", "multiply", {"a": 10, "b": 5}), finish(), extract("10 * 5 = 50", "50"))
        run_agent(react([multiply, add]), "ReAct", question="What is 10 times 5?")


def sequential_chain() -> None:
    with model() as server:
        server.script(
            step("Find the widget price.", "search", {"query": "widget price"}),
            step("Three widgets at 42 each.", "compute", {"expression": "42 * 3"}),
            step("Convert 126 USD to EUR.", "convert_currency", {"amount": 126.0, "currency": "EUR"}),
            finish(),
            extract("3 widgets cost 126 USD, 113.40 EUR", "113.40 EUR"),
        )
        run_agent(react([search, compute, convert_currency]), "ReAct", question="How much do 3 widgets cost in EUR?")


def repeated_tool() -> None:
    with model() as server:
        server.script(
            step("Weather in Paris first.", "get_weather", {"city": "Paris"}),
            step("Now London.", "get_weather", {"city": "London"}),
            finish(),
            extract("Paris sunny, London rainy", "Paris is sunny (21C), London rainy (14C)"),
        )
        run_agent(react([get_weather]), "ReAct", question="Weather in Paris and in London?")


def no_tools() -> None:
    with model() as server:
        server.script(finish("I can answer this directly."), extract("Common knowledge.", "Paris"))
        run_agent(react([get_weather]), "ReAct", question="What is the capital of France?")


def tool_error() -> None:
    with model() as server:
        server.script(
            step("Divide 10 by 0.", "divide", {"a": 10, "b": 0}),
            step("That failed; divide by 2 instead.", "divide", {"a": 10, "b": 2}),
            finish(),
            extract("10 / 2 = 5", "5"),
        )
        run_agent(react([divide]), "ReAct", question="Divide 10 by 0, or by something sensible")


def unknown_tool() -> None:
    with model() as server:
        server.script(
            step("Format the disk first.", "format_disk", {"drive": "C:"}),
            step_json("format_disk is not available; multiply instead.", "multiply", {"a": 6, "b": 7}),
            finish(),
            extract("6 * 7 = 42", "42"),
        )
        refused("format_disk", {"drive": "C:"}, "next_tool_name 'format_disk' is not one of the Literal['multiply', "
                "'finish'] choices: ChatAdapter's AdapterParseError, then DSPy re-asks the model with JSONAdapter "
                "(the same ReAct iteration)", "unknown_tool")
        run_agent(react([multiply]), "ReAct", question="Format the disk, then multiply 6 by 7")


def unknown_tool_ends_run() -> None:
    with model() as server:
        server.script(
            step("Format the disk first.", "format_disk", {"drive": "C:"}),
            step_json("Format the disk first.", "format_disk", {"drive": "C:"}),
        )
        refused("format_disk", {"drive": "C:"}, "next_tool_name 'format_disk' is not one of the Literal choices: "
                "AdapterParseError from ChatAdapter and from its JSONAdapter fallback", "unknown_tool")
        run_agent(react([multiply]), "ReAct", question="Format the disk")


def invalid_arguments() -> None:
    with model() as server:
        server.script(
            step("Multiply ten by 5.", "multiply", {"a": "ten", "b": 5}),
            step("The arguments must be integers.", "multiply", {"a": 10, "b": 5}),
            finish(),
            extract("10 * 5 = 50", "50"),
        )
        refused("multiply", {"a": "ten", "b": 5}, "dspy.Tool validates the arguments against the tool's JSON schema "
                "before calling the function: ValueError: Arg a is invalid: 'ten' is not of type 'integer'",
                "invalid_arguments")
        run_agent(react([multiply]), "ReAct", question="What is ten times 5?")


def blocked_tool_call_limit() -> None:
    with model() as server:
        server.script(
            step("Weather in Paris first.", "get_weather", {"city": "Paris"}),
            step("Now London.", "get_weather", {"city": "London"}),
            extract("Only Paris and London were looked up before the iterations ran out.",
                    "Paris is sunny, London rainy; Berlin unknown"),
        )
        run_agent(react([get_weather], max_iters=2), "ReAct", question="Weather in Paris, London and Berlin?")


class QAWithHistory(dspy.Signature):
    """Answer the question, using the conversation so far."""

    question: str = dspy.InputField()
    history: dspy.History = dspy.InputField()
    answer: str = dspy.OutputField()


def multi_turn() -> None:
    with model() as server, using_session("session-dspy-multi-turn"):
        server.script(
            step("Multiply 10 by 5.", "multiply", {"a": 10, "b": 5}), finish(), extract("10 * 5 = 50", "50"),
            step("Add 7 to the previous 50.", "add", {"a": 50, "b": 7}), finish(), extract("50 + 7 = 57", "57"),
        )
        calculator = react([multiply, add], signature=QAWithHistory)
        history = dspy.History(messages=[])
        first = run_agent(calculator, "ReAct", question="What is 10 times 5?", history=history)
        first_run = len(cc.truth_snapshot())
        history = dspy.History(messages=[{"question": "What is 10 times 5?", "answer": first.answer}])
        run_agent(calculator, "ReAct", question="Now add 7 to that", history=history)
    _number_runs(first_run)


class Manager(dspy.ReAct):
    """A ReAct agent of its own class, so that its spans are named ``Manager.forward``."""


class Researcher(dspy.ReAct):
    """The sub-agent: ``Researcher.forward``."""


def delegation() -> None:
    with model() as server:
        researcher = react([lookup], cls=Researcher)

        def ask_researcher(question: str) -> str:
            """Ask the researcher agent, which looks terms up in an encyclopedia."""
            ran("ask_researcher", {"question": question})
            return run_agent(researcher, "Researcher", question=question).answer

        server.script(
            step("Delegate to the researcher.", "ask_researcher", {"question": "What is OCaml?"}),
            # the researcher's own ReAct loop, inside the manager's tool call
            step("Look OCaml up.", "lookup", {"term": "OCaml"}),
            finish(),
            extract("The encyclopedia says so.", "OCaml is a statically typed functional language"),
            # back in the manager
            finish("The researcher answered."),
            extract("From the researcher.", "OCaml is statically typed and functional"),
        )
        run_agent(react([ask_researcher], cls=Manager), "Manager", question="Tell me about OCaml")


def _number_runs(first_run_size: int) -> None:
    with cc._lock:
        for index, entry in enumerate(cc._truth):
            entry["run"] = 1 if index < first_run_size else 2


NO_IDS = ("ReAct picks tools in text fields (next_tool_name / next_tool_args), not through the API's tool calling: "
          "no call ids exist, so the truth has no tool_call_id.")
FINISH = ("finish is ReAct's built-in closing step (a DSPy lambda, framework_tool: true), recorded from the returned "
          "trajectory, after the module returned.")

SCENARIOS: list[tuple[str, str, Callable[[], None], dict[str, Any], str]] = [
    ("single_tool", "multiply(a=10, b=5), then finish, then ReAct's extract step answers", single_tool, {}, ""),
    ("sequential_chain", "search, then compute, then convert_currency, each on the previous result, then finish",
     sequential_chain, {}, ""),
    ("repeated_tool", "get_weather(Paris), then get_weather(London), then finish", repeated_tool, {}, ""),
    ("no_tools", "the model picks finish at once and the extract step answers: none of the agent's tools runs",
     no_tools, {}, "ReAct cannot answer without a step: the only 'call' is its own finish."),
    ("tool_error", "divide(b=0) raises ZeroDivisionError; ReAct puts the error in the trajectory, the model retries "
     "with b=2", tool_error, {}, ""),
    ("unknown_tool", "the model names format_disk, which is not a tool: ChatAdapter cannot parse the reply, DSPy re-asks "
     "the model with JSONAdapter in the same iteration, which names multiply", unknown_tool, {},
     "the refused call was never an execution: it is a model reply that failed to parse (two LLM calls in one "
     "iteration, the first reply naming format_disk)."),
    ("unknown_tool_ends_run", "the model names format_disk twice (ChatAdapter, then its JSONAdapter fallback): the "
     "AdapterParseError leaves ReAct.forward and the run raises", unknown_tool_ends_run, {},
     "the run raised: ReAct catches only ValueError from a step, and AdapterParseError is not one; no tool ran."),
    ("invalid_arguments", "multiply(a='ten') fails dspy.Tool's JSON-schema validation (the function never runs); the "
     "error goes back to the model, which retries with a=10", invalid_arguments, {},
     "the refused call still has a TOOL span (multiply.__call__, ERROR): the validation runs inside Tool.__call__."),
    ("blocked_tool_call_limit", "ReAct(max_iters=2): two get_weather calls use up the iterations; the loop stops before "
     "the model may ask for more or finish, and the extract step answers", blocked_tool_call_limit, {},
     "max_iters stops asking the model: no call was requested and refused, so the truth has no refused entry; "
     "finish never ran. The limit shows only as the missing finish step."),
    ("multi_turn", "two calls of the same ReAct with dspy.History: turn 1 multiplies, turn 2 adds", multi_turn, {},
     "two module calls, two traces; both under OpenInference's using_session('session-dspy-multi-turn'), so every "
     "span carries session.id. run: 1|2 numbers the turns."),
    ("delegation", "Manager (a ReAct subclass) calls its tool ask_researcher, whose body runs Researcher (another ReAct "
     "subclass), which calls lookup", delegation,
     {"type": "agent_as_tool", "parent_agent": "Manager", "via_tool": "ask_researcher", "via_tool_call_id": None,
      "child_agent": "Researcher", "child_tool_calls": [], "child_tool_names": ["lookup", "finish"]},
     "agents are named by their module class (Manager, Researcher): DSPy has no agent name. No call ids exist, so "
     "via_tool_call_id is null and child_tool_names lists the child's calls instead of ids."),
]


def run(scenario: str, description: str, body: Callable[[], None], delegation_truth: dict[str, Any], notes: str) -> None:
    exporter.clear()
    cc.reset_truth()
    outcome, error = "ok", None
    try:
        body()
    except Exception as exc:  # noqa: BLE001 - the run's failure is part of the truth
        outcome, error = "error", f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    provider.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), {
        "description": description,
        "tool_executions": cc.truth_snapshot(),
        "delegation": delegation_truth,
        "run_outcome": outcome,
        "run_error": error,
        "notes": " ".join(filter(None, [notes, NO_IDS, FINISH])),
    })


if __name__ == "__main__":
    chosen = {arg for arg in sys.argv[1:] if not arg.startswith("--")}
    for entry in SCENARIOS:
        if not chosen or entry[0] in chosen:
            run(*entry)
