// Captures Genkit's own tracer spans (`genkit:*` attributes, tracer `genkit-tracer`) for the
// tool-call scenarios below, offline: every model is `@genkit-ai/compat-oai`'s OpenAI-compatible
// plugin talking to a scripted chat-completions server on 127.0.0.1 (servers.mjs), and the spans
// leave through Genkit's own telemetry setup, `enableTelemetry({ spanProcessors: [...] })` (the
// OpenTelemetry NodeSDK configuration Genkit documents), to an OTLP/HTTP JSON exporter pointed at a
// receiver of ours on 127.0.0.1. No Firebase, no Google Cloud, no Genkit dev UI.
//
// Each agent is a flow (`ai.defineFlow`) named after it that calls `ai.generate` with its tools.
// Ground truth is recorded inside the tool bodies; Genkit hands a tool its input, not the request's
// `ref`, so a body takes the id of the scripted call it carries out from the scripted server (the
// first one handed out with its name and arguments and not yet claimed).
//
// Writes tests/fixtures/corpus/genkit/<scenario>.json (OTLP/JSON as the receiver got it: hex ids)
// and <scenario>.truth.json (the format capture_common.save_scenario writes).
//
// Run:  cd tests/capture/genkit && npm ci && node capture.mjs

import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { openAICompatible } from '@genkit-ai/compat-oai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'genkit';
import { genkit } from 'genkit/beta';
import { enableTelemetry, flushTracing } from 'genkit/tracing';

import { call, otlpReceiver, scriptedOpenAI, text } from './servers.mjs';

const FRAMEWORK = 'genkit';
const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'corpus', FRAMEWORK);
const REFUSAL_KINDS = ['unknown_tool', 'invalid_arguments', 'limit', 'policy_guard', 'approval_denied'];

const receiver = await otlpReceiver();
const model = await scriptedOpenAI();

// One batch per scenario: the capture flushes it when the scenario ends.
const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: receiver.endpoint }), {
  maxQueueSize: 4096, maxExportBatchSize: 4096, scheduledDelayMillis: 600000,
});
await enableTelemetry({
  resource: new Resource({ 'service.name': 'corpus-genkit' }),
  autoDetectResources: false,
  spanProcessors: [processor],
});

const ai = genkit({ plugins: [openAICompatible({ name: 'scripted', apiKey: 'none', baseURL: model.baseURL })] });

// -- ground truth, from inside the tools ------------------------------------------------------------

let truth = [];

function record(name, args, outcome, agent, extra = {}) {
  truth.push({ seq: truth.length + 1, name, arguments: args, outcome, agent, tool_call_id: model.claim(name, args), ...extra });
}

function addRefused({ name, args, agent, reason, kind, callId, after }) {
  if (!REFUSAL_KINDS.includes(kind)) throw new Error(`unknown refusal kind ${kind}`);
  truth.splice(after, 0, { name, arguments: args, outcome: 'refused', refusal_kind: kind, agent, reason, tool_call_id: callId });
  truth.forEach((entry, index) => { entry.seq = index + 1; });
}

// The agent a tool body records is the flow that asked for it: `ask` runs each agent's flow in an
// async context naming the agent (the tools are shared, as Genkit registers a tool name once).
const currentAgent = new AsyncLocalStorage();
const agent = () => currentAgent.getStore() ?? '?';
const pair = z.object({ a: z.number().int(), b: z.number().int() });

