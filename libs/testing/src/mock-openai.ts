import { createServer, type IncomingMessage, type Server } from 'node:http';

/** What the mock answers to one chat-completions call. */
export type MockReply =
  | { text: string; usage?: { prompt: number; completion: number; cached?: number; reasoning?: number } }
  | { toolCall: { name: string; args: Record<string, unknown> }; usage?: { prompt: number; completion: number } }
  | { status: number; body?: string }
  | { delayMs: number; then: MockReply };

export interface RecordedRequest {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
  stream: boolean;
}

/**
 * A real HTTP server speaking the OpenAI chat-completions protocol (streaming, with usage), for
 * tests and benchmarks. Replies are scripted per model; an unscripted model echoes the last user text.
 */
export async function startMockOpenAI() {
  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, MockReply[] | ((request: RecordedRequest) => MockReply)>();
  const openResponses = new Set<import('node:http').ServerResponse>();

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
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    openResponses.add(response);
    response.once('close', () => openResponses.delete(response));
    const parsed = JSON.parse(await readBody(request)) as RecordedRequest;
    requests.push(parsed);
    let reply = nextReply(parsed);
    while ('delayMs' in reply) {
      await new Promise((resolve) => setTimeout(resolve, (reply as { delayMs: number }).delayMs));
      if (response.destroyed) return;
      reply = reply.then;
    }
    if ('status' in reply) {
      response
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}`, type: 'server_error' } }));
      return;
    }
    const id = `chatcmpl-${requests.length}`;
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
      for (const piece of reply.text.match(/\S+\s*/g) ?? [])
        response.write(chunk([{ index: 0, delta: { role: 'assistant', content: piece }, finish_reason: null }]));
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
    async close() {
      for (const response of openResponses) response.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type MockOpenAI = Awaited<ReturnType<typeof startMockOpenAI>>;
