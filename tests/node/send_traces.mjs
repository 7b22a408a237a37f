// Replays OTLP/JSON trace files through the OpenTelemetry JS SDK and one of its OTLP
// exporters, so that otel-reliability's receiver is tested against a real non-Python client.
//
//   node send_traces.mjs {grpc|proto|http}[+gzip] URL FILE...
//
// grpc  -> @opentelemetry/exporter-trace-otlp-grpc   (URL like http://127.0.0.1:4317)
// proto -> @opentelemetry/exporter-trace-otlp-proto  (URL like http://127.0.0.1:4318/v1/traces)
// http  -> @opentelemetry/exporter-trace-otlp-http   (OTLP/JSON, same URL as proto)
// +gzip -> the exporter compresses its requests (compression: 'gzip')
//
// Every span is started and ended through a BasicTracerProvider with the file's ids (an
// IdGenerator hands them out), times, attributes, events and status; a BatchSpanProcessor
// feeds the exporter (its queue holds the whole corpus: the replay loop never yields, and the
// default 2048 spans would drop the rest). Prints {"replayed", "exported", "failed"}; exits 1 unless every span
// was exported.

import { readFileSync } from 'node:fs';
import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';

const [spec, url, ...files] = process.argv.slice(2);
const [kind, compression] = (spec ?? '').split('+');
const EXPORTERS = { grpc: GrpcExporter, proto: ProtoExporter, http: JsonExporter };
if (!EXPORTERS[kind] || !['gzip', undefined].includes(compression) || !url || files.length === 0) {
  console.error('usage: node send_traces.mjs {grpc|proto|http}[+gzip] URL FILE...');
  process.exit(2);
}

// concurrencyLimit: the replay loop never yields, so every batch is handed over at once; the
// default (30 in flight) would refuse the rest ("Concurrent export limit reached")
const inner = new EXPORTERS[kind]({ url, timeoutMillis: 30000, compression: compression ?? 'none', concurrencyLimit: 1 << 16 });
const counts = { replayed: 0, exported: 0, failed: 0 };
const exporter = {
  export(spans, done) {
    inner.export(spans, (result) => {
      if (result.code === 0) counts.exported += spans.length;
      else {
        counts.failed += spans.length;
        console.error(`export failed: ${result.error}`);
      }
      done(result);
    });
  },
  shutdown: () => inner.shutdown(),
  forceFlush: () => inner.forceFlush(),
};

const next = { traceId: '', spanId: '' };
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'otel-reliability-node-replay' }),
  idGenerator: { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId },
  spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 128, maxQueueSize: 1 << 20, scheduledDelayMillis: 50 })],
});

function anyValue(value) {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('boolValue' in value) return Boolean(value.boolValue);
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

function attributes(items) {
  const out = {};
  for (const kv of items ?? []) {
    const value = anyValue(kv.value ?? {});
    if (value !== undefined) out[kv.key] = value;
  }
  return out;
}

function hrTime(nanos) {
  const n = BigInt(nanos);
  return [Number(n / 1000000000n), Number(n % 1000000000n)];
}

for (const file of files) {
  const data = JSON.parse(readFileSync(file, 'utf8'));
  for (const resourceSpans of data.resourceSpans ?? []) {
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scope = scopeSpans.scope ?? {};
      const tracer = provider.getTracer(scope.name || 'replay', scope.version || undefined);
      for (const s of scopeSpans.spans ?? []) {
        next.traceId = s.traceId;
        next.spanId = s.spanId;
        const context = s.parentSpanId
          ? trace.setSpanContext(ROOT_CONTEXT, {
              traceId: s.traceId, spanId: s.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true,
            })
          : ROOT_CONTEXT;
        const span = tracer.startSpan(
          s.name,
          { kind: Math.max(Number(s.kind ?? 1), 1) - 1, attributes: attributes(s.attributes), startTime: hrTime(s.startTimeUnixNano) },
          context,
        );
        for (const event of s.events ?? []) {
          span.addEvent(event.name ?? '', attributes(event.attributes), event.timeUnixNano ? hrTime(event.timeUnixNano) : undefined);
        }
        const code = Number(s.status?.code ?? 0);
        if (code === SpanStatusCode.ERROR) span.setStatus({ code, message: s.status.message ?? '' });
        else if (code === SpanStatusCode.OK) span.setStatus({ code });
        span.end(hrTime(s.endTimeUnixNano));
        counts.replayed += 1;
      }
    }
  }
}

await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify(counts));
process.exit(counts.exported === counts.replayed && counts.failed === 0 ? 0 : 1);
