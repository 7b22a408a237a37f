// Captures the Vercel AI SDK 6's own OpenTelemetry spans (`experimental_telemetry`, the `ai.*`
// span convention with `ai.toolCall`) for the tool-call scenarios in scenarios.mjs, offline:
// every model is the SDK's MockLanguageModelV3 answering from a script, so the tool-call ids are
// chosen there and are ground truth too.
//
// Writes tests/fixtures/corpus/vercel_ai/<scenario>.json (OTLP/JSON with hex ids, as the OTLP
// specification encodes them: @opentelemetry/otlp-transformer's JSON serialiser) and
// <scenario>.truth.json.
//
// Run:  cd tests/capture/vercel_ai && npm ci && node capture.mjs

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs, streamText, tool, ToolLoopAgent } from 'ai';
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';
import { z } from 'zod';

import { capture } from './scenarios.mjs';

const FRAMEWORK = 'vercel_ai';
const HERE = dirname(fileURLToPath(import.meta.url));

// The SDK's spans go to memory; async context carries the parent span across awaits.
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'corpus-vercel-ai' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

await capture({
  framework: FRAMEWORK,
  out: join(HERE, '..', '..', 'fixtures', 'corpus', FRAMEWORK),
  sdk: { generateText, streamText, tool, ToolLoopAgent, stepCountIs, MockLanguageModel: MockLanguageModelV3, convertArrayToReadableStream, z },
  convention: {
    // functionId names the agent; metadata is copied to ai.telemetry.metadata.*.
    telemetry: (agent, extra = {}) => ({
      experimental_telemetry: agent ? { isEnabled: true, functionId: agent, metadata: { agent }, ...extra } : { isEnabled: true, ...extra },
    }),
    approval: {},
    approvalOnTool: true,
    toolCallId: (span) => (span.name === 'ai.toolCall' ? span.attributes['ai.toolCall.id'] : undefined),
    callIdAttribute: 'ai.toolCall.id',
  },
  exporter,
  provider,
  serialize: (spans) => JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans))),
});
await provider.shutdown();
