"""docs/frameworks/vercel_ai.md's snippet runs as written in Node.js (``tests/node``: ``ai`` 6 and
the OpenTelemetry JS SDK, ``npm ci`` in ``.ci/setup``), exporting to a real ``otel-reliability
serve``: the run reaches the receiver and is judged as ``eval`` judges the captured scenario.

The page's SDK call is a template (``model``, ``tools`` and ``prompt`` are the user's), so the
test defines them first, as the capture's scenario did (tests/capture/vercel_ai/scenarios.mjs,
the SDK's ``MockLanguageModelV3``), and points the exporter at the receiver's port instead of
4318. vercel_ai_otel.md (``ai`` 7 with ``@ai-sdk/otel``) is not run: ``ai`` 7 cannot live beside
``ai`` 6 in ``tests/node``, and its snippet names the call only in a comment.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from otel_reliability.engine import Engine
from otel_reliability.engine import judge_spans
from otel_reliability.sources import read_spans

from .receiver_harness import CORPUS, NODE_DIR, receivers, wait_until  # noqa: F401 - fixture

PAGE = Path(__file__).resolve().parents[1] / "docs" / "frameworks" / "vercel_ai.md"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (NODE_DIR / "node_modules" / "ai").is_dir(),
    reason=f"node or {NODE_DIR / 'node_modules'} (npm ci in tests/node) is missing",
)

# The user's model, tools and prompt: the captured single_tool scenario (multiply(10, 5)). The
# page's call sets no stopWhen, so the SDK stops after the first step: the model is asked once.
USERS_PART = """
import { generateText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const usage = { inputTokens: { total: 11, noCache: 11 }, outputTokens: { total: 7, text: 7 } };
const model = new MockLanguageModelV3({
  provider: 'scripted', modelId: 'scripted-single',
  doGenerate: async () => ({
    content: [{ type: 'tool-call', toolCallId: 'call_mul_1', toolName: 'multiply', input: JSON.stringify({ a: 10, b: 5 }) }],
    finishReason: { unified: 'tool-calls', raw: 'tool-calls' }, usage, warnings: [],
  }),
});
const tools = {
  multiply: tool({ description: 'Multiply two integers.', inputSchema: z.object({ a: z.number(), b: z.number() }),
                   execute: async ({ a, b }) => a * b }),
};
const prompt = 'What is 10 times 5?';
"""


def test_the_vercel_ai_page_s_snippet_runs_in_node_and_its_run_is_judged_by_the_receiver(receivers, tmp_path):
    receiver = receivers.start("vercel-ai-page")
    [snippet] = re.findall(r"^```js\n(.*?)^```", PAGE.read_text(), re.S | re.M)
    assert "http://localhost:4318/v1/traces" in snippet
    script = tmp_path / "page.mjs"
    script.write_text(USERS_PART + snippet.replace("http://localhost:4318", receiver.http_url))
    (tmp_path / "node_modules").symlink_to(NODE_DIR / "node_modules")  # what `npm install` gave the user
    done = subprocess.run([NODE, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr

    results = wait_until(lambda: receiver.settled() and receiver.results()["results"], 30, "the run's verdict")
    [captured] = judge_spans(Engine(), read_spans(CORPUS / "vercel_ai" / "single_tool.json"))
    assert [(r["agent"], r["eval_status"]) for r in results] == [("calculator", captured.verdict.eval_status)]
    assert [(a["agent"], a["tool"], a["outcome"]) for a in results[0]["chain"]] == [
        (a.agent, a.tool, a.outcome) for a in captured.verdict.chain
    ]