const multiply = ai.defineTool({ name: 'multiply', description: 'Multiply two integers.', inputSchema: pair }, async ({ a, b }) => {
  record('multiply', { a, b }, 'ok', agent());
  return a * b;
});
const add = ai.defineTool({ name: 'add', description: 'Add two integers.', inputSchema: pair }, async ({ a, b }) => {
  record('add', { a, b }, 'ok', agent());
  return a + b;
});
const lookupWeather = ai.defineTool(
  { name: 'lookup_weather', description: 'Weather for a city.', inputSchema: z.object({ city: z.string() }) },
  async ({ city }) => {
    record('lookup_weather', { city }, 'ok', agent());
    return { Paris: 'sunny, 21C', London: 'rain, 14C' }[city] ?? 'unknown';
  },
);
const fetchUrl = ai.defineTool(
  { name: 'fetch_url', description: 'Fetch a URL (always fails: no network here).', inputSchema: z.object({ url: z.string() }) },
  async ({ url }) => {
    record('fetch_url', { url }, 'error', agent(), { error: 'Error: network unreachable' });
    throw new Error('network unreachable');
  },
);
// Asks a human first: the first time through it interrupts (Genkit's restartable interrupt); only a
// restart with `resumed.approved` deletes anything.
const deleteFile = ai.defineTool(
  { name: 'delete_file', description: 'Delete a file (needs a human approval).', inputSchema: z.object({ path: z.string() }) },
  async ({ path }, { interrupt, resumed }) => {
    if (!resumed?.approved) interrupt({ message: `Delete ${path}?` });
    record('delete_file', { path }, 'ok', agent());
    return `deleted ${path}`;
  },
);
const research = ai.defineTool(
  { name: 'research', description: 'Ask the research agent.', inputSchema: z.object({ question: z.string() }) },
  async ({ question }) => {
    record('research', { question }, 'ok', agent(), { delegates_to: 'researcher' });
    const answer = await ask('researcher', { model: 'scripted/researcher', prompt: question, tools: ['lookup_weather'] });
    return answer.message.content.map((part) => part.text ?? '').join('');
  },
);

const flows = new Map();
/** The agent `name`: a flow of that name that runs `ai.generate` (or `generateStream`) with `options`. */
function agentFlow(name) {
  if (flows.has(name)) return flows.get(name);
  const flow = ai.defineFlow({ name }, async (options, { sendChunk }) => {
    if (options.stream) {
      const { stream, response } = ai.generateStream(options.request);
      for await (const chunk of stream) sendChunk(chunk.text);
      return (await response).toJSON();
    }
    return (await ai.generate(options.request)).toJSON();
  });
  flows.set(name, flow);
  return flow;
}

const ask = (name, request, stream = false) => currentAgent.run(name, () => agentFlow(name)({ stream, request: { maxTurns: 5, ...request } }));

// -- scenarios ------------------------------------------------------------------------------------------

const scenarios = [];
const scenario = (name, description, body, { delegation = {}, notes = '', refused = [] } = {}) =>
  scenarios.push({ name, description, body, delegation, notes, refused });

scenario('single_tool', 'calculator: multiply(10, 5), then text', async () => {
  model.script('calc-single', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]);
  await ask('calculator', { model: 'scripted/calc-single', prompt: 'What is 10 times 5?', tools: ['multiply'] });
});

scenario('no_tools', 'calculator answers without calling a tool', async () => {
  model.script('calc-none', [text('Hello! Ask me to multiply or add.')]);
  await ask('calculator', { model: 'scripted/calc-none', prompt: 'Hi', tools: ['multiply', 'add'] });
});

scenario('parallel_tools', 'two calls in one model turn: multiply(3, 4) and add(3, 4), then text', async () => {
  model.script('calc-parallel',
    [call('multiply', { a: 3, b: 4 }, 'call_mul_1'), call('add', { a: 3, b: 4 }, 'call_add_1')],
    [text('12 and 7')]);
  await ask('calculator', { model: 'scripted/calc-parallel', prompt: '3*4 and 3+4?', tools: ['multiply', 'add'] });
}, { notes: 'Genkit starts both tool requests of a turn together (Promise.all); seq is their real start order.' });

