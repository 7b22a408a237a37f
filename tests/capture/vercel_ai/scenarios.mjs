// The Vercel AI SDK capture scenarios, shared by the `ai` 6 capture (`experimental_telemetry`,
// `ai.*` spans; this folder) and the `ai` 7 one (`@ai-sdk/otel`, GenAI spans; ../vercel_ai_otel).
// Each capture script imports its own pinned SDK and OpenTelemetry packages and hands them in,
// so this module imports nothing but Node's own: the SDK versions differ only in what
// `convention` says (how telemetry and approval are asked for, and which span is a tool call).
//
// Ground truth is recorded inside the tools' `execute` functions, with the `toolCallId` the SDK
// hands them; refused calls are added by the scenario that set them up. Truth files have the
// format capture_common.save_scenario writes.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const REFUSAL_KINDS = ['unknown_tool', 'invalid_arguments', 'limit', 'policy_guard', 'approval_denied'];

const STATUS = ['UNSET', 'OK', 'ERROR'];

function spanIndex(spans) {
  return [...spans]
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    .map((span) => ({
      span_id: span.spanContext().spanId,
      parent_span_id: span.parentSpanContext?.spanId ?? null,
      trace_id: span.spanContext().traceId,
      name: span.name,
      status: STATUS[span.status.code],
    }));
}

// The tool-execution span (as the convention tells them) that carries the call's id, if any.
function executionSpan(spans, callId, convention) {
  const span = spans.find((s) => convention.toolCallId(s) === callId);
  if (!span) return null;
  return { span_id: span.spanContext().spanId, span_name: span.name, status: STATUS[span.status.code], matched_by: convention.callIdAttribute };
}

