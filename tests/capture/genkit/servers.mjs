// The two local servers the Genkit capture talks to, both on 127.0.0.1 and both Node's own http:
//
// * `scriptedOpenAI()`: an OpenAI-compatible chat-completions endpoint that answers every request
//   for a model with that model's next scripted answer (plain JSON, or SSE chunks when the request
//   asks to stream), so the tool-call ids are chosen here and are ground truth too. Every call it
//   hands out is kept in `issued`, for the tool bodies to find the id of the call they carry out
//   (Genkit hands a tool its input, never the request's `ref`).
// * `otlpReceiver()`: `POST /v1/traces` as an OTLP/HTTP collector takes it, JSON only
//   (@opentelemetry/exporter-trace-otlp-http's encoding: hex ids, as the OTLP specification
//   encodes them); it keeps every request it receives.

import { createServer } from 'node:http';

function listen(server) {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf-8')));
    request.on('error', reject);
  });
}

export const call = (name, args, id) => ({ type: 'call', name, args, id });
export const text = (value) => ({ type: 'text', text: value });

const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

function toolCalls(turn) {
  return turn.filter((part) => part.type === 'call').map((part, index) => ({
    index, id: part.id, type: 'function',
    function: { name: part.name, arguments: typeof part.args === 'string' ? part.args : JSON.stringify(part.args) },
  }));
}

function completion(model, turn, serial) {
  const calls = toolCalls(turn).map(({ index, ...rest }) => rest);
  const content = turn.filter((part) => part.type === 'text').map((part) => part.text).join('') || null;
  return {
    id: `chatcmpl-scripted-${serial}`, object: 'chat.completion', created: 1796000000, model,
    choices: [{
      index: 0, message: { role: 'assistant', content, ...(calls.length ? { tool_calls: calls } : {}) },
      finish_reason: calls.length ? 'tool_calls' : 'stop', logprobs: null,
    }],
    usage: USAGE,
  };
}

function chunks(model, turn, serial) {
  const base = { id: `chatcmpl-scripted-${serial}`, object: 'chat.completion.chunk', created: 1796000000, model };
  const out = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
  for (const part of turn.filter((p) => p.type === 'text')) {
    out.push({ ...base, choices: [{ index: 0, delta: { content: part.text }, finish_reason: null }] });
  }
  for (const toolCall of toolCalls(turn)) {
    out.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [toolCall] }, finish_reason: null }] });
  }
  const finish = toolCalls(turn).length ? 'tool_calls' : 'stop';
  out.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage: USAGE });
  return out;
}

/** An OpenAI-compatible server answering each model's requests from `script(model, turns)`. */
export async function scriptedOpenAI() {
  const scripts = new Map();
  const issued = [];
  let serial = 0;
  const server = createServer(async (request, response) => {
    const body = JSON.parse(await readBody(request) || '{}');
    const left = scripts.get(body.model);
    if (!request.url.endsWith('/chat/completions') || !left?.length) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `no scripted answer left for ${body.model} at ${request.url}` } }));
      return;
    }
    const turn = left.shift();
    serial += 1;
    for (const part of turn.filter((p) => p.type === 'call')) issued.push({ ...part, model: body.model, claimed: false });
    if (body.stream) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of chunks(body.model, turn, serial)) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      response.end('data: [DONE]\n\n');
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completion(body.model, turn, serial)));
    }
  });
  const url = await listen(server);
  return {
    baseURL: `${url}/v1`,
    script(model, ...turns) {
      scripts.set(model, turns);
    },
    /** The id of the first call handed out and not yet claimed with this tool name and arguments. */
    claim(name, args) {
      const found = issued.find((c) => !c.claimed && c.name === name && JSON.stringify(c.args) === JSON.stringify(args));
      if (!found) return null;
      found.claimed = true;
      return found.id;
    },
    reset() {
      scripts.clear();
      issued.length = 0;
    },
    leftOver() {
      return [...scripts.entries()].filter(([, turns]) => turns.length).map(([model, turns]) => `${model}: ${turns.length}`);
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** An OTLP/HTTP trace receiver (JSON) keeping every export request it is sent. */
export async function otlpReceiver() {
  const requests = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method !== 'POST' || !request.url.endsWith('/v1/traces')
      || !(request.headers['content-type'] ?? '').includes('json')) {
      response.writeHead(415);
      response.end();
      return;
    }
    requests.push(JSON.parse(body));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
  const url = await listen(server);
  return {
    endpoint: `${url}/v1/traces`,
    /** Every span received since `clear`, as one OTLP/JSON export request. */
    document: () => ({ resourceSpans: requests.flatMap((r) => r.resourceSpans ?? []) }),
    clear: () => { requests.length = 0; },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
