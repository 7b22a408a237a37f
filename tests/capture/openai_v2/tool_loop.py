"""A small hand-written agent loop over the real ``openai`` client, traced the GenAI way.

The OpenAI instrumentation (``opentelemetry-instrumentation-openai-v2``) traces only the
model calls. An application that wants agent and tool spans writes them itself; this loop
does so with ``opentelemetry-util-genai``'s invocation helpers (``invoke_agent {agent}`` and
``execute_tool {tool}``), which is what that package offers instrumentations for it.

The helpers' API changed between releases, so ``GenAISpans`` speaks both:

* 0.4b0: ``start_invoke_local_agent(provider, request_model=)`` / ``start_tool(name, arguments=,
  tool_call_id=, ...)``, attributes set on the returned invocation, ``stop()`` / ``fail()``.
* 1.x: ``invoke_local_agent(agent_name=, request_model=[, conversation_id=])`` / ``tool(name,
  tool_call_id=, tool_type=, tool_description=[, agent_name=])``, ``arguments`` and
  ``tool_result`` set on the invocation (the bracketed keywords came in 1.2b0).

What the loop refuses (unknown tool, arguments that fail the tool's schema, a guard that
says no) never runs and gets no ``execute_tool`` span: the model is answered with an error
tool message, as most hand-written loops do.
"""

from __future__ import annotations

import inspect
import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from opentelemetry.util.genai.handler import TelemetryHandler

try:  # 1.x names the text part TextPart, 0.4b0 Text
    from opentelemetry.util.genai.types import TextPart
except ImportError:  # pragma: no cover - depends on the installed release
    from opentelemetry.util.genai.types import Text as TextPart  # type: ignore[no-redef]
from opentelemetry.util.genai.types import InputMessage, OutputMessage

_JSON_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "string": (str,)}


@dataclass(frozen=True)
class ToolContext:
    """What the loop tells a tool body about the call it is running."""

    agent: str
    tool_call_id: str


@dataclass
class Tool:
    """A function the model may call; ``parameters`` maps argument name to JSON type."""

    name: str
    description: str
    parameters: dict[str, str]
    body: Callable[..., Any]

    def schema(self) -> dict[str, Any]:
        properties = {key: {"type": kind} for key, kind in self.parameters.items()}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": properties, "required": list(self.parameters)},
            },
        }

    def argument_problem(self, arguments: Any) -> str | None:
        """Why ``arguments`` do not fit the schema, or None when they do."""
        if not isinstance(arguments, dict):
            return "arguments must be a JSON object"
        missing = [key for key in self.parameters if key not in arguments]
        extra = [key for key in arguments if key not in self.parameters]
        wrong = [
            key
            for key, kind in self.parameters.items()
            if key in arguments and (isinstance(arguments[key], bool) or not isinstance(arguments[key], _JSON_TYPES[kind]))
        ]
        problems = [f"missing {key}" for key in missing] + [f"unexpected {key}" for key in extra]
        problems += [f"{key} must be {self.parameters[key]}" for key in wrong]
        return "; ".join(problems) or None


@dataclass(frozen=True)
class Refusal:
    """A requested call the loop did not run."""

    name: str
    arguments: Any
    tool_call_id: str
    kind: str
    reason: str


Guard = Callable[[str, Any], "str | None"]


