"""docs/frameworks/google_adk.md's snippet, run as written, before ``google.adk`` is imported and
with the content setting the page asks for: an ``LlmAgent`` on the capture's scripted ``BaseLlm``
(tests/capture/google_adk/capture.py), judged, stored and exported as the captured unknown_tool
(ADK answers the unknown call without running anything; the request is on the model span)."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import assert_page_judged_as_captured, run_page_snippet


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def unknown_tool() -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    class ScriptedLlm(BaseLlm):
        """Answers each model request with the next scripted list of parts."""

        script: list[list[types.Part]]

        async def generate_content_async(self, llm_request: Any, stream: bool = False):
            assert self.script, f"scripted model {self.model} has no answer left"
            yield LlmResponse(content=types.Content(role="model", parts=self.script.pop(0)))

    def call(name: str, args: dict[str, Any], call_id: str) -> types.Part:
        return types.Part(function_call=types.FunctionCall(name=name, args=args, id=call_id))

    model = ScriptedLlm(model="scripted-unknown-tool", script=[[call("format_disk", {"drive": "C:"}, "call_unknown_1")],
                                                               [call("multiply", {"a": 6, "b": 7}, "call_mul_1")],
                                                               [types.Part(text="42")]])
    runner = InMemoryRunner(LlmAgent(name="calculator", model=model, tools=[multiply]), app_name="docs")
    session = await runner.session_service.create_session(app_name="docs", user_id="user-1")
    message = types.Content(role="user", parts=[types.Part(text="Format the disk, then multiply 6 by 7")])
    async for _ in runner.run_async(user_id="user-1", session_id=session.id, new_message=message):
        pass
    await runner.close()


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")  # as the page says
    page = run_page_snippet("google_adk", tmp_path / "results.db", monkeypatch)  # before google.adk is imported
    asyncio.run(unknown_tool())
    assert_page_judged_as_captured(page, "google_adk", "unknown_tool")
