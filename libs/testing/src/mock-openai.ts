import { createServer, type IncomingMessage, type Server } from 'node:http';
import { solidPng } from '@hangar/platform';
import { writeEmbeddings, type MockEmbeddingReply, type RecordedEmbeddingRequest } from './mock-embeddings.js';

/** What the mock answers to one chat-completions call. */
export type MockReply =
  | {
      text: string;
      usage?: { prompt: number; completion: number; cached?: number; reasoning?: number };
      /** Chat completions only: a pause between streamed chunks (one chunk a word); none by default. */
      chunkDelayMs?: number;
    }
  | { toolCall: { name: string; args: Record<string, unknown> }; usage?: { prompt: number; completion: number } }
  | { status: number; body?: string }
  | { delayMs: number; then: MockReply };

/** What the mock's image model answers: a failure, or images with token usage (none by default). */
export type MockImageReply = { status: number } | { outputTokensPerImage: number } | { raw: string };

export interface RecordedImageRequest {
  model: string;
  prompt: string;
  n: number | undefined;
  size: string | undefined;
  raw: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface RecordedRequest {
  /** Which wire protocol the call used; an Anthropic call is recorded in the chat-completions shape. */
  protocol: 'openai-chat' | 'openai-responses' | 'anthropic-messages';
  path: string;
  headers: Record<string, string | string[] | undefined>;
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
  stream: boolean;
  /** The body as sent. */
  raw: Record<string, any>;
}

/** Anthropic's Messages request in the chat-completions shape, so one script serves both protocols. */
function fromAnthropic(body: Record<string, any>): Pick<RecordedRequest, 'model' | 'messages' | 'tools' | 'stream'> {
  const messages: RecordedRequest['messages'] = [];
  const system = Array.isArray(body.system) ? body.system.map((block: any) => block.text).join('\n') : body.system;
  if (system) messages.push({ role: 'system', content: system });
  for (const message of body.messages ?? []) {
    const blocks: any[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const result of blocks.filter((block) => block.type === 'tool_result')) {
      const content = Array.isArray(result.content) ? result.content.map((part: any) => part.text ?? '').join('') : result.content;
      messages.push({ role: 'tool', tool_call_id: result.tool_use_id, content });
    }
    const rest = blocks.filter((block) => block.type !== 'tool_result');
    if (rest.length) {
      const text = rest
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('');
      const toolUses = rest.filter((block) => block.type === 'tool_use');
      messages.push({ role: message.role, content: text, ...(toolUses.length ? { tool_calls: toolUses } : {}) });
    }
  }
  const tools = body.tools?.map((entry: any) => ({ function: { name: entry.name } }));
  return { model: body.model, messages, tools, stream: !!body.stream };
}

/** OpenAI's Responses request in the chat-completions shape. */
function fromResponses(body: Record<string, any>): Pick<RecordedRequest, 'model' | 'messages' | 'tools' | 'stream'> {
  const messages: RecordedRequest['messages'] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  const textOf = (content: unknown) =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: any) => part.text ?? '').join('') : '';
  for (const item of body.input ?? []) {
    if (item.type === 'function_call_output') messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
    else if (item.type === 'function_call') messages.push({ role: 'assistant', content: '', tool_calls: [item] });
    else if (item.role) messages.push({ role: item.role === 'developer' ? 'system' : item.role, content: textOf(item.content) });
  }
  const tools = body.tools?.map((entry: any) => ({ function: { name: entry.name } }));
  return { model: body.model, messages, tools, stream: !!body.stream };
}

/**
 * A real HTTP server speaking the OpenAI chat-completions protocol (any path ending in
 * `/chat/completions`, so Azure's `/openai/v1/...` too), its embeddings (`/embeddings`) and
 * Anthropic's Messages protocol (`/messages`),
 * both streaming with usage, for tests and benchmarks. Replies are scripted per model; an
 * unscripted model echoes the last user text.
 */