scenario('sequential_chain', 'two model turns: lookup_weather(Paris), then multiply(21, 2), then text', async () => {
  model.script('planner-chain',
    [call('lookup_weather', { city: 'Paris' }, 'call_weather_1')],
    [call('multiply', { a: 21, b: 2 }, 'call_mul_1')],
    [text('Paris is sunny; twice 21 is 42')]);
  await ask('planner', { model: 'scripted/planner-chain', prompt: 'Weather in Paris, and double the temperature', tools: ['lookup_weather', 'multiply'] });
});

scenario('repeated_tool', 'multiply(2, 3), then multiply(6, 7) in the next turn, then text', async () => {
  model.script('calc-repeat',
    [call('multiply', { a: 2, b: 3 }, 'call_mul_1')],
    [call('multiply', { a: 6, b: 7 }, 'call_mul_2')],
    [text('6, then 42')]);
  await ask('calculator', { model: 'scripted/calc-repeat', prompt: '2*3, then 6*7', tools: ['multiply'] });
});

scenario('tool_error', 'fetch_url throws; Genkit fails the generate call, and the flow with it', async () => {
  model.script('fetcher-error', [call('fetch_url', { url: 'https://example.invalid/' }, 'call_fetch_1')],
    [text('not reached: the error ends the run')]);
  await ask('fetcher', { model: 'scripted/fetcher-error', prompt: 'Fetch https://example.invalid/', tools: ['fetch_url'] });
}, { notes: 'Genkit does not send a tool error back to the model: the exception ends generate and the flow (run_outcome error).' });

scenario('unknown_tool', 'the model asks for format_disk (no such tool): Genkit fails the generate call before any tool runs', async () => {
  model.script('calc-unknown', [call('format_disk', { drive: 'C:' }, 'call_unknown_1')], [text('not reached')]);
  await ask('calculator', { model: 'scripted/calc-unknown', prompt: 'Format the disk', tools: ['multiply'] });
}, {
  refused: [{ name: 'format_disk', args: { drive: 'C:' }, agent: 'calculator', reason: 'no tool of that name (GenkitError NOT_FOUND: Tool format_disk not found)', kind: 'unknown_tool', callId: 'call_unknown_1', after: 0 }],
  notes: 'The run ends with the NOT_FOUND error (run_outcome error); no span of a tool is made.',
});

scenario('invalid_arguments', 'multiply with a="ten" fails the tool\'s input schema (the body never runs); Genkit fails the run', async () => {
  model.script('calc-invalid', [call('multiply', { a: 'ten', b: 5 }, 'call_mul_bad')], [text('not reached')]);
  await ask('calculator', { model: 'scripted/calc-invalid', prompt: 'ten times 5', tools: ['multiply'] });
}, {
  refused: [{ name: 'multiply', args: { a: 'ten', b: 5 }, agent: 'calculator', reason: 'input fails the tool schema (ValidationError INVALID_ARGUMENT)', kind: 'invalid_arguments', callId: 'call_mul_bad', after: 0 }],
  notes: 'The input is validated before the tool action starts: no span of the tool; the generate span fails with INVALID_ARGUMENT and so does the run.',
});

scenario('limit', 'maxTurns 1: multiply(2, 3) runs; the next turn asks multiply(6, 7), refused (Exceeded maximum tool call iterations)', async () => {
  model.script('calc-limit',
    [call('multiply', { a: 2, b: 3 }, 'call_mul_1')],
    [call('multiply', { a: 6, b: 7 }, 'call_mul_2')],
    [text('not reached')]);
  await ask('calculator', { model: 'scripted/calc-limit', prompt: '2*3, then 6*7', tools: ['multiply'], maxTurns: 1 });
}, {
  refused: [{ name: 'multiply', args: { a: 6, b: 7 }, agent: 'calculator', reason: 'maxTurns 1 reached (GenerationResponseError ABORTED: Exceeded maximum tool call iterations (1))', kind: 'limit', callId: 'call_mul_2', after: 1 }],
  notes: 'The limit is checked after the model answers and before its tool requests run: the run ends in error.',
});

