"""docs/frameworks/genkit.md's snippet runs as written in Node.js (``tests/node_genkit``: ``genkit``
and the OpenTelemetry JS SDK at the versions the capture pinned, ``npm ci`` in ``.ci/setup``),
exporting to a real ``otel-reliability serve``: the run reaches the receiver and is judged as
``eval`` judges the captured scenario.

The page hands Genkit a span processor and leaves the agent to the user ("then genkit({ plugins:
[...] }); run each agent as a flow named after it"), so the test adds that part after the snippet:
the captured single_tool scenario (a ``calculator`` flow, ``multiply(10, 5)``), with a model of its
own (``ai.defineModel``, answering as the capture's scripted server did) in place of a provider's
plugin, and points the exporter at the receiver's port instead of 4318. Genkit runs on the
OpenTelemetry JS SDK 1.x, ``tests/node`` holds 2.x: hence a Node project of its own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from otel_reliability.engine import Engine, judge_spans
from otel_reliability.sources import read_spans

from .receiver_harness import CORPUS, receivers, wait_until  # noqa: F401 - fixture

PAGE = Path(__file__).resolve().parents[1] / "docs" / "frameworks" / "genkit.md"
GENKIT_DIR = Path(__file__).resolve().parent / "node_genkit"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (GENKIT_DIR / "node_modules" / "genkit").is_dir(),
    reason=f"node or {GENKIT_DIR / 'node_modules'} (npm ci in tests/node_genkit) is missing",
)

# The user's agent: a flow named after it whose model asks for multiply(10, 5), then answers.
USERS_PART = """
import { genkit, z } from 'genkit';
import { flushTracing } from 'genkit/tracing';

const ai = genkit({});
ai.defineModel({ name: 'scripted', supports: { tools: true, multiturn: true } }, async (request) => {
  const answered = request.messages.some((m) => m.role === 'tool');
  const content = answered ? [{ text: '50' }] : [{ toolRequest: { name: 'multiply', input: { a: 10, b: 5 }, ref: 'call_mul_1' } }];
  return { message: { role: 'model', content }, finishReason: 'stop' };
});
const multiply = ai.defineTool(
  { name: 'multiply', description: 'Multiply two integers.', inputSchema: z.object({ a: z.number(), b: z.number() }) },
  async ({ a, b }) => a * b,
);
const calculator = ai.defineFlow({ name: 'calculator' }, async (prompt) => (await ai.generate({ model: 'scripted', prompt, tools: [multiply] })).text);
console.log(await calculator('What is 10 times 5?'));
await flushTracing();
"""


def test_the_genkit_page_s_snippet_runs_in_node_and_its_run_is_judged_by_the_receiver(receivers, tmp_path):
    receiver = receivers.start("genkit-page")
    [snippet] = re.findall(r"^```js\n(.*?)^```", PAGE.read_text(), re.S | re.M)
    assert "http://localhost:4318/v1/traces" in snippet
    script = tmp_path / "page.mjs"
    script.write_text(snippet.replace("http://localhost:4318", receiver.http_url) + USERS_PART)
    (tmp_path / "node_modules").symlink_to(GENKIT_DIR / "node_modules")  # what `npm install` gave the user
    done = subprocess.run([NODE, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("50"), done.stdout

    results = wait_until(lambda: receiver.settled() and receiver.results()["results"], 30, "the run's verdict")
    [captured] = judge_spans(Engine(), read_spans(CORPUS / "genkit" / "single_tool.json"))
    assert [(r["agent"], r["eval_status"]) for r in results] == [("calculator", captured.verdict.eval_status)]
    assert [(a["agent"], a["tool"], a["outcome"]) for a in results[0]["chain"]] == [
        (a.agent, a.tool, a.outcome) for a in captured.verdict.chain
    ]