export async function startMockOpenAI() {
  const requests: RecordedRequest[] = [];
  const embeddingRequests: RecordedEmbeddingRequest[] = [];
  const embeddingScripts = new Map<string, MockEmbeddingReply>();
  const imageRequests: RecordedImageRequest[] = [];
  const imageScripts = new Map<string, MockImageReply>();
  const scripts = new Map<string, MockReply[] | ((request: RecordedRequest) => MockReply)>();
  const openResponses = new Set<import('node:http').ServerResponse>();
  let peakOpen = 0;

  const nextReply = (request: RecordedRequest): MockReply => {
    const script = scripts.get(request.model);
    if (typeof script === 'function') return script(request);
    if (script && script.length) return script.length > 1 ? script.shift()! : script[0];
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    return {
      text: `mock: ${typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content)}`,
      usage: { prompt: 10, completion: 5 },
    };
  };

  const readBody = (request: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => resolve(body));
      request.on('error', reject);
    });

  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://mock').pathname;
    if (request.method === 'POST' && path.endsWith('/images/generations')) {
      const body = JSON.parse(await readBody(request)) as Record<string, any>;
      imageRequests.push({ model: body.model, prompt: body.prompt, n: body.n, size: body.size, raw: body, headers: request.headers });
      const reply = imageScripts.get(body.model);
      if (reply && 'status' in reply) {
        response.writeHead(reply.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'scripted image failure', type: 'server_error' } }));
        return;
      }
      if (reply && 'raw' in reply) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(reply.raw);
        return;
      }
      const count = Number(body.n ?? 1);
      const image = solidPng(4, 4, [200, 40, 40]).toString('base64');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          created: Math.floor(Date.now() / 1000),
          data: Array.from({ length: count }, () => ({ b64_json: image })),
          ...(reply?.outputTokensPerImage !== undefined && {
            usage: {
              input_tokens: 10,
              output_tokens: reply.outputTokensPerImage * count,
              total_tokens: 10 + reply.outputTokensPerImage * count,
            },
          }),
        }),
      );
      return;
    }
    if (request.method === 'POST' && path.endsWith('/embeddings')) {
      const body = JSON.parse(await readBody(request)) as Record<string, any>;
      const input = Array.isArray(body.input) ? body.input : [body.input];
      embeddingRequests.push({ model: body.model, input, dimensions: body.dimensions, headers: request.headers });
      writeEmbeddings(response, body, embeddingScripts.get(body.model));
      return;
    }
    const protocol = path.endsWith('/chat/completions')
      ? 'openai-chat'
      : path.endsWith('/responses')
        ? 'openai-responses'
        : path.endsWith('/messages')
          ? 'anthropic-messages'
          : undefined;
    if (request.method !== 'POST' || !protocol) {
      response.writeHead(404).end();
      return;
    }
    openResponses.add(response);
    peakOpen = Math.max(peakOpen, openResponses.size);
    response.once('close', () => openResponses.delete(response));
    const raw = JSON.parse(await readBody(request)) as Record<string, any>;
    const parsed: RecordedRequest = {
      protocol,
      path: request.url ?? path,
      headers: request.headers,
      raw,
      ...(protocol === 'anthropic-messages'
        ? fromAnthropic(raw)
        : protocol === 'openai-responses'
          ? fromResponses(raw)
          : (raw as Pick<RecordedRequest, 'model' | 'messages' | 'tools' | 'stream'>)),
    };
    requests.push(parsed);
    let reply = nextReply(parsed);
    while ('delayMs' in reply) {
      await new Promise((resolve) => setTimeout(resolve, (reply as { delayMs: number }).delayMs));
      if (response.destroyed) return;
      reply = reply.then;
    }
    if ('status' in reply) {
      const error =
        protocol === 'anthropic-messages'
          ? { type: 'error', error: { type: 'api_error', message: `scripted ${reply.status}` } }
          : { error: { message: `scripted ${reply.status}`, type: 'server_error' } };
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body ?? JSON.stringify(error));
      return;
    }
    if (protocol === 'anthropic-messages') {
      writeAnthropicStream(response, parsed.model, reply, requests.length);
      return;
    }
    if (protocol === 'openai-responses') {
      writeResponsesStream(response, parsed.model, reply, requests.length);
      return;
    }
    const id = `chatcmpl-${requests.length}`;
    // A call that does not ask for a stream (the AI SDK's generateText) gets one JSON completion.
    if (parsed.stream !== true && 'text' in reply) {
      const usage = reply.usage ?? { prompt: 10, completion: 5 };
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 0,
          model: parsed.model,
          choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' }],
          usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
        }),
      );
      return;
    }
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: parsed.model, choices, ...extra })}\n\n`;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if ('toolCall' in reply) {
      response.write(
        chunk([
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                {
                  index: 0,
                  id: `call_${requests.length}`,
                  type: 'function',
                  function: { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.args) },
                },
              ],
            },
            finish_reason: null,
          },
        ]),
      );
      response.write(chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
    } else {
      for (const [index, piece] of (reply.text.match(/\S+\s*/g) ?? []).entries()) {
        if (index > 0 && reply.chunkDelayMs) {
          await new Promise((resolve) => setTimeout(resolve, reply.chunkDelayMs));
          if (response.destroyed) return;
        }
        response.write(chunk([{ index: 0, delta: { role: 'assistant', content: piece }, finish_reason: null }]));
      }
      response.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
    }
    const usage = reply.usage ?? { prompt: 10, completion: 5 };
    response.write(
      chunk([], {
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          prompt_tokens_details: { cached_tokens: 'cached' in usage ? (usage.cached ?? 0) : 0 },
          completion_tokens_details: { reasoning_tokens: 'reasoning' in usage ? (usage.reasoning ?? 0) : 0 },
        },
      }),
    );
    response.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Replies for a model, in order (the last one repeats), or a function of the request. */
    script(model: string, replies: MockReply[] | ((request: RecordedRequest) => MockReply)) {
      scripts.set(model, Array.isArray(replies) ? [...replies] : replies);
    },
    callsTo: (model: string) => requests.filter((request) => request.model === model).length,
    /** Calls of `/embeddings`, in order. */
    embeddingRequests,
    /** How an embedding model answers from now on: a failure, or vectors of another size (undefined: the default). */
    scriptEmbeddings(model: string, reply: MockEmbeddingReply | undefined) {
      if (reply) embeddingScripts.set(model, reply);
      else embeddingScripts.delete(model);
    },
    /** Calls of `/images/generations`, in order; each answered with `n` small PNGs. */
    imageRequests,
    /** How an image model answers from now on: a failure, or usage with this many output tokens per image. */
    scriptImages(model: string, reply: MockImageReply) {
      imageScripts.set(model, reply);
    },
    /** The most calls that were open at once since the last reset. */
    peakConcurrency: () => peakOpen,
    resetPeakConcurrency: () => void (peakOpen = openResponses.size),
    async close() {
      for (const response of openResponses) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type MockOpenAI = Awaited<ReturnType<typeof startMockOpenAI>>;

/** One reply as Anthropic's Messages event stream (message_start … message_stop). */
function writeAnthropicStream(
  response: import('node:http').ServerResponse,
  model: string,
  reply: Extract<MockReply, { text: string } | { toolCall: unknown }>,
  callNumber: number,
) {
  const usage = { prompt: 10, completion: 5, cached: 0, ...reply.usage };
  const send = (type: string, data: Record<string, unknown>) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  send('message_start', {
    message: {
      id: `msg_${callNumber}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.prompt, cache_read_input_tokens: usage.cached, cache_creation_input_tokens: 0, output_tokens: 1 },
    },
  });
  if ('toolCall' in reply) {
    send('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: `toolu_${callNumber}`, name: reply.toolCall.name, input: {} },
    });
    send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.toolCall.args) } });
  } else {
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const piece of reply.text.match(/\S+\s*/g) ?? [])
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', {
    delta: { stop_reason: 'toolCall' in reply ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.completion },
  });
  send('message_stop', {});
  response.end();
}