async function approvalRun(approved) {
  const modelName = approved ? 'janitor-approve' : 'janitor-deny';
  model.script(modelName, [call('delete_file', { path: '/srv/scratch.txt' }, 'call_delete_1')],
    [text(approved ? 'Deleted.' : 'I was not allowed to delete it.')]);
  const request = { model: `scripted/${modelName}`, prompt: 'Delete /srv/scratch.txt', tools: ['delete_file'] };
  const first = await ask('janitor', request);
  const interrupts = first.message.content.filter((part) => part.toolRequest && part.metadata?.interrupt);
  if (interrupts.length !== 1) throw new Error(`expected one interrupt, got ${interrupts.length}`);
  const resume = approved
    ? { restart: [deleteFile.restart(interrupts[0], { approved: true })] }
    : { respond: [deleteFile.respond(interrupts[0], 'operator rejected: scratch file is still in use')] };
  await ask('janitor', { model: request.model, tools: request.tools, messages: [...first.request.messages, first.message], resume });
}

scenario('approval_denied', 'delete_file interrupts for approval; run 1 ends interrupted, run 2 resumes with a denial (respond); the deletion never runs',
  () => approvalRun(false), {
    refused: [{ name: 'delete_file', args: { path: '/srv/scratch.txt' }, agent: 'janitor', reason: 'approval denied by the operator (resume.respond with the rejection)', kind: 'approval_denied', callId: 'call_delete_1', after: 0 }],
    notes: 'Two flow runs, so two traces. The tool body runs in run 1 up to its interrupt() (which throws ToolInterruptError); the deletion itself never happens.',
  });

scenario('approval_approved', 'delete_file interrupts for approval; run 2 restarts it with resumed.approved and it deletes',
  () => approvalRun(true), {
    notes: 'Two flow runs, so two traces: run 1 stops at the interrupt, run 2 restarts the tool request (same ref) and the body deletes.',
  });

