import { createOpenAI } from '@ai-sdk/openai';
import { allInOneModules } from '@hangar/all-in-one';
import {
  createJwtIssuer,
  eventually,
  FIXTURE_RUN_AUTHORIZATION,
  startHangar,
  startMockOpenAI,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { DefaultChatTransport, generateText, readUIMessageStream, streamText, type UIMessage } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The ecosystem's clients, unmodified, against a live gateway (API.md "OpenAI-compatible
 * surface"): the official `openai` package and the Vercel AI SDK, streaming included.
 */

let mock: MockOpenAI;
let hangar: HangarUnderTest;
let openai: OpenAI;
let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;

const runRecord = async (runId: string) => (await hangar.request('GET', `/api/runs/${runId}`)).body;
const lastUpstreamMessages = (model: string) => mock.requests.filter((request) => request.model === model).at(-1)!.messages;

beforeAll(async () => {
  mock = await startMockOpenAI();
  issuer = await createJwtIssuer();
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Hangar: { Api: { Jwt: { Enabled: true, Jwks: issuer.jwks }, RunAuthorizationModule: FIXTURE_RUN_AUTHORIZATION } },
      ContentGuard: { Pattern: { DeniedTerms: ['secret-sauce'] } },
    },
  });
  for (const [name, model] of [
    ['assistant', 'plain'],
    ['counted', 'counted'],
    ['limited', 'plain'],
    ['clocked', 'clocked'],
    ['long', 'long'],
    ['slow', 'slow'],
  ]) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name, instructions: 'Be brief.', model: { provider: 'mock', model }, ...(name === 'clocked' && { tools: ['clock'] }) },
    });
    expect(created.status).toBe(201);
  }
  mock.script('clocked', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'It is noon.' }
      : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } },
  );
  mock.script('long', () => ({ text: 'x'.repeat(10_000) }));
  mock.script('slow', () => ({ text: 'word '.repeat(60).trim(), chunkDelayMs: 40 }));
  mock.script('counted', () => ({ text: 'one two three four', usage: { prompt: 12, completion: 4, cached: 2 } }));
  openai = new OpenAI({ baseURL: `${hangar.url}/v1`, apiKey: TEST_TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('the openai package', () => {
  it('lists the agents the caller may run as models, and retrieves one', async () => {
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models.map((model) => model.id)).toEqual(expect.arrayContaining(['assistant', 'counted', 'limited']));
    expect(models[0]).toMatchObject({ object: 'model', owned_by: 'hangar', created: expect.any(Number) });
    expect(await openai.models.retrieve('counted')).toMatchObject({ id: 'counted', object: 'model' });
  });

  it('answers a chat completion as a recorded Compatibility run, with usage', async () => {
    const { data: completion, response } = await openai.chat.completions
      .create({ model: 'counted', messages: [{ role: 'user', content: 'count' }] })
      .withResponse();
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'counted',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'one two three four' } }],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 2 } },
    });
    const runId = response.headers.get('x-hangar-run-id')!;
    expect(completion.id).toBe(`chatcmpl-${runId}`);
    expect(await runRecord(runId)).toMatchObject({ kind: 'Compatibility', status: 'Completed', agentName: 'counted' });
    const input = (await hangar.request('GET', `/api/runs/${runId}/input`)).body.input;
    expect(input.messages).toEqual([{ role: 'user', content: 'count' }]);
  });

  it('streams chat completion chunks in OpenAI’s wire format, with usage last when asked', async () => {
    const stream = await openai.chat.completions.create({
      model: 'counted',
      messages: [
        { role: 'system', content: 'Count.' },
        { role: 'user', content: [{ type: 'text', text: 'count' }] },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('one two three four');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(lastUpstreamMessages('counted').at(-1)).toMatchObject({ role: 'user', content: 'count' });
  });

  it('creates a response, streams one, retrieves it, and continues from it with previous_response_id', async () => {
    const first = await openai.responses.create({ model: 'assistant', input: 'remember the word kiwi', metadata: { ticket: 'T-1' } });
    expect(first).toMatchObject({ object: 'response', status: 'completed', model: 'assistant', metadata: { ticket: 'T-1' }, store: true });
    expect(first.output_text).toBe('mock: remember the word kiwi');
    expect(await openai.responses.retrieve(first.id)).toMatchObject({ id: first.id, status: 'completed', output_text: first.output_text });

    const events = [];
    for await (const event of await openai.responses.create({
      model: 'assistant',
      input: 'what word?',
      previous_response_id: first.id,
      stream: true,
    }))
      events.push(event);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    expect(deltas.join('')).toBe('mock: what word?');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    // The model saw the first turn: the second response ran in the first one's session.
    expect(lastUpstreamMessages('plain').map((message) => message.content)).toEqual(
      expect.arrayContaining(['remember the word kiwi', 'what word?']),
    );
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.previous_response_id).toBe(first.id);
    expect(completed.response.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('branches when a previous response is not the latest turn of its session', async () => {
    const root = await openai.responses.create({ model: 'assistant', input: 'root turn' });
    await openai.responses.create({ model: 'assistant', input: 'branch A', previous_response_id: root.id });
    await openai.responses.create({ model: 'assistant', input: 'branch B', previous_response_id: root.id });
    const seen = lastUpstreamMessages('plain').map((message) => message.content);
    expect(seen).toContain('root turn');
    expect(seen).not.toContain('branch A');
  });

  it('keeps a store: false response nowhere: not retrievable, not continuable', async () => {
    const response = await openai.responses.create({ model: 'assistant', input: 'forget me', store: false });
    await expect(openai.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.create({ model: 'assistant', input: 'again', previous_response_id: response.id })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('creates, retrieves, updates and deletes a conversation, and a response continues it', async () => {
    const conversation = await openai.conversations.create({
      metadata: { topic: 'fruit' },
      items: [{ type: 'message', role: 'user', content: 'my favourite fruit is mango' }],
    });
    expect(conversation).toMatchObject({ object: 'conversation', metadata: { topic: 'fruit' } });
    expect(conversation.id).toMatch(/^conv_/);
    expect(await openai.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id, metadata: { topic: 'fruit' } });
    expect(await openai.conversations.update(conversation.id, { metadata: { topic: 'mango' } })).toMatchObject({
      metadata: { topic: 'mango' },
    });

    const reply = await openai.responses.create({ model: 'assistant', input: 'which fruit?', conversation: conversation.id });
    expect(reply.conversation).toEqual({ id: conversation.id });
    expect(lastUpstreamMessages('plain').map((message) => message.content)).toEqual(
      expect.arrayContaining(['my favourite fruit is mango', 'which fruit?']),
    );
    const items = [];
    for await (const item of openai.conversations.items.list(conversation.id, { order: 'asc' })) items.push(item);
    expect(items.map((item) => (item.type === 'message' ? [item.role, item.content[0]] : []))).toEqual([
      ['user', { type: 'input_text', text: 'my favourite fruit is mango' }],
      ['user', { type: 'input_text', text: 'which fruit?' }],
      ['assistant', { type: 'output_text', text: 'mock: which fruit?', annotations: [] }],
    ]);
    // The conversation is a Hangar session.
    expect((await hangar.request('GET', `/api/sessions/${conversation.id}`)).body.messageCount).toBe(3);

    expect(await openai.conversations.delete(conversation.id)).toMatchObject({ id: conversation.id, deleted: true });
    await expect(openai.conversations.retrieve(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('keeps instructions out of the conversation, and a store: false continuation out of the session', async () => {
    const conversation = await openai.conversations.create({});
    await openai.responses.create({ model: 'assistant', input: 'first', conversation: conversation.id, instructions: 'Answer in French.' });
    expect(lastUpstreamMessages('plain').find((message) => message.role === 'system')?.content).toContain('Answer in French.');
    const items = [];
    for await (const item of openai.conversations.items.list(conversation.id, { order: 'asc' })) items.push(item);
    expect(items.map((item) => (item.type === 'message' ? item.role : item.type))).toEqual(['user', 'assistant']);
    expect(JSON.stringify(items)).not.toContain('French');

    const stored = await openai.responses.create({ model: 'assistant', input: 'remember plum' });
    const sessionOf = async (responseId: string) => {
      const runId = (await hangar.request('GET', '/api/runs?take=50&agentName=assistant')).body.find(
        (run: { id: string }) => `resp_${run.id.replaceAll('-', '')}` === responseId,
      );
      return (await hangar.request('GET', `/api/sessions/${runId.sessionId}`)).body;
    };
    const before = (await sessionOf(stored.id)).messageCount;
    await openai.responses.create({ model: 'assistant', input: 'what fruit?', previous_response_id: stored.id, store: false });
    expect(lastUpstreamMessages('plain').map((message) => message.content)).toEqual(
      expect.arrayContaining(['remember plum', 'what fruit?']),
    );
    expect((await sessionOf(stored.id)).messageCount).toBe(before);
  });

  it('retrieves a long answer whole', async () => {
    const response = await openai.responses.create({ model: 'long', input: 'talk' });
    expect((await openai.responses.retrieve(response.id)).output_text).toHaveLength(10_000);
  });

  it('cancels the run of a client that leaves mid-stream', async () => {
    const abort = new AbortController();
    const { data: stream, response } = await openai.chat.completions
      .create({ model: 'slow', messages: [{ role: 'user', content: 'talk' }], stream: true }, { signal: abort.signal })
      .withResponse();
    const runId = response.headers.get('x-hangar-run-id')!;
    // The first chunk (the role) comes at once; this file's content guard holds the text back until the end.
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta.role).toBe('assistant');
      abort.abort();
      break;
    }
    await eventually(async () => ((await runRecord(runId)).status === 'Canceled' ? true : undefined), 'the run canceled');
  });

  it('names an unknown agent in a NotFoundError with code model_not_found', async () => {
    const refused = openai.chat.completions.create({ model: 'nobody-here', messages: [{ role: 'user', content: 'hi' }] });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(refused).rejects.toMatchObject({ code: 'model_not_found', message: expect.stringContaining('nobody-here') });
    await expect(openai.responses.create({ model: 'nobody-here', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses a run over its quota with a RateLimitError', async () => {
    await hangar.request('PUT', '/api/quotas/limited-once', { body: { metric: 'Runs', period: 'Day', limit: 1, agentName: 'limited' } });
    await openai.chat.completions.create({ model: 'limited', messages: [{ role: 'user', content: 'first' }] });
    // Usage is counted from the run's events, on the split shape once governance has read them from Kafka.
    const usedOnce = async () =>
      ((await hangar.request('GET', '/api/quotas')).body as Array<{ name: string; used: number }>).find(
        (rule) => rule.name === 'limited-once',
      )?.used === 1;
    await eventually(async () => ((await usedOnce()) ? true : undefined), 'the first run counted');
    const refused = openai.chat.completions.create({ model: 'limited', messages: [{ role: 'user', content: 'second' }] });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await expect(refused).rejects.toMatchObject({ code: 'quota_exceeded' });
    // The official clients would retry a 429 twice: told not to, a used-up quota is one refusal.
    const raw = await fetch(`${hangar.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'limited', messages: [{ role: 'user', content: 'third' }] }),
    });
    expect([raw.status, raw.headers.get('x-should-retry')]).toEqual([429, 'false']);
    await hangar.request('DELETE', '/api/quotas/limited-once');
  });

  it('refuses what would change the agent, names the settings it leaves to the agent, and refuses unknown arguments', async () => {
    const withTools = openai.chat.completions.create({
      model: 'assistant',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'x', parameters: {} } }],
    });
    await expect(withTools).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(withTools).rejects.toMatchObject({ param: 'tools' });
    const { response } = await openai.chat.completions
      .create({ model: 'assistant', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, max_tokens: 5 })
      .withResponse();
    expect(response.headers.get('x-hangar-ignored-parameters')).toBe('temperature, max_tokens');
    const unknown = await fetch(`${hangar.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'assistant', messages: [{ role: 'user', content: 'hi' }], bananas: true }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      error: { message: expect.stringContaining('bananas'), type: 'invalid_request_error', code: 'validation_failed', param: 'bananas' },
    });
  });

  it('answers an unauthenticated call in OpenAI’s error body', async () => {
    const anonymous = new OpenAI({ baseURL: `${hangar.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await expect(anonymous.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('governance of /v1 runs, as on the native run route', () => {
  const clientFor = (apiKey: string) => new OpenAI({ baseURL: `${hangar.url}/v1`, apiKey, maxRetries: 0 });

  it('attributes the run to the credential’s user and labels; the body’s user is recorded with the input only', async () => {
    const carol = await issuer.sign({ sub: 'carol', roles: ['Operator'], hangar_labels: { team: 'billing' } });
    const { response } = await clientFor(carol)
      .chat.completions.create({
        model: 'assistant',
        messages: [{ role: 'user', content: 'hi' }],
        user: 'mallory',
        metadata: { ticket: 'T-9' },
      })
      .withResponse();
    const runId = response.headers.get('x-hangar-run-id')!;
    expect(await runRecord(runId)).toMatchObject({ userId: 'carol', labels: { team: 'billing' }, kind: 'Compatibility' });
    const input = (await hangar.request('GET', `/api/runs/${runId}/input`)).body.input;
    expect(input.clientMetadata).toEqual({ api: 'chat.completions', user: 'mallory', metadata: { ticket: 'T-9' } });
  });

  it('asks the run-authorization handler: a denied user gets PermissionDeniedError and no models', async () => {
    const blocked = clientFor(await issuer.sign({ sub: 'blocked', roles: ['Operator'] }));
    await expect(
      blocked.chat.completions.create({ model: 'assistant', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(blocked.responses.create({ model: 'assistant', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await blocked.models.list()).data).toEqual([]);
  });

  it('lets the content guard stop a run: an error without streaming, a content_filter finish when streaming', async () => {
    const blocked = openai.chat.completions.create({
      model: 'assistant',
      messages: [{ role: 'user', content: 'the secret-sauce recipe' }],
    });
    await expect(blocked).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
    await expect(blocked).rejects.toMatchObject({ code: 'content_blocked' });
    const chunks = [];
    for await (const chunk of await openai.chat.completions.create({
      model: 'assistant',
      messages: [{ role: 'user', content: 'the secret-sauce recipe' }],
      stream: true,
    }))
      chunks.push(chunk);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('content_filter');
  });

  it('replays a completion for the same Idempotency-Key without running it again', async () => {
    const request = { model: 'counted', messages: [{ role: 'user' as const, content: 'once' }] };
    const calls = mock.callsTo('counted');
    const first = await openai.chat.completions.create(request, { headers: { 'Idempotency-Key': 'v1-once' } });
    const { data: again, response } = await openai.chat.completions
      .create(request, { headers: { 'Idempotency-Key': 'v1-once' } })
      .withResponse();
    expect(again.id).toBe(first.id);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(mock.callsTo('counted')).toBe(calls + 1);
  });
});

describe('the Vercel AI SDK', () => {
  const provider = () => createOpenAI({ baseURL: `${hangar.url}/v1`, apiKey: TEST_TOKEN });

  it('generates and streams text through .chat()', async () => {
    const generated = await generateText({ model: provider().chat('counted'), prompt: 'count', maxRetries: 0 });
    expect(generated.text).toBe('one two three four');
    expect(generated.usage).toMatchObject({ inputTokens: 12, outputTokens: 4 });
    const streamed = streamText({ model: provider().chat('counted'), prompt: 'count', maxRetries: 0 });
    const parts: string[] = [];
    for await (const part of streamed.textStream) parts.push(part);
    expect(parts.join('')).toBe('one two three four');
    expect(await streamed.usage).toMatchObject({ inputTokens: 12, outputTokens: 4 });
  });

  it('holds a conversation over .responses(): the second turn refers to the first answer by its item id', async () => {
    const first = await generateText({ model: provider().responses('assistant'), prompt: 'my name is Ada', maxRetries: 0 });
    const second = await generateText({
      model: provider().responses('assistant'),
      messages: [{ role: 'user', content: 'my name is Ada' }, ...first.response.messages, { role: 'user', content: 'what is my name?' }],
      maxRetries: 0,
    });
    expect(second.text).toBe('mock: what is my name?');
    expect(lastUpstreamMessages('plain').map((message) => message.content)).toEqual(
      expect.arrayContaining(['my name is Ada', first.text, 'what is my name?']),
    );
  });

  it('ends a failing .responses() stream with an error', async () => {
    mock.script('sdk-failing', [{ status: 500 }]);
    await hangar.request('POST', '/api/agents', { body: { name: 'sdk-failing', model: { provider: 'mock', model: 'sdk-failing' } } });
    const streamed = streamText({ model: provider().responses('sdk-failing'), prompt: 'hi', maxRetries: 0, onError: () => {} });
    const parts: string[] = [];
    for await (const part of streamed.fullStream) parts.push(part.type);
    expect(parts).toContain('error');
  });

  it('generates and streams text through .responses()', async () => {
    const generated = await generateText({ model: provider().responses('counted'), prompt: 'count', maxRetries: 0 });
    expect(generated.text).toBe('one two three four');
    expect(generated.finishReason).toBe('stop');
    const streamed = streamText({ model: provider().responses('counted'), prompt: 'count', maxRetries: 0 });
    const parts: string[] = [];
    for await (const part of streamed.textStream) parts.push(part);
    expect(parts.join('')).toBe('one two three four');
    expect(await streamed.finishReason).toBe('stop');
    expect(await streamed.usage).toMatchObject({ inputTokens: 12, outputTokens: 4 });
  });
});

describe('the AI SDK UI message stream on the run route', () => {
  /** What `useChat` does with its default transport: post the chat, read the chunks into UI messages. */
  async function chat(agent: string, messages: UIMessage[]) {
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${hangar.url}/api/agents/${agent}/run?protocol=ui-message-stream`,
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    const chunks = await transport.sendMessages({
      chatId: 'chat-1',
      messages,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream<UIMessage>({ stream: chunks, terminateOnError: true })) last = message;
    return last!;
  }
  const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

  it('streams a run into one assistant message with its text and the run in its metadata', async () => {
    const message = await chat('counted', [userMessage('m1', 'count')]);
    expect(message.role).toBe('assistant');
    expect(message.parts.filter((part) => part.type === 'text')).toEqual([
      expect.objectContaining({ text: 'one two three four', state: 'done' }),
    ]);
    const metadata = message.metadata as any;
    expect(metadata.runId).toBe(message.id);
    expect(metadata).toMatchObject({ agentName: 'counted', status: 'Completed', usage: { inputTokens: 12, outputTokens: 4 } });
    expect(await runRecord(message.id)).toMatchObject({ kind: 'Interactive', status: 'Completed' });
  });

  it('shows the agent’s tool calls as dynamic tool parts with their output, then the answer', async () => {
    const earlier: UIMessage = { id: 'a0', role: 'assistant', parts: [{ type: 'text', text: 'Hello, ask me anything.' }] };
    const message = await chat('clocked', [userMessage('m0', 'hi'), earlier, userMessage('m1', 'what time is it?')]);
    const tool = message.parts.find((part) => part.type === 'dynamic-tool') as any;
    expect(tool).toMatchObject({ toolName: 'clock', state: 'output-available', input: { timeZone: 'UTC' } });
    expect(tool.output).toBeDefined();
    expect(message.parts.filter((part) => part.type === 'text').map((part: any) => part.text)).toEqual(['It is noon.']);
    // The chat's history reached the model as the run's conversation.
    expect(lastUpstreamMessages('clocked').map((entry) => entry.content)).toEqual(
      expect.arrayContaining(['hi', 'Hello, ask me anything.', 'what time is it?']),
    );
  });

  it('ends with an error chunk when the run fails', async () => {
    mock.script('failing', [{ status: 500 }]);
    await hangar.request('POST', '/api/agents', { body: { name: 'failing', model: { provider: 'mock', model: 'failing' } } });
    await expect(chat('failing', [userMessage('m1', 'hi')])).rejects.toThrow(/provider/);
  });
});

describe('with MapOpenAIConversations false', () => {
  let unmapped: HangarUnderTest;
  beforeAll(async () => {
    unmapped = await startHangar({ modules: allInOneModules(), overrides: { Hangar: { Api: { MapOpenAIConversations: false } } } });
  });
  afterAll(async () => {
    await unmapped?.stop();
  });

  it('answers the conversation routes 404, in OpenAI’s body', async () => {
    const client = new OpenAI({ baseURL: `${unmapped.url}/v1`, apiKey: TEST_TOKEN, maxRetries: 0 });
    await expect(client.conversations.create({})).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.conversations.retrieve('conv_x')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client.models.list()).data).toBeDefined();
  });
});
