"""Capture OpenLIT over the OpenAI Agents SDK: ``openlit.init`` auto-instrumenting ``agents``.

``openlit.init`` reuses the tracer and logger providers already set globally
(``trace.set_tracer_provider``, ``_logs.set_logger_provider``), so both are ``capture_common``'s
in-memory ones: no OTLP endpoint, nothing leaves this machine; metrics are off. Its
``openai_agents`` instrumentation calls ``agents.set_trace_processors([its processor])``, which
replaces the SDK's own processors, so the SDK's exporter to OpenAI is gone as well (and no
``OPENAI_API_KEY`` is set). OpenLIT also instruments the ``openai`` client the SDK's
``OpenAIChatCompletionsModel`` uses, and plain HTTP. ``pricing_json`` is the empty local table
``../openlit/pricing.json``: without it ``openlit.init`` fetches a price list from the web.
Scenarios, tools and scripts are ``agents_sdk``'s; written to
``tests/fixtures/corpus/openlit_openai_agents/``.

Run:  /tmp/capture-openlit_openai_agents/bin/python tests/capture/openlit_openai_agents/capture.py [scenario ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for key in [k for k in os.environ if k.startswith(("OPENLIT_", "OPENAI_", "OTEL_"))]:
    del os.environ[key]

import capture_common as cc  # noqa: E402
from opentelemetry import _logs, trace  # noqa: E402

FRAMEWORK = "openlit_openai_agents"
provider, exporter = cc.tracing("corpus-openlit-openai-agents")
logger_provider, log_exporter = cc.logging_provider("corpus-openlit-openai-agents")
trace.set_tracer_provider(provider)
_logs.set_logger_provider(logger_provider)

import openlit  # noqa: E402

PRICING = Path(__file__).parents[1] / "openlit" / "pricing.json"
openlit.init(application_name="corpus-openlit-openai-agents", environment="capture", disable_metrics=True,
             capture_message_content=True, pricing_json=str(PRICING))

import agents_sdk  # noqa: E402
from agents import GuardrailFunctionOutput, Runner, input_guardrail  # noqa: E402
from capture_common import reply  # noqa: E402


@input_guardrail
def polite_only(context: Any, agent: Any, user_input: Any) -> GuardrailFunctionOutput:
    """An agent input guardrail that lets the question through (its tripwire stays down)."""
    return GuardrailFunctionOutput(output_info={"rude": False}, tripwire_triggered=False)


async def guarded_single_tool() -> agents_sdk.Result:
    agents_sdk.server.script(reply(tool_calls=[agents_sdk.call("multiply", {"a": 10, "b": 5})]),
                             reply("10 times 5 is 50."))
    await Runner.run(agents_sdk.agent("calculator", [agents_sdk.multiply], input_guardrails=[polite_only]),
                     "What is 10 times 5?")
    return {"notes": "As single_tool, with an agent input guardrail (polite_only) that does not trip: OpenLIT "
                     "writes its span as invoke_agent polite_only, the guardrail's name in gen_ai.agent.name."}


# OpenLIT writes a guardrail span as it writes an agent's: one scenario more than agents_sdk's shows how
agents_sdk.SCENARIOS["guarded_single_tool"] = guarded_single_tool


def clear() -> None:
    exporter.clear()
    log_exporter.clear()


def save(scenario: str, truth: dict[str, Any]) -> None:
    provider.force_flush()
    logger_provider.force_flush()
    cc.save_scenario(FRAMEWORK, scenario, list(exporter.get_finished_spans()), truth,
                     list(log_exporter.get_finished_logs()))


if __name__ == "__main__":
    agents_sdk.run_all("oloa", sys.argv[1:], clear, save)