function write(path, document) {
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`, 'utf-8');
}

function checkHexIds(document) {
  for (const resourceSpans of document.resourceSpans) {
    for (const scopeSpans of resourceSpans.scopeSpans) {
      for (const span of scopeSpans.spans) {
        if (!/^[0-9a-f]{32}$/.test(span.traceId) || !/^[0-9a-f]{16}$/.test(span.spanId)
          || (span.parentSpanId && !/^[0-9a-f]{16}$/.test(span.parentSpanId))) {
          throw new Error(`span ${span.name} has ids that are not lowercase hex`);
        }
      }
    }
  }
}

/**
 * Runs every scenario and writes `<out>/<scenario>.json` (OTLP/JSON) and `.truth.json`.
 *
 * sdk: { generateText, streamText, tool, ToolLoopAgent, stepCountIs, MockLanguageModel,
 *        convertArrayToReadableStream, z }
 * convention: { telemetry(agent, extra) -> call options, approval: call options for the approval
 *               scenarios, approvalOnTool: put `needsApproval` on the tool, toolCallId(span) -> the
 *               call id if the span is a tool execution, callIdAttribute }
 * exporter / provider: the in-memory exporter and tracer provider the SDK's spans go to
 * serialize(spans) -> OTLP/JSON document with hex ids
 */
export async function capture({ framework, out, sdk, convention, exporter, provider, serialize }) {
  const { generateText, streamText, tool, ToolLoopAgent, stepCountIs, z } = sdk;
  const { telemetry } = convention;

  // -- ground truth, from inside the tools ------------------------------------------------------

  let truth = [];

  function record(name, args, outcome, agent, extra = {}) {
    truth.push({ seq: truth.length + 1, name, arguments: args, outcome, agent, ...extra });
  }

  function addRefused({ name, args, agent, reason, kind, callId, after }) {
    if (!REFUSAL_KINDS.includes(kind)) throw new Error(`unknown refusal kind ${kind}`);
    truth.splice(after, 0, {
      name, arguments: args, outcome: 'refused', refusal_kind: kind, agent, reason, tool_call_id: callId,
    });
    truth.forEach((entry, index) => { entry.seq = index + 1; });
  }

  // Each tool is made for one agent, so the agent a tool records is the one it was built for
  // (the SDK hands `execute` the call id and messages, but no agent name).
  function tools(agent) {
    return {
      multiply: tool({
        description: 'Multiply two integers.',
        inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
        execute: async ({ a, b }, { toolCallId }) => {
          record('multiply', { a, b }, 'ok', agent, { tool_call_id: toolCallId });
          return a * b;
        },
      }),
      add: tool({
        description: 'Add two integers.',
        inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
        execute: async ({ a, b }, { toolCallId }) => {
          record('add', { a, b }, 'ok', agent, { tool_call_id: toolCallId });
          return a + b;
        },
      }),
      lookup_weather: tool({
        description: 'Weather for a city.',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }, { toolCallId }) => {
          record('lookup_weather', { city }, 'ok', agent, { tool_call_id: toolCallId });
          return { Paris: 'sunny, 21C', London: 'rain, 14C' }[city] ?? 'unknown';
        },
      }),
      fetch_url: tool({
        description: 'Fetch a URL (always fails: no network here).',
        inputSchema: z.object({ url: z.string() }),
        execute: async ({ url }, { toolCallId }) => {
          record('fetch_url', { url }, 'error', agent, { tool_call_id: toolCallId, error: 'Error: network unreachable' });
          throw new Error('network unreachable');
        },
      }),
      delete_file: tool({
        description: 'Delete a file (needs a human approval).',
        inputSchema: z.object({ path: z.string() }),
        ...(convention.approvalOnTool ? { needsApproval: true } : {}),
        execute: async ({ path }, { toolCallId }) => {
          record('delete_file', { path }, 'ok', agent, { tool_call_id: toolCallId });
          return `deleted ${path}`;
        },
      }),
    };
  }

  // -- the scripted model --------------------------------------------------------------------------

  const USAGE = {
    inputTokens: { total: 11, noCache: 11, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 7, text: 7, reasoning: undefined },
  };

  const call = (toolName, input, toolCallId) => ({
    type: 'tool-call', toolCallId, toolName, input: typeof input === 'string' ? input : JSON.stringify(input),
  });
  const text = (value) => ({ type: 'text', text: value });

  /** The SDK's mock language model, answering each request with the next scripted content list. */
  function scriptedModel(modelId, ...turns) {
    const left = [...turns];
    const next = () => {
      if (!left.length) throw new Error(`scripted model ${modelId} has no answer left`);
      const content = left.shift();
      const finish = content.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop';
      return { content, finishReason: { unified: finish, raw: finish }, usage: USAGE, warnings: [] };
    };
    return new sdk.MockLanguageModel({
      provider: 'scripted',
      modelId,
      doGenerate: async () => next(),
      doStream: async () => {
        const { content, finishReason, usage } = next();
        const chunks = [{ type: 'stream-start', warnings: [] }];
        content.forEach((part, index) => {
          if (part.type === 'text') {
            chunks.push({ type: 'text-start', id: `t${index}` }, { type: 'text-delta', id: `t${index}`, delta: part.text },
              { type: 'text-end', id: `t${index}` });
          } else {
            chunks.push(part);
          }
        });
        chunks.push({ type: 'finish', finishReason, usage });
        return { stream: sdk.convertArrayToReadableStream(chunks) };
      },
    });
  }

  // -- scenarios -------------------------------------------------------------------------------------

  const scenarios = [];
  // `refused` lists the calls the scenario set up to be refused (their bodies never run), each
  // with `after`: how many executions had run before it, so the truth keeps the real order.
  const scenario = (name, description, body, { delegation = {}, notes = '', refused = [] } = {}) =>
    scenarios.push({ name, description, body, delegation, notes, refused });

  scenario('single_tool', 'generateText: multiply(a=10, b=5), then final text', async () => {
    await generateText({
      model: scriptedModel('scripted-single', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'What is 10 times 5?',
      ...telemetry('calculator'),
    });
  });

  scenario('single_tool_stream', 'streamText: multiply(a=10, b=5), then final text (stream spans)', async () => {
    const result = streamText({
      model: scriptedModel('scripted-stream', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'What is 10 times 5?',
      ...telemetry('calculator'),
    });
    await result.consumeStream();
    await result.text;
  });

  scenario('single_tool_no_content', 'generateText with recordInputs/recordOutputs false: multiply(a=10, b=5), then text', async () => {
    await generateText({
      model: scriptedModel('scripted-no-content', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'What is 10 times 5?',
      ...telemetry('calculator', { recordInputs: false, recordOutputs: false }),
    });
  }, { notes: 'Content capture off: what the spans still say about the call without arguments, results or messages.' });

  scenario('single_tool_no_function_id', 'generateText with telemetry on but no functionId: multiply(a=10, b=5), then text', async () => {
    await generateText({
      model: scriptedModel('scripted-anonymous', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'What is 10 times 5?',
      ...telemetry(null),
    });
  }, { notes: 'Without functionId no span names the agent: the truth\'s agent is the one the tools were built for.' });

  scenario('parallel_tools', 'two calls in one model turn: multiply(3, 4) and add(3, 4), then text', async () => {
    await generateText({
      model: scriptedModel('scripted-parallel',
        [call('multiply', { a: 3, b: 4 }, 'call_mul_1'), call('add', { a: 3, b: 4 }, 'call_add_1')], [text('12 and 7')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: '3*4 and 3+4?',
      ...telemetry('calculator'),
    });
  }, { notes: 'Both execute functions start in the same step; seq is their real start order.' });

  scenario('sequential_chain', 'two model turns: lookup_weather(Paris), then multiply(21, 2), then text', async () => {
    await generateText({
      model: scriptedModel('scripted-chain',
        [call('lookup_weather', { city: 'Paris' }, 'call_weather_1')],
        [call('multiply', { a: 21, b: 2 }, 'call_mul_1')],
        [text('Paris is sunny; twice 21 is 42')]),
      tools: tools('planner'), stopWhen: stepCountIs(5), prompt: 'Weather in Paris, and double the temperature',
      ...telemetry('planner'),
    });
  });

  scenario('tool_error', 'fetch_url throws; the SDK sends the error to the model as a tool-error; then text', async () => {
    await generateText({
      model: scriptedModel('scripted-error', [call('fetch_url', { url: 'https://example.invalid/' }, 'call_fetch_1')],
        [text('The page could not be fetched.')]),
      tools: tools('fetcher'), stopWhen: stepCountIs(5), prompt: 'Fetch https://example.invalid/',
      ...telemetry('fetcher'),
    });
  });

  scenario('unknown_tool', 'model asks for format_disk (no such tool); then multiply(6, 7); then text', async () => {
    await generateText({
      model: scriptedModel('scripted-unknown', [call('format_disk', { drive: 'C:' }, 'call_unknown_1')],
        [call('multiply', { a: 6, b: 7 }, 'call_mul_1')], [text('42')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'Format the disk, then 6*7',
      ...telemetry('calculator'),
    });
  }, {
    refused: [{ name: 'format_disk', args: { drive: 'C:' }, agent: 'calculator', reason: 'no tool of that name (NoSuchToolError)', kind: 'unknown_tool', callId: 'call_unknown_1', after: 0 }],
  });

  scenario('invalid_arguments', 'multiply with a="ten" fails the zod schema (body never runs); then multiply(10, 5); then text', async () => {
    await generateText({
      model: scriptedModel('scripted-invalid', [call('multiply', { a: 'ten', b: 5 }, 'call_mul_bad')],
        [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]),
      tools: tools('calculator'), stopWhen: stepCountIs(5), prompt: 'ten times 5',
      ...telemetry('calculator'),
    });
  }, {
    refused: [{ name: 'multiply', args: { a: 'ten', b: 5 }, agent: 'calculator', reason: 'input fails the tool schema (InvalidToolInputError)', kind: 'invalid_arguments', callId: 'call_mul_bad', after: 0 }],
  });

  async function approvalRun(approved) {
    const agentTools = tools('janitor');
    const messages = [{ role: 'user', content: 'Delete /srv/scratch.txt' }];
    const model = scriptedModel(approved ? 'scripted-approve' : 'scripted-deny',
      [call('delete_file', { path: '/srv/scratch.txt' }, 'call_delete_1')],
      [text(approved ? 'Deleted.' : 'I was not allowed to delete it.')]);
    const first = await generateText({
      model, tools: agentTools, stopWhen: stepCountIs(5), messages, ...telemetry('janitor'), ...convention.approval,
    });
    messages.push(...first.response.messages);
    const requests = first.content.filter((part) => part.type === 'tool-approval-request');
    if (requests.length !== 1) throw new Error(`expected one approval request, got ${requests.length}`);
    messages.push({
      role: 'tool',
      content: requests.map((part) => ({
        type: 'tool-approval-response', approvalId: part.approvalId, approved,
        reason: approved ? 'operator approved' : 'operator rejected: scratch file is still in use',
      })),
    });
    await generateText({
      model, tools: agentTools, stopWhen: stepCountIs(5), messages, ...telemetry('janitor'), ...convention.approval,
    });
  }

  scenario('blocked_approval_denied', 'delete_file needs approval (needsApproval in ai 6, toolApproval in ai 7); run 1 ends with an approval request, run 2 is given a denial; body never runs',
    () => approvalRun(false), {
      refused: [{ name: 'delete_file', args: { path: '/srv/scratch.txt' }, agent: 'janitor', reason: 'approval denied by the operator (tool-approval-response approved=false)', kind: 'approval_denied', callId: 'call_delete_1', after: 0 }],
      notes: 'Two generateText calls, so two traces: run 1 requests the call and stops with a tool-approval-request; run 2 carries the denial.',
    });

  scenario('approval_approved', 'delete_file needs approval (needsApproval in ai 6, toolApproval in ai 7); run 1 ends with an approval request, run 2 is given the approval and runs it',
    () => approvalRun(true), {
      notes: 'Two generateText calls, so two traces: the body runs in run 2, the request was made in run 1.',
    });

  scenario('delegation_agent_as_tool', 'ToolLoopAgent "orchestrator" calls tool research, whose execute runs ToolLoopAgent "researcher" that calls lookup_weather', async () => {
    const researcher = new ToolLoopAgent({
      id: 'researcher',
      model: scriptedModel('scripted-researcher', [call('lookup_weather', { city: 'London' }, 'call_weather_sub_1')],
        [text('London: rain, 14C')]),
      tools: { lookup_weather: tools('researcher').lookup_weather },
      ...telemetry('researcher'),
    });
    const research = tool({
      description: 'Ask the research agent.',
      inputSchema: z.object({ question: z.string() }),
      execute: async ({ question }, { toolCallId }) => {
        record('research', { question }, 'ok', 'orchestrator', { tool_call_id: toolCallId, delegates_to: 'researcher' });
        const answer = await researcher.generate({ prompt: question });
        return answer.text;
      },
    });
    const orchestrator = new ToolLoopAgent({
      id: 'orchestrator',
      model: scriptedModel('scripted-orchestrator', [call('research', { question: 'Weather in London?' }, 'call_research_1')],
        [text('It rains in London.')]),
      tools: { research },
      ...telemetry('orchestrator'),
    });
    await orchestrator.generate({ prompt: 'What is the weather in London?' });
  }, {
    delegation: { parent: 'orchestrator', child: 'researcher', delegating_tool: 'research', delegating_call_id: 'call_research_1', child_call_ids: ['call_weather_sub_1'], mechanism: 'agent called inside a tool execute (ToolLoopAgent.generate)' },
    notes: 'The AI SDK has no handoff primitive; an agent as a tool is its delegation mechanism.',
  });

  scenario('multi_turn', 'two user turns on one message history: multiply(10, 5), then add(50, 1)', async () => {
    const model = scriptedModel('scripted-multi', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')],
      [call('add', { a: 50, b: 1 }, 'call_add_1')], [text('51')]);
    const agentTools = tools('calculator');
    const messages = [{ role: 'user', content: 'What is 10 times 5?' }];
    for (const [turn, next] of [[1, 'And plus 1?'], [2, null]]) {
      const result = await generateText({
        model, tools: agentTools, stopWhen: stepCountIs(5), messages, ...telemetry('calculator'),
      });
      truth.filter((entry) => entry.run === undefined).forEach((entry) => { entry.run = turn; });
      messages.push(...result.response.messages);
      if (next) messages.push({ role: 'user', content: next });
    }
  }, { notes: 'Each generateText call is its own trace; the second one repeats turn 1 in its prompt.' });

  mkdirSync(out, { recursive: true });
  for (const { name, description, body, delegation, notes, refused } of scenarios) {
    exporter.reset();
    truth = [];
    let runOutcome = 'ok';
    let runError = null;
    try {
      await body();
    } catch (error) {
      runOutcome = 'error';
      runError = `${error.name}: ${error.message}`;
      console.error(error);
    }
    await provider.forceFlush();
    refused.forEach(addRefused);
    const spans = exporter.getFinishedSpans();
    const otlp = serialize(spans);
    checkHexIds(otlp);
    const executions = truth.map((entry) => ({
      ...entry,
      [entry.outcome === 'refused' ? 'tool_span_despite_refusal' : 'execution_span']: executionSpan(spans, entry.tool_call_id, convention),
    }));
    write(join(out, `${name}.json`), otlp);
    write(join(out, `${name}.truth.json`), {
      framework, scenario: name, description, run_outcome: runOutcome, run_error: runError,
      tool_executions: executions, delegation, notes, span_index: spanIndex(spans),
    });
    console.log(`saved ${framework}/${name}: ${spans.length} spans, ${executions.length} tool executions`);
  }
}