scenario('multi_turn', 'two user turns on one message history (two flow runs): multiply(10, 5), then add(50, 1)', async () => {
  model.script('calc-multi',
    [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')],
    [call('add', { a: 50, b: 1 }, 'call_add_1')], [text('51')]);
  const first = await ask('calculator', { model: 'scripted/calc-multi', prompt: 'What is 10 times 5?', tools: ['multiply', 'add'] });
  truth.forEach((entry) => { entry.run = 1; });
  await ask('calculator', {
    model: 'scripted/calc-multi', tools: ['multiply', 'add'],
    messages: [...first.request.messages, first.message, { role: 'user', content: [{ text: 'And plus 1?' }] }],
  });
  truth.filter((entry) => entry.run === undefined).forEach((entry) => { entry.run = 2; });
}, { notes: 'Each flow run is its own trace; the second one carries turn 1 in its messages.' });

scenario('delegation_agent_as_tool', 'flow "orchestrator" calls tool research, whose body runs flow "researcher", which calls lookup_weather', async () => {
  model.script('orchestrator', [call('research', { question: 'Weather in London?' }, 'call_research_1')], [text('It rains in London.')]);
  model.script('researcher', [call('lookup_weather', { city: 'London' }, 'call_weather_sub_1')], [text('London: rain, 14C')]);
  await ask('orchestrator', { model: 'scripted/orchestrator', prompt: 'What is the weather in London?', tools: ['research'] });
}, {
  delegation: { parent: 'orchestrator', child: 'researcher', delegating_tool: 'research', delegating_call_id: 'call_research_1', child_call_ids: ['call_weather_sub_1'], mechanism: 'a flow called inside a tool body' },
  notes: 'The researcher flow is called inside the research tool: its flow span is a child of the tool span.',
});

scenario('single_tool_stream', 'calculator with generateStream: multiply(10, 5), then text, streamed', async () => {
  model.script('calc-stream', [call('multiply', { a: 10, b: 5 }, 'call_mul_1')], [text('50')]);
  await ask('calculator', { model: 'scripted/calc-stream', prompt: 'What is 10 times 5?', tools: ['multiply'] }, true);
}, { notes: 'The model is asked to stream (SSE chunks from the scripted server).' });

// -- running and writing ------------------------------------------------------------------------------

const STATUS = ['UNSET', 'OK', 'ERROR'];

function spansOf(document) {
  return document.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

function checkHexIds(spans) {
  for (const span of spans) {
    if (!/^[0-9a-f]{32}$/.test(span.traceId) || !/^[0-9a-f]{16}$/.test(span.spanId)
      || (span.parentSpanId && !/^[0-9a-f]{16}$/.test(span.parentSpanId))) {
      throw new Error(`span ${span.name} has ids that are not lowercase hex`);
    }
  }
}

const attribute = (span, key) => span.attributes.find((a) => a.key === key)?.value?.stringValue;
const byStart = (a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : BigInt(a.startTimeUnixNano) > BigInt(b.startTimeUnixNano) ? 1 : 0);

function spanIndex(spans) {
  return [...spans].sort(byStart).map((s) => ({
    span_id: s.spanId, parent_span_id: s.parentSpanId || null, trace_id: s.traceId, name: s.name, status: STATUS[s.status?.code ?? 0],
  }));
}

// A tool's span: `genkit:metadata:subtype` tool, named after the tool. No attribute carries the
// request's ref, so the n-th truth entry of a tool gets the n-th tool span of that name in start
// order; a span that ended in an interrupt (`genkit:metadata:interrupt`) carried out nothing, so it
// is only ever the span of a refused call.
function executionSpans(spans, executions) {
  const tool = spans.filter((s) => attribute(s, 'genkit:metadata:subtype') === 'tool').sort(byStart);
  const used = new Set();
  return executions.map((entry) => {
    const span = tool.find((s) => !used.has(s.spanId) && s.name === entry.name
      && (entry.outcome === 'refused' || attribute(s, 'genkit:metadata:interrupt') === undefined));
    if (!span) return null;
    used.add(span.spanId);
    return { span_id: span.spanId, span_name: span.name, status: STATUS[span.status?.code ?? 0], matched_by: 'genkit:name, in start order' };
  });
}

const write = (path, document) => writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`, 'utf-8');

mkdirSync(OUT, { recursive: true });
for (const { name, description, body, delegation, notes, refused } of scenarios) {
  model.reset();
  receiver.clear();
  truth = [];
  let runOutcome = 'ok';
  let runError = null;
  try {
    await body();
  } catch (error) {
    runOutcome = 'error';
    runError = `${error.name}: ${error.message.split("\n")[0]}`;
  }
  await flushTracing();
  refused.forEach(addRefused);
  const document = receiver.document();
  const spans = spansOf(document);
  checkHexIds(spans);
  if (!spans.length) throw new Error(`${name}: no span reached the receiver`);
  const left = model.leftOver().filter(() => runOutcome === 'ok');
  if (left.length) throw new Error(`${name}: scripted answers never asked for: ${left.join(', ')}`);
  const matched = executionSpans(spans, truth);
  const executions = truth.map((entry, index) => ({
    ...entry, [entry.outcome === 'refused' ? 'tool_span_despite_refusal' : 'execution_span']: matched[index],
  }));
  write(join(OUT, `${name}.json`), document);
  write(join(OUT, `${name}.truth.json`), {
    framework: FRAMEWORK, scenario: name, description, run_outcome: runOutcome, run_error: runError,
    tool_executions: executions, delegation, notes, span_index: spanIndex(spans),
  });
  console.log(`saved ${FRAMEWORK}/${name}: ${spans.length} spans, ${executions.length} tool executions, run ${runOutcome}${runError ? ` (${runError})` : ''}`);
}
await processor.shutdown();
await Promise.all([receiver.close(), model.close()]);
process.exit(0);
