"""docs/frameworks/langgraph_subagents.md's snippet, run as written: a ``langgraph-supervisor``
supervisor handing off to two workers, each calling its own tool, on the capture's scripted chat
model (tests/capture/langgraph_subagents/capture.py), judged, stored and exported as the
captured delegation_supervisor scenario (the workers' calls in the supervisor's run)."""

from __future__ import annotations

from typing import Any

from .harness import assert_page_judged_as_captured, run_page_snippet


def scripted(*turns: Any) -> Any:
    """A chat model that answers with ``turns`` in order, once; ``bind_tools`` binds to itself."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChat(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            assert self.i < len(self.responses), f"scripted model has no answer left after {self.i}"
            self.i += 1
            return ChatResult(generations=[ChatGeneration(message=self.responses[self.i - 1])])

    return ScriptedChat(responses=list(turns))


def calls(*tool_calls: tuple[str, dict, str]) -> Any:
    from langchain_core.messages import AIMessage

    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in tool_calls])


def say(text: str) -> Any:
    from langchain_core.messages import AIMessage

    return AIMessage(content=text)


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("langgraph_subagents", tmp_path / "results.db", monkeypatch)
    from langchain.agents import create_agent
    from langchain.tools import tool
    from langgraph_supervisor import create_supervisor

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    @tool
    def lookup_weather(city: str) -> str:
        """Weather for a city."""
        return {"Paris": "sunny, 21C"}.get(city, "unknown")

    math_agent = create_agent(scripted(calls(("multiply", {"a": 6, "b": 7}, "call_mul_1")), say("6*7 is 42")),
                              [multiply], name="math_agent")
    weather_agent = create_agent(scripted(calls(("lookup_weather", {"city": "Paris"}, "call_weather_1")),
                                          say("Paris: sunny")), [lookup_weather], name="weather_agent")
    supervisor_model = scripted(calls(("transfer_to_math_agent", {}, "call_handoff_math")),
                                calls(("transfer_to_weather_agent", {}, "call_handoff_weather")),
                                say("6*7 is 42 and Paris is sunny."))
    workflow = create_supervisor([math_agent, weather_agent], model=supervisor_model, supervisor_name="supervisor")
    workflow.compile(name="supervisor_graph").invoke({"messages": [("user", "What is 6*7, and the weather in Paris?")]})
    assert_page_judged_as_captured(page, "langgraph_subagents", "delegation_supervisor")
