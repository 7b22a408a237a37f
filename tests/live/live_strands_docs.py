"""docs/frameworks/strands.md's snippet, run as written (strands takes the global tracer
provider it sets): a strands ``Agent`` on its OpenAI model provider and capture_common's
scripted model, judged, stored and exported as the captured refused_unknown_tool scenario."""

from __future__ import annotations

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("strands", tmp_path / "results.db", monkeypatch)
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    with cc.ScriptedOpenAI() as server:  # format_disk is no tool of the agent: strands answers 'Unknown tool'
        server.script(cc.reply(tool_calls=[cc.tool_call("format_disk", {"drive": "C:"}, "call_unknown_1")]),
                      cc.reply(tool_calls=[cc.tool_call("multiply", {"a": 6, "b": 7}, "call_mul_1")]),
                      cc.reply("42"))
        model = OpenAIModel(client_args={"base_url": server.base_url, "api_key": "scripted-no-key", "max_retries": 0},
                            model_id=server.model)
        Agent(name="calculator", model=model, tools=[multiply], callback_handler=None)(
            "Format the disk, then multiply 6 by 7")
    assert_page_judged_as_captured(page, "strands", "refused_unknown_tool")
