"""docs/frameworks/dspy.md's snippet, run as written: a ``dspy.ReAct`` agent on DSPy's own
``dspy.LM`` (default engine) and the capture's scripted model (tests/capture/dspy/capture.py,
scenario ``tool_error``), judged, stored and exported as the captured dspy tool_error scenario."""

from __future__ import annotations

import json
import os

from .harness import assert_page_judged_as_captured, run_page_snippet

import capture_common as cc  # noqa: E402 - on the path from harness

# before litellm/dspy are imported: nothing may leave this machine, nothing is written to ~
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DSPY_CACHEDIR", "/tmp/live-dspy-cache")


def step(thought: str, tool: str, args: dict) -> dict:
    """One ReAct iteration: the model picks a tool in ChatAdapter's field markers (capture.py)."""
    return cc.reply(f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
                    f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n[[ ## completed ## ]]")


def extract(reasoning: str, answer: str) -> dict:
    """ReAct's closing ChainOfThought over the trajectory."""
    return cc.reply(f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]")


def test_the_page_s_snippet_judges_a_live_run(tmp_path, monkeypatch):
    page = run_page_snippet("dspy", tmp_path / "results.db", monkeypatch)
    import dspy

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        return a / b

    with cc.ScriptedOpenAI() as server:
        server.script(
            step("Divide 10 by 0.", "divide", {"a": 10, "b": 0}),
            step("That failed; divide by 2 instead.", "divide", {"a": 10, "b": 2}),
            step("I have what I need.", "finish", {}),
            extract("10 / 2 = 5", "5"),
        )
        lm = dspy.LM(f"openai/{server.model}", api_base=server.base_url, api_key="scripted-no-key", cache=False,
                     num_retries=0)
        with dspy.context(lm=lm):
            prediction = dspy.ReAct("question -> answer", tools=[divide])(question="Divide 10 by 0, or by something sensible")
        assert not server.left(), f"{server.left()} scripted answers were never asked for"
    assert prediction.answer == "5"
    assert_page_judged_as_captured(page, "dspy", "tool_error")