class GenAISpans:
    """``invoke_agent`` and ``execute_tool`` spans through whichever util-genai release is installed."""

    def __init__(self, handler: TelemetryHandler) -> None:
        self._handler = handler
        # 0.4b0's agent helper takes the provider first; from 1.0b0 on, invoke_local_agent() is the one.
        self._legacy = "provider" in inspect.signature(handler.start_invoke_local_agent).parameters if hasattr(
            handler, "start_invoke_local_agent"
        ) else False

    @property
    def capture_content(self) -> bool:
        return self._handler.should_capture_content()

    @contextmanager
    def agent(self, name: str, model: str, conversation_id: str | None, user_text: str) -> Iterator[Any]:
        if self._legacy:
            invocation = self._handler.start_invoke_local_agent("openai", request_model=model)
            invocation.agent_name = name
            invocation.conversation_id = conversation_id
        elif "conversation_id" in inspect.signature(self._handler.invoke_local_agent).parameters:
            invocation = self._handler.invoke_local_agent(agent_name=name, request_model=model, conversation_id=conversation_id)
        else:
            invocation = self._handler.invoke_local_agent(agent_name=name, request_model=model)
            invocation.conversation_id = conversation_id
        if self.capture_content:
            invocation.input_messages = [InputMessage(role="user", parts=[TextPart(content=user_text)])]
        yield from self._finishing(invocation)

    @contextmanager
    def tool(self, tool: Tool, agent: str, call_id: str, arguments: dict[str, Any]) -> Iterator[Any]:
        described = {"tool_call_id": call_id, "tool_type": "function", "tool_description": tool.description}
        if self._legacy:
            invocation = self._handler.start_tool(tool.name, arguments=arguments, **described)
        else:
            if "agent_name" in inspect.signature(self._handler.tool).parameters:
                described["agent_name"] = agent
            invocation = self._handler.tool(tool.name, **described)
            if self.capture_content:
                invocation.arguments = arguments
        yield from self._finishing(invocation)

    @staticmethod
    def _finishing(invocation: Any) -> Iterator[Any]:
        try:
            yield invocation
        except Exception as exc:
            invocation.fail(exc)
            raise
        invocation.stop()


@dataclass
class ToolLoopAgent:
    """Ask the model, run the tools it asks for, answer it, until it replies with text."""

    name: str
    client: Any
    spans: GenAISpans
    tools: list[Tool]
    model: str = "scripted-model"
    guard: Guard | None = None
    max_turns: int = 6
    on_refusal: Callable[[Refusal], None] | None = None

    def run(self, user_text: str, history: list[dict[str, Any]] | None = None, conversation_id: str | None = None) -> str:
        """Run one user turn; ``history`` (earlier turns' messages) is extended in place."""
        messages = history if history is not None else []
        messages.append({"role": "user", "content": user_text})
        with self.spans.agent(self.name, self.model, conversation_id, user_text) as invocation:
            for _ in range(self.max_turns):
                response = self.client.chat.completions.create(
                    model=self.model, messages=messages, tools=[tool.schema() for tool in self.tools]
                )
                message = response.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    if self.spans.capture_content:
                        invocation.output_messages = [
                            OutputMessage(role="assistant", parts=[TextPart(content=message.content or "")], finish_reason="stop")
                        ]
                    return message.content or ""
                for call in message.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": self._answer(call)})
            raise RuntimeError(f"{self.name} gave no final answer in {self.max_turns} model turns")

    def _answer(self, call: Any) -> str:
        """Run one requested call (or refuse it) and say what the model is told."""
        name, call_id = call.function.name, call.id
        tool = next((tool for tool in self.tools if tool.name == name), None)
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            arguments = call.function.arguments
        if tool is None:
            return self._refuse(name, arguments, call_id, "unknown_tool", f"unknown tool {name!r}")
        problem = tool.argument_problem(arguments)
        if problem:
            return self._refuse(name, arguments, call_id, "invalid_arguments", f"invalid arguments for {name}: {problem}")
        blocked = self.guard(name, arguments) if self.guard else None
        if blocked:
            return self._refuse(name, arguments, call_id, "policy_guard", blocked)
        try:
            with self.spans.tool(tool, self.name, call_id, arguments) as invocation:
                result = tool.body(ToolContext(self.name, call_id), **arguments)
                text = result if isinstance(result, str) else json.dumps(result)
                if self.spans.capture_content:
                    invocation.tool_result = text
                return text
        except Exception as exc:  # the model is told, the run goes on
            return f"error: {type(exc).__name__}: {exc}"

    def _refuse(self, name: str, arguments: Any, call_id: str, kind: str, reason: str) -> str:
        if self.on_refusal:
            self.on_refusal(Refusal(name, arguments, call_id, kind, reason))
        return f"error: {reason}"