/** One reply as OpenAI's Responses event stream (response.created … response.completed). */
function writeResponsesStream(
  response: import('node:http').ServerResponse,
  model: string,
  reply: Extract<MockReply, { text: string } | { toolCall: unknown }>,
  callNumber: number,
) {
  const usage = { prompt: 10, completion: 5, cached: 0, reasoning: 0, ...reply.usage };
  const send = (type: string, data: Record<string, unknown>) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  send('response.created', { response: { id: `resp_${callNumber}`, created_at: 0, model } });
  if ('toolCall' in reply) {
    const item = { type: 'function_call', id: `fc_${callNumber}`, call_id: `call_${callNumber}`, name: reply.toolCall.name };
    send('response.output_item.added', { output_index: 0, item: { ...item, arguments: '' } });
    send('response.output_item.done', {
      output_index: 0,
      item: { ...item, arguments: JSON.stringify(reply.toolCall.args), status: 'completed' },
    });
  } else {
    const item = { type: 'message', id: `msg_${callNumber}` };
    send('response.output_item.added', { output_index: 0, item });
    for (const piece of reply.text.match(/\S+\s*/g) ?? []) send('response.output_text.delta', { item_id: item.id, delta: piece });
    send('response.output_item.done', { output_index: 0, item });
  }
  send('response.completed', {
    response: {
      usage: {
        input_tokens: usage.prompt,
        input_tokens_details: { cached_tokens: usage.cached },
        output_tokens: usage.completion,
        output_tokens_details: { reasoning_tokens: usage.reasoning },
      },
    },
  });
  response.end();
}
