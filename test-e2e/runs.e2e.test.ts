import { randomUUID } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { createRunRepository, runMigrations, type RunDatabase } from '@hangar/run-executor';
import { sql } from '@hangar/storage';
import {
  createJwtIssuer,
  eventually,
  parseSseFrames,
  startHangar,
  startMockOpenAI,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Runs over SSE and JSON against a mock OpenAI-compatible upstream: recording, events, fallbacks, breaker, tools. */

let mock: MockOpenAI;
let hangar: HangarUnderTest;

/** POSTs and reads the whole text/event-stream (or JSON) answer. */
async function call(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; token?: string } = {}) {
  const response = await fetch(`${hangar.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? TEST_TOKEN}`,
      ...(options.body ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  const text = await response.text();
  const frames = response.headers.get('content-type')?.startsWith('text/event-stream') ? parseSseFrames(text) : [];
  let body: any;
  try {
    body = frames.length ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, frames, body };
}

const run = (agent: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call('POST', `/api/agents/${agent}/run`, { body, headers });
const agent = (name: string, model: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  hangar.request('POST', '/api/agents', { body: { name, instructions: 'Be brief.', model, ...extra } });

const runningRun = (target: HangarUnderTest, agentName: string, except?: string) =>
  eventually(
    async () => {
      const runs = (await target.request('GET', `/api/runs?agentName=${agentName}&status=Running&includeChildren=true`)).body;
      return runs.find((candidate: any) => candidate.id !== except) as any;
      // A long run's start (its pre-flight estimate) can take seconds while other suites load both cores.
    },
    `a running ${agentName} run`,
    15_000,
  );

const runCount = async () => (await hangar.request('GET', '/api/runs?take=200&includeChildren=true')).body.length;

beforeAll(async () => {
  mock = await startMockOpenAI();
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: {
        mock: { Kind: 'OpenAICompatible', Endpoint: mock.url, Timeout: '1s', Models: { 'small-window': { ContextWindowTokens: 100 } } },
        backup: { Kind: 'OpenAICompatible', Endpoint: mock.url },
      },
      Pricing: { Currency: 'EUR', mock: { priced: { Input: 2, Output: 8, CachedInput: 1 } } },
      Preflight: { Enabled: true },
      Scheduling: { PollInterval: '200ms', LeaseDuration: '2s' },
      AsyncRun: { MaxAttempts: 2 },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
    },
  });
  for (const [name, model, extra] of [
    ['plain', { provider: 'mock', model: 'plain' }, {}],
    ['priced', { provider: 'mock', model: 'priced' }, {}],
    ['with-fallback', { provider: 'mock', model: 'broken', fallbacks: [{ provider: 'backup', model: 'steady' }] }, {}],
    ['slow-primary', { provider: 'mock', model: 'slow', fallbacks: [{ provider: 'backup', model: 'steady' }] }, {}],
    ['breaker', { provider: 'mock', model: 'always-500', fallbacks: [{ provider: 'backup', model: 'steady' }] }, {}],
    ['hopeless', { provider: 'mock', model: 'always-500' }, {}],
    ['tooly', { provider: 'mock', model: 'tooly' }, { tools: ['clock'] }],
    ['live', { provider: 'mock', model: 'live' }, {}],
    ['tiny', { provider: 'mock', model: 'small-window' }, {}],
    ['cancellable', { provider: 'backup', model: 'hanging' }, {}],
    ['drip', { provider: 'backup', model: 'drip' }, {}],
    ['echoer', { provider: 'demo', model: 'echo' }, {}],
    [
      'param',
      { provider: 'demo', model: 'echo' },
      { instructions: 'Serve {{customer}}.', parameters: [{ name: 'customer', required: true }, { name: 'tone' }] },
    ],
  ] as const) {
    expect((await agent(name, model, extra)).status).toBe(201);
  }
  mock.script('priced', [{ text: 'priced answer', usage: { prompt: 1000, completion: 500, cached: 200 } }]);
  mock.script('broken', [{ status: 500 }]);
  mock.script('always-500', [{ status: 500 }]);
  mock.script('slow', [{ delayMs: 3000, then: { text: 'too late' } }]);
  mock.script('steady', [{ text: 'steady answer', usage: { prompt: 7, completion: 2 } }]);
  mock.script('drip', () => ({ text: 'word '.repeat(80).trim(), chunkDelayMs: 50 }));
  mock.script('tooly', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'It is noon.' }
      : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } },
  );
  mock.script('live', [{ delayMs: 600, then: { text: 'finally here' } }]);
  mock.script('hanging', [{ delayMs: 20_000, then: { text: 'never seen' } }]);
  // Calls the first callable agent it is offered, then relays what came back; a leaf just answers.
  mock.script('delegator', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    if (result) return { text: `relayed ${typeof result.content === 'string' ? result.content.slice(0, 120) : 'result'}` };
    const agentTool = request.tools?.find((entry) => entry.function.name.startsWith('call_'));
    return agentTool ? { toolCall: { name: agentTool.function.name, args: { message: 'go deeper' } } } : { text: 'leaf answer' };
  });
  for (const [name, agents] of [
    ['chain-e', []],
    ['chain-d', ['chain-e']],
    ['chain-c', ['chain-d']],
    ['chain-b', ['chain-c']],
    ['chain-a', ['chain-b']],
    ['sleeper', []],
  ] as const) {
    // Not `mock`: its 1 s Timeout covers a whole call, and a parent's call holds its children's runs (tools run inside it).
    const model = name === 'sleeper' ? { provider: 'backup', model: 'hanging' } : { provider: 'backup', model: 'delegator' };
    expect((await agent(name, model, { agents })).status).toBe(201);
  }
  expect((await agent('boss', { provider: 'backup', model: 'delegator' }, { agents: ['sleeper'] })).status).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('run over SSE', () => {
  it('streams run, updates and done, with the provider’s usage', async () => {
    const result = await run('plain', { message: 'hello mock' });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = result.frames.map((frame) => frame.event);
    expect(events[0]).toBe('run');
    expect(events.at(-1)).toBe('done');
    expect(result.frames[0].data).toEqual({ runId: expect.any(String), sessionId: null, agentName: 'plain', status: 'Running' });
    const text = result.frames
      .filter((frame) => frame.event === 'update')
      .map((frame) => frame.data.text)
      .join('');
    expect(text).toBe('mock: hello mock');
    const done = result.frames.at(-1)!.data;
    expect(done).toMatchObject({
      status: 'Completed',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      cost: null,
      output: { text: 'mock: hello mock' },
    });
    expect(mock.requests.at(-1)).toMatchObject({
      model: 'plain',
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello mock' },
      ],
    });

    const record = await hangar.request('GET', `/api/runs/${done.runId}`);
    expect(record.body).toMatchObject({
      id: done.runId,
      agentName: 'plain',
      agentVersion: 1,
      status: 'Completed',
      kind: 'Interactive',
      isStreaming: true,
      modelProvider: 'mock',
      model: 'plain',
      errorType: null,
      rootRunId: done.runId,
      parentRunId: null,
      depth: 0,
      cost: null,
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 15 },
    });
    expect(record.body.durationMs).toBeGreaterThanOrEqual(0);
    expect(record.text).not.toContain('hello mock');
  });

  it('prices a run by the SPEC cost rule and records the price snapshot currency', async () => {
    const done = (await run('priced', { message: 'how much?' })).frames.at(-1)!.data;
    expect(done.usage).toMatchObject({ inputTokens: 1000, cachedInputTokens: 200, outputTokens: 500 });
    expect(done.cost.currency).toBe('EUR');
    expect(done.cost.input).toBeCloseTo((800 * 2) / 1e6, 12);
    expect(done.cost.cachedInput).toBeCloseTo((200 * 1) / 1e6, 12);
    expect(done.cost.output).toBeCloseTo((500 * 8) / 1e6, 12);
    expect(done.cost.total).toBeCloseTo(0.0058, 12);
    expect((await hangar.request('GET', `/api/runs/${done.runId}`)).body.cost.total).toBeCloseTo(0.0058, 12);
  });

  it('runs the tool loop: the model calls clock, sees the result, then answers', async () => {
    const result = await run('tooly', { message: 'what time is it?' });
    const updates = result.frames.filter((frame) => frame.event === 'update').map((frame) => frame.data);
    expect(updates[0]).toMatchObject({ type: 'tool-call', toolName: 'clock', args: { timeZone: 'UTC' } });
    expect(updates[1]).toMatchObject({
      type: 'tool-result',
      toolCallId: updates[0].toolCallId,
      result: { timeZone: 'UTC', utc: expect.any(String) },
    });
    expect(
      updates
        .filter((update) => update.type === 'text-delta')
        .map((update) => update.text)
        .join(''),
    ).toBe('It is noon.');
    const second = mock.requests.filter((request) => request.model === 'tooly').at(-1)!;
    expect(second.messages.find((message) => message.role === 'tool')?.content).toContain('"timeZone":"UTC"');
    const events = await call('GET', `/api/runs/${result.frames[0].data.runId}/events`);
    expect(events.frames.map((frame) => frame.event)).toEqual(expect.arrayContaining(['tool.invoking', 'tool.completed']));
  });
});

describe('fallbacks and the circuit breaker', () => {
  it('falls back after a 500 from the primary', async () => {
    const before = mock.callsTo('broken');
    const done = (await run('with-fallback', { message: 'hi' })).frames.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.output.text).toBe('steady answer');
    expect(mock.callsTo('broken')).toBe(before + 1);
    expect((await hangar.request('GET', `/api/runs/${done.data.runId}`)).body).toMatchObject({ modelProvider: 'backup', model: 'steady' });
  });

  it('falls back after the primary times out (Providers:mock:Timeout)', async () => {
    const started = Date.now();
    const done = (await run('slow-primary', { message: 'hi' })).frames.at(-1)!;
    expect(done.data.output.text).toBe('steady answer');
    expect(Date.now() - started).toBeLessThan(2900);
  });

  it('opens the circuit after 5 consecutive failures and stops calling that model', async () => {
    for (let attempt = 0; attempt < 6; attempt += 1) {
      expect((await run('breaker', { message: `try ${attempt}` })).frames.at(-1)!.data.output.text).toBe('steady answer');
    }
    expect(mock.callsTo('always-500')).toBe(5);
  });

  it('fails the run when no model answers: an SSE error frame, a Failed record, 503 in JSON mode', async () => {
    const streamed = await run('hopeless', { message: 'anyone?' });
    expect(streamed.frames.at(-1)).toMatchObject({ event: 'error', data: { errorType: 'provider_unavailable' } });
    const record = await hangar.request('GET', `/api/runs/${streamed.frames[0].data.runId}`);
    expect(record.body).toMatchObject({ status: 'Failed', errorType: 'provider_unavailable', completedAt: expect.any(String) });
    const json = await run('hopeless', { message: 'anyone?' }, { 'idempotency-key': 'k-hopeless' });
    expect(json.status).toBe(503);
    expect(json.body).toMatchObject({ errorType: 'provider_unavailable', runId: expect.any(String) });
  });
});

describe('run as one JSON response', () => {
  it('answers with the Idempotency-Key header as one JSON document', async () => {
    const result = await run('plain', { messages: [{ role: 'user', content: 'json please' }] }, { 'idempotency-key': 'k-1' });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      runId: expect.any(String),
      sessionId: null,
      status: 'Completed',
      output: { text: 'mock: json please', messages: [{ role: 'assistant', content: 'mock: json please' }] },
      usage: { totalTokens: 15 },
      cost: null,
    });
    expect((await hangar.request('GET', `/api/runs/${result.body.runId}`)).body.isStreaming).toBe(false);
  });
});

describe('Idempotency-Key', () => {
  const post = (agentName: string, body: unknown, key: string, headers: Record<string, string> = {}) =>
    hangar.request('POST', `/api/agents/${agentName}/run`, { body, headers: { 'idempotency-key': key, ...headers } });

  it('replays the first response for the same request, without running again', async () => {
    const first = await post('plain', { message: 'exactly once' }, 'idem-once');
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const [runsBefore, callsBefore] = [await runCount(), mock.callsTo('plain')];
    const again = await post('plain', { message: 'exactly once' }, 'idem-once');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect([await runCount(), mock.callsTo('plain')]).toEqual([runsBefore, callsBefore]);
  });

  it('refuses the key with another request (422), and while the first is running (409)', async () => {
    await post('plain', { message: 'one thing' }, 'idem-reuse');
    expectProblem(await post('plain', { message: 'another thing' }, 'idem-reuse'), 422, 'idempotency_key_reuse');
    expectProblem(await post('live', { message: 'one thing' }, 'idem-reuse'), 422, 'idempotency_key_reuse');

    const slow = post('live', { message: 'slowly' }, 'idem-slow');
    await eventually(async () => (mock.callsTo('live') && (await runningRun(hangar, 'live')) ? true : undefined), 'the slow run');
    expectProblem(await post('live', { message: 'slowly' }, 'idem-slow'), 409, 'idempotency_in_progress');
    const finished = await slow;
    expect(finished.status).toBe(200);
    const replayed = await post('live', { message: 'slowly' }, 'idem-slow');
    expect([replayed.headers.get('idempotent-replayed'), replayed.body.runId]).toEqual(['true', finished.body.runId]);
  });

  it('releases the key when the request fails, scopes keys to the tenant, and checks the key', async () => {
    expectProblem(await post('nobody-here', { message: 'x' }, 'idem-fail'), 404, 'not_found');
    expect((await agent('nobody-here', { provider: 'mock', model: 'plain' })).status).toBe(201);
    const retried = await post('nobody-here', { message: 'x' }, 'idem-fail');
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([200, null]);

    const mine = await post('plain', { message: 'tenant scoped' }, 'idem-tenant');
    const theirs = await post('plain', { message: 'tenant scoped' }, 'idem-tenant', { 'x-hangar-tenant': 'elsewhere' });
    expect(theirs.status).toBe(404); // the agent is this tenant's: the other tenant's request really executed
    expect(mine.status).toBe(200);

    expectProblem(await post('plain', { message: 'x' }, 'k'.repeat(256)), 400, 'validation_failed');
    expectProblem(await post('plain', { message: 'x' }, 'has space'), 400, 'validation_failed');
  });

  it('applies to other JSON POSTs too: an agent created once', async () => {
    const body = { name: 'idempotent-agent', model: { provider: 'demo', model: 'echo' } };
    const headers = { 'idempotency-key': 'idem-agent' };
    const created = await hangar.request('POST', '/api/agents', { body, headers });
    const replayed = await hangar.request('POST', '/api/agents', { body, headers });
    expect([created.status, replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect(replayed.body).toEqual(created.body);
    expectProblem(await hangar.request('POST', '/api/agents', { body }), 409, 'conflict');
  });
});

describe('run events', () => {
  it('replays the history with per-run sequence ids and resumes after Last-Event-ID', async () => {
    const runId = (await run('plain', { message: 'one two three' })).frames[0].data.runId;
    const all = await call('GET', `/api/runs/${runId}/events`);
    expect(all.frames.map((frame) => Number(frame.id))).toEqual(all.frames.map((_, index) => index + 1));
    expect(all.frames[0]).toMatchObject({ event: 'run.started', data: { seq: 1, runId, type: 'run.started' } });
    expect(all.frames.at(-1)).toMatchObject({
      event: 'run.completed',
      data: { type: 'run.completed', data: { usage: { totalTokens: 15 } } },
    });
    const tail = await call('GET', `/api/runs/${runId}/events`, { headers: { 'last-event-id': String(all.frames.length - 2) } });
    expect(tail.frames.map((frame) => frame.id)).toEqual([String(all.frames.length - 1), String(all.frames.length)]);
  });

  it('tails a run in progress until its terminal event', async () => {
    const running = run('live', { message: 'wait for it' });
    const runId = (await runningRun(hangar, 'live')).id;
    const live = await call('GET', `/api/runs/${runId}/events`);
    expect(live.frames.at(-1)!.event).toBe('run.completed');
    expect(live.frames.find((frame) => frame.event === 'message.completed')?.data.data.text).toBe(
      'mock: wait for it'.replace('mock: wait for it', 'finally here'),
    );
    await running;
  });

  it('serves many readers of a run in progress, each from its own Last-Event-ID, the same events', async () => {
    const running = run('live', { message: 'wait for it' });
    const runId = (await runningRun(hangar, 'live')).id;
    const positions = [0, 0, 0, 1, 1, 0, 0, 1, 0, 0];
    const readers = await Promise.all(
      positions.map((after) => call('GET', `/api/runs/${runId}/events`, { headers: after ? { 'last-event-id': String(after) } : {} })),
    );
    const whole = readers[0].frames.map((frame) => Number(frame.id));
    expect(whole).toEqual(whole.map((_, index) => index + 1));
    expect(readers[0].frames.at(-1)!.event).toBe('run.completed');
    readers.forEach((reader, index) => expect(reader.frames.map((frame) => Number(frame.id))).toEqual(whole.slice(positions[index])));
    await running;
  });

  it('answers 404 for an unknown run and 400 for a malformed Last-Event-ID', async () => {
    expectProblem(await hangar.request('GET', '/api/runs/00000000-0000-4000-8000-000000000000/events'), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/runs/not-a-uuid'), 404, 'not_found');
    const runId = (await hangar.request('GET', '/api/runs?take=1')).body[0].id;
    expectProblem(
      await hangar.request('GET', `/api/runs/${runId}/events`, { headers: { 'last-event-id': 'abc' } }),
      400,
      'validation_failed',
    );
  });
});

describe('runs list, record and input', () => {
  it('lists newest first with filters, clamping take', async () => {
    const all = (await hangar.request('GET', '/api/runs?take=200')).body;
    const times = all.map((entry: any) => Date.parse(entry.startedAt));
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    expect((await hangar.request('GET', '/api/runs?agentName=priced')).body.map((entry: any) => entry.agentName)).toEqual(['priced']);
    const failed = (await hangar.request('GET', '/api/runs?status=Failed')).body;
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((entry: any) => entry.status === 'Failed' && entry.errorType === 'provider_unavailable')).toBe(true);
    expect((await hangar.request('GET', '/api/runs?errorType=provider_unavailable')).body).toHaveLength(failed.length);
    expect((await hangar.request('GET', '/api/runs?take=0')).body).toHaveLength(1);
    expect(
      (await hangar.request('GET', `/api/runs?startedAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body,
    ).toEqual([]);
    expectProblem(await hangar.request('GET', '/api/runs?status=Sleeping'), 400, 'validation_failed');
    expectProblem(await hangar.request('GET', '/api/runs?parentRunId=nope'), 400, 'validation_failed');
  });

  it('records the run input', async () => {
    const runId = (await run('param', { message: 'hi', parameters: [{ name: 'customer', value: 'ACME' }] })).frames[0].data.runId;
    const input = await hangar.request('GET', `/api/runs/${runId}/input`);
    expect(input.body).toMatchObject({
      runId,
      input: { agentName: 'param', messages: [{ role: 'user', content: 'hi' }], parameters: [{ name: 'customer', value: 'ACME' }] },
    });
  });
});

describe('sessions in runs', () => {
  it('appends each turn to the session and sends the history with the next run', async () => {
    await run('plain', { message: 'first turn', sessionId: 'chat-1' });
    await run('plain', { message: 'second turn', sessionId: 'chat-1' });
    expect(mock.requests.at(-1)!.messages.map((message) => [message.role, message.content])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'first turn'],
      ['assistant', 'mock: first turn'],
      ['user', 'second turn'],
    ]);
    const session = await hangar.request('GET', '/api/sessions/chat-1');
    expect(session.body.messages.map((message: any) => message.content)).toEqual([
      'first turn',
      'mock: first turn',
      'second turn',
      'mock: second turn',
    ]);
    expect((await hangar.request('GET', '/api/runs?sessionId=chat-1')).body).toHaveLength(2);
  });
});

describe('estimate and pre-flight', () => {
  it('estimates with the reference tokenizer against the catalog window', async () => {
    const small = await hangar.request('POST', '/api/agents/tiny/estimate', { body: { message: 'hello' } });
    expect(small.status).toBe(200);
    expect(small.body).toEqual({
      estimatedPromptTokens: expect.any(Number),
      contextWindowTokens: 100,
      allowedPromptTokens: 80,
      wouldBeRejected: false,
      tokenizer: 'o200k_base',
    });
    expect(small.body.estimatedPromptTokens).toBeGreaterThan(5);
    const large = await hangar.request('POST', '/api/agents/tiny/estimate', { body: { message: 'word '.repeat(200) } });
    expect(large.body).toMatchObject({ wouldBeRejected: true, allowedPromptTokens: 80 });
    expect(large.body.estimatedPromptTokens).toBeGreaterThan(200);
    const unknownWindow = await hangar.request('POST', '/api/agents/plain/estimate', { body: { message: 'word '.repeat(5000) } });
    expect(unknownWindow.body).toMatchObject({ contextWindowTokens: null, allowedPromptTokens: null, wouldBeRejected: false });
    expectProblem(await hangar.request('POST', '/api/agents/nobody/estimate', { body: { message: 'x' } }), 404, 'not_found');
    expectProblem(await hangar.request('POST', '/api/agents/tiny/estimate', { body: { nope: 1 } }), 400, 'validation_failed');
  });

  it('refuses an over-window prompt with 400 and both counts before any provider call, recording nothing', async () => {
    const calls = mock.callsTo('small-window');
    const before = await runCount();
    const refused = await run('tiny', { message: 'word '.repeat(200) });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      errorType: 'context_window_exceeded',
      allowedPromptTokens: 80,
      estimatedPromptTokens: expect.any(Number),
    });
    expect(mock.callsTo('small-window')).toBe(calls);
    expect(await runCount()).toBe(before);
    expect((await run('tiny', { message: 'short' })).frames.at(-1)!.event).toBe('done');
  });

  it('counts a session’s history as the pre-flight check does: attachment references are not text', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('a few notes')]), 'notes.txt');
    const notes = (await hangar.request('POST', '/api/attachments', { rawBody: form as never })).body;
    expect((await run('tiny', { message: 'hi', sessionId: 'estimated', attachments: [notes.id] })).frames.at(-1)!.event).toBe('done');
    const request = { message: 'word '.repeat(90), sessionId: 'estimated' };
    const estimate = await hangar.request('POST', '/api/agents/tiny/estimate', { body: request });
    expect(estimate.body.wouldBeRejected).toBe(true);
    const refused = await run('tiny', request);
    expect(refused.status).toBe(400);
    expect(refused.body.estimatedPromptTokens).toBe(estimate.body.estimatedPromptTokens);
  });
});

describe('factory agents', () => {
  it('builds the agent for each caller at run time and runs it', async () => {
    mock.script('factory-built', (request) =>
      request.messages.some((message) => message.role === 'tool') ? { text: 'built and ran' } : { toolCall: { name: 'clock', args: {} } },
    );
    const result = await run('tenant-factory', { message: 'who am I?' }, { 'x-hangar-tenant': 'acme' });
    expect(result.status, result.text).toBe(200);
    expect(result.frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed', output: { text: 'built and ran' } } });
    const calls = mock.requests.filter((request) => request.model === 'factory-built');
    expect(calls[0].messages[0]).toEqual({ role: 'system', content: 'Serve tenant acme for an unnamed caller.' });
    expect(calls[0].tools?.map((entry) => entry.function.name)).toEqual(['clock']);
    const record = await hangar.request('GET', `/api/runs/${result.frames[0].data.runId}`, { headers: { 'x-hangar-tenant': 'acme' } });
    expect(record.body).toMatchObject({ agentName: 'tenant-factory', agentVersion: null, modelProvider: 'mock', model: 'factory-built' });

    await run('tenant-factory', { message: 'and now?' }, { 'x-hangar-tenant': 'globex' });
    const globex = mock.requests.filter((request) => request.model === 'factory-built').at(-2)!;
    expect(globex.messages[0].content).toBe('Serve tenant globex for an unnamed caller.');
  });

  it('estimates a factory agent from what it builds, and says why a build is not runnable', async () => {
    const estimate = await hangar.request('POST', '/api/agents/tenant-factory/estimate', { body: { message: 'hello' } });
    expect(estimate.status, estimate.text).toBe(200);
    expect(estimate.body.estimatedPromptTokens).toBeGreaterThan(0);
    const refused = await run('code-factory', { message: 'a' });
    expect(refused.body.detail).toContain('model');
  });
});

describe('tree and cancel', () => {
  it('resolves the tree from the root', async () => {
    const runId = (await run('plain', { message: 'tree' })).frames[0].data.runId;
    const tree = await hangar.request('GET', `/api/runs/${runId}/tree`);
    expect(tree.body.map((entry: any) => [entry.id, entry.parentRunId, entry.depth])).toEqual([[runId, null, 0]]);
  });

  it.each([100, 500, 2000])('ends a run whose client disconnects %i ms in: Canceled, with its terminal event', async (afterMs) => {
    const leave = new AbortController();
    const started = Date.now();
    const response = await fetch(`${hangar.url}/api/agents/drip/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'drip' }),
      signal: leave.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const runId = JSON.parse(/^data: (.*)$/m.exec(first)![1]).runId as string;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, afterMs - (Date.now() - started))));
    leave.abort();
    const ended = await eventually(async () => {
      const record = (await hangar.request('GET', `/api/runs/${runId}`)).body;
      return ['Completed', 'Failed', 'Canceled'].includes(record.status) ? record : undefined;
    }, `run ${runId} to end after its client left`);
    expect(ended).toMatchObject({ status: 'Canceled', errorType: null });
    const events = await hangar.request('GET', `/api/runs/${runId}/events`);
    expect(parseSseFrames(events.text).at(-1)?.event).toBe('run.canceled');
  });

  it('ends a long JSON-mode run whose client disconnects 500 ms in', async () => {
    const leave = new AbortController();
    const request = fetch(`${hangar.url}/api/agents/echoer/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ message: 'echo '.repeat(50_000) }),
      signal: leave.signal,
    }).catch(() => undefined);
    const running = await runningRun(hangar, 'echoer');
    setTimeout(() => leave.abort(), 500);
    await request;
    const ended = await eventually(async () => {
      const record = (await hangar.request('GET', `/api/runs/${running.id}`)).body;
      return ['Completed', 'Failed', 'Canceled'].includes(record.status) ? record : undefined;
    }, 'the JSON-mode run to end after its client left');
    expect(ended).toMatchObject({ status: 'Canceled', errorType: null });
  });

  it('cancels a running run: 202, the stream ends with done Canceled, a second cancel is 409', async () => {
    const streaming = run('cancellable', { message: 'take your time' });
    const runId = (await runningRun(hangar, 'cancellable')).id;
    const canceled = await hangar.request('POST', `/api/runs/${runId}/cancel`);
    expect(canceled.status).toBe(202);
    expect(canceled.body.id).toBe(runId);
    const frames = (await streaming).frames;
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
    expect((await hangar.request('GET', `/api/runs/${runId}`)).body).toMatchObject({
      status: 'Canceled',
      completedAt: expect.any(String),
      errorType: null,
      errorMessage: null,
    });
    expect((await call('GET', `/api/runs/${runId}/events`)).frames.at(-1)!.event).toBe('run.canceled');
    expectProblem(await hangar.request('POST', `/api/runs/${runId}/cancel`), 409, 'conflict');
    expectProblem(await hangar.request('POST', '/api/runs/00000000-0000-4000-8000-000000000000/cancel'), 404, 'not_found');
  });
});

describe('child agents', () => {
  it('runs callable agents as child runs down to AgentGraph:MaxDepth and refuses the next level', async () => {
    const result = await run('chain-a', { message: 'start the chain' });
    expect(result.frames.at(-1)!.event, JSON.stringify(result.frames.slice(-2))).toBe('done');
    const rootId = result.frames[0].data.runId;
    const childUpdate = result.frames.find((frame) => frame.event === 'update' && frame.data.type === 'child-run');
    expect(childUpdate?.data).toEqual({ type: 'child-run', runId: expect.any(String), agentName: 'chain-b' });

    const tree = (await hangar.request('GET', `/api/runs/${rootId}/tree`)).body;
    expect(tree.map((entry: any) => [entry.agentName, entry.depth, entry.kind, entry.rootRunId])).toEqual([
      ['chain-a', 0, 'Interactive', rootId],
      ['chain-b', 1, 'Child', rootId],
      ['chain-c', 2, 'Child', rootId],
      ['chain-d', 3, 'Child', rootId],
    ]);
    expect(tree.slice(1).map((entry: any, index: number) => entry.parentRunId === tree[index].id)).toEqual([true, true, true]);
    const fromChild = (await hangar.request('GET', `/api/runs/${tree[2].id}/tree`)).body;
    expect(fromChild.map((entry: any) => entry.id)).toEqual(tree.map((entry: any) => entry.id));

    const deepest = await call('GET', `/api/runs/${tree[3].id}/events`);
    expect(deepest.frames.find((frame) => frame.event === 'tool.failed')?.data.data.error).toContain('AgentGraph:MaxDepth 3');
    const rootEvents = await call('GET', `/api/runs/${rootId}/events`);
    expect(rootEvents.frames.map((frame) => frame.event)).toEqual(expect.arrayContaining(['child.started', 'child.completed']));
  });

  it('lists only root runs unless asked for children', async () => {
    const rootId = (await hangar.request('GET', '/api/runs?agentName=chain-a')).body[0].id;
    expect((await hangar.request('GET', '/api/runs?agentName=chain-b')).body).toEqual([]);
    expect((await hangar.request('GET', '/api/runs?agentName=chain-b&includeChildren=true')).body).toHaveLength(1);
    expect((await hangar.request('GET', `/api/runs?parentRunId=${rootId}`)).body.map((entry: any) => entry.agentName)).toEqual(['chain-b']);
    expect((await hangar.request('GET', `/api/runs?rootRunId=${rootId}`)).body).toHaveLength(4);
  });

  const waitForRunning = (agentName: string) => runningRun(hangar, agentName);

  it('cancels the whole tree when the root is canceled', async () => {
    const streaming = run('boss', { message: 'delegate and wait' });
    const child = await waitForRunning('sleeper');
    expect((await hangar.request('POST', `/api/runs/${child.rootRunId}/cancel`)).status).toBe(202);
    expect((await streaming).frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Canceled' } });
    expect((await hangar.request('GET', `/api/runs/${child.id}`)).body.status).toBe('Canceled');
    expect((await hangar.request('GET', `/api/runs/${child.rootRunId}`)).body.status).toBe('Canceled');
  });

  it('cancels only the child when the child is canceled', async () => {
    const streaming = run('boss', { message: 'delegate again' });
    const child = await waitForRunning('sleeper');
    expect((await hangar.request('POST', `/api/runs/${child.id}/cancel`)).status).toBe(202);
    expect((await streaming).frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    expect((await hangar.request('GET', `/api/runs/${child.id}`)).body.status).toBe('Canceled');
  });
});

describe('queued runs', () => {
  const waitForStatus = (runId: string, statuses: string[]) =>
    eventually(
      async () => {
        const run = (await hangar.request('GET', `/api/runs/${runId}`)).body;
        return statuses.includes(run.status) ? run : undefined;
      },
      `run ${runId} to reach ${statuses.join('/')}`,
      7500,
    );

  it('answers Prefer: respond-async with 202 and a Location, and the job worker completes the run', async () => {
    const accepted = await hangar.request('POST', '/api/agents/plain/run', {
      body: { message: 'later please' },
      headers: { prefer: 'respond-async' },
    });
    expect(accepted.status, accepted.text).toBe(202);
    const runId = accepted.body.runId;
    expect(accepted.body).toEqual({ runId, status: 'Queued', statusUrl: `/api/runs/${runId}`, eventsUrl: `/api/runs/${runId}/events` });
    expect(accepted.headers.get('location')).toBe(`/api/runs/${runId}`);
    const done = await waitForStatus(runId, ['Completed', 'Failed']);
    expect(done).toMatchObject({ status: 'Completed', kind: 'Async', isStreaming: false, usage: { totalTokens: 15 } });
    expect((await call('GET', `/api/runs/${runId}/events`)).frames.at(-1)!.event).toBe('run.completed');
  });

  /** A run queued by a worker that died holding the lease (written as that worker would have left it). */
  async function orphanedJob(attempts: number) {
    const { db } = await hangar.openStore<RunDatabase>('runs', runMigrations);
    const runId = randomUUID();
    const repository = createRunRepository(db);
    await repository.insert(
      'default',
      {
        id: runId,
        agentName: 'plain',
        agentVersion: 1,
        sessionId: null,
        kind: 'Async',
        isStreaming: false,
        rootRunId: runId,
        parentRunId: null,
        depth: 0,
        userId: null,
        labels: {},
      },
      'Queued',
    );
    await db
      .insertInto('jobs')
      .values({
        id: runId,
        tenant_id: 'default',
        run_id: runId,
        status: 'leased',
        attempts,
        lease_owner: 'worker-that-died',
        lease_expires_at: new Date(Date.now() - 1000),
        last_error: null,
        payload: sql`${JSON.stringify({ caller: { tenantId: 'default', actor: 'auth-token', role: 'Admin' }, request: { agentName: 'plain', messages: [{ role: 'user', content: 'orphaned' }], parameters: [], isStreaming: false, attachments: [] } })}::jsonb`,
      })
      .execute();
    return { runId, job: () => db.selectFrom('jobs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow() };
  }

  it('takes over the expired lease of a dead worker and completes the run', async () => {
    const { runId, job } = await orphanedJob(1);
    expect((await waitForStatus(runId, ['Completed', 'Failed'])).status).toBe('Completed');
    // The run ends first, then its job is closed.
    const closed = await eventually(async () => {
      const row = await job();
      return row.status === 'done' ? row : undefined;
    }, 'the job to be closed as done');
    expect(closed).toMatchObject({ status: 'done', attempts: 2, lease_owner: null });
  });

  it('fails the run as worker_lost when the attempts are used up', async () => {
    const { runId, job } = await orphanedJob(2);
    expect(await waitForStatus(runId, ['Completed', 'Failed'])).toMatchObject({ status: 'Failed', errorType: 'worker_lost' });
    // The run ends first, then its job is closed.
    await eventually(async () => ((await job()).status === 'failed' ? true : undefined), 'the job to be closed as failed');
  });
});

describe('RunRecording:Enabled false', () => {
  it('keeps the run record but writes no events', async () => {
    const quiet = await startHangar({ modules: allInOneModules(), overrides: { RunRecording: { Enabled: false } } });
    try {
      const done = await quiet.request('POST', '/api/agents/code-helper/run', {
        body: { message: 'hush' },
        headers: { 'idempotency-key': 'quiet' },
      });
      expect(done.status, done.text).toBe(200);
      expect((await quiet.request('GET', `/api/runs/${done.body.runId}`)).body).toMatchObject({
        status: 'Completed',
        usage: { totalTokens: expect.any(Number) },
      });
      const events = await fetch(`${quiet.url}/api/runs/${done.body.runId}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      expect(parseSseFrames(await events.text())).toEqual([]);
    } finally {
      await quiet.stop();
    }
  });
});

describe('job lanes', () => {
  const instances: HangarUnderTest[] = [];
  const startWith = async (scheduling: Record<string, unknown>) => {
    const started = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        Scheduling: { PollInterval: '100ms', ...scheduling },
      },
    });
    instances.push(started);
    expect(
      (await started.request('POST', '/api/agents', { body: { name: 'queued-live', model: { provider: 'mock', model: 'live' } } })).status,
    ).toBe(201);
    return started;
  };
  const enqueue = async (target: HangarUnderTest) =>
    (await target.request('POST', '/api/agents/queued-live/run', { body: { message: 'queue me' }, headers: { prefer: 'respond-async' } }))
      .body.runId as string;

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
  });

  it('runs a lane with its own budget one job at a time (LaneByHandlerKey, MaxConcurrentJobsPerLane)', async () => {
    const laned = await startWith({
      MaxConcurrentJobs: 4,
      LaneByHandlerKey: { 'agent-run': 'bulk' },
      MaxConcurrentJobsPerLane: { bulk: 1 },
    });
    const ids = [await enqueue(laned), await enqueue(laned), await enqueue(laned)];
    let mostAtOnce = 0;
    await eventually(
      async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await laned.request('GET', `/api/runs/${id}`)).body.status));
        mostAtOnce = Math.max(mostAtOnce, statuses.filter((status) => status === 'Running').length);
        return statuses.every((status) => status === 'Completed') ? true : undefined;
      },
      'three queued runs to complete',
      // One at a time on a shape just started beside another suite: 14 s was seen on the split shape.
      30_000,
    );
    expect(mostAtOnce).toBe(1);
  }, 60_000);

  it('leases only from the lanes it is given (Scheduling:Lanes)', async () => {
    const elsewhere = await startWith({ Lanes: ['interactive-only'] });
    const runId = await enqueue(elsewhere);
    await new Promise((resolve) => setTimeout(resolve, 500)); // five polls
    expect((await elsewhere.request('GET', `/api/runs/${runId}`)).body.status).toBe('Queued');
    expect((await elsewhere.request('POST', `/api/runs/${runId}/cancel`)).body).toMatchObject({ status: 'Canceled', errorType: null });
  });
});

describe('feedback', () => {
  it('creates, updates by same author and name, lists and deletes scores', async () => {
    const runId = (await run('plain', { message: 'rate me' })).frames[0].data.runId;
    const first = await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { value: 4, comment: 'good' } });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      runId,
      name: 'overall',
      messageId: null,
      kind: 'Numeric',
      value: 4,
      textValue: null,
      source: 'Human',
      author: 'auth-token',
      comment: 'good',
    });
    const again = await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { name: '  ', value: 5 } });
    expect(again.body).toMatchObject({ id: first.body.id, value: 5, comment: null });
    const other = await hangar.request('POST', `/api/runs/${runId}/feedback`, {
      body: { name: 'tone', kind: 'Categorical', textValue: 'friendly' },
    });
    expect(other.body).toMatchObject({ name: 'tone', kind: 'Categorical', value: null, textValue: 'friendly' });
    const onMessage = await hangar.request('POST', `/api/runs/${runId}/feedback`, {
      body: { messageId: 'm-1', kind: 'Boolean', value: 1 },
    });
    expect(onMessage.body).toMatchObject({ name: 'overall', messageId: 'm-1' });
    const listed = await hangar.request('GET', `/api/runs/${runId}/feedback`);
    expect(listed.body.map((score: any) => `${score.name}/${score.messageId}`)).toEqual(['overall/null', 'tone/null', 'overall/m-1']);
    expect((await hangar.request('DELETE', `/api/runs/${runId}/feedback/${other.body.id}`)).status).toBe(204);
    expectProblem(await hangar.request('DELETE', `/api/runs/${runId}/feedback/${other.body.id}`), 404, 'not_found');
    expect((await hangar.request('GET', `/api/runs/${runId}/feedback`)).body).toHaveLength(2);

    const trail = (await hangar.request('GET', `/api/audit?resourceType=run-score&take=200`)).body.filter(
      (entry: any) => entry.details.runId === runId,
    );
    expect(trail.map((entry: any) => entry.action).reverse()).toEqual([
      'feedback.created',
      'feedback.updated',
      'feedback.created',
      'feedback.created',
      'feedback.deleted',
    ]);
    expect(trail[0]).toMatchObject({
      tenantId: 'default',
      actor: 'auth-token',
      userId: null,
      resourceId: other.body.id,
      details: { runId, name: 'tone', kind: 'Categorical', textValue: 'friendly' },
      createdAt: expect.any(String),
    });
    const deletedOnly = await hangar.request('GET', `/api/audit?action=feedback.deleted&resourceId=${other.body.id}`);
    expect(deletedOnly.body).toHaveLength(1);
    expect((await hangar.request('GET', '/api/audit', { headers: { 'x-hangar-tenant': 'elsewhere' } })).body).toEqual([]);
  });

  it('refuses bad scores with 400 and another tenant’s run with 404', async () => {
    const runId = (await run('plain', { message: 'rate me too' })).frames[0].data.runId;
    expectProblem(await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { kind: 'Categorical' } }), 400, 'validation_failed');
    expectProblem(
      await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { kind: 'Boolean', value: 3 } }),
      400,
      'validation_failed',
    );
    expectProblem(await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { kind: 'Numeric' } }), 400, 'validation_failed');
    expectProblem(await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { value: 'high' } }), 400, 'validation_failed');
    const other = { 'x-hangar-tenant': 'elsewhere' };
    expectProblem(await hangar.request('GET', `/api/runs/${runId}/feedback`, { headers: other }), 404, 'not_found');
    expectProblem(await hangar.request('POST', `/api/runs/${runId}/feedback`, { headers: other, body: { value: 1 } }), 404, 'not_found');
    expectProblem(await hangar.request('GET', `/api/runs/${runId}`, { headers: other }), 404, 'not_found');
    expect((await hangar.request('GET', `/api/runs/${runId}/feedback`)).body).toEqual([]);
  });
});

describe('attachments in runs', () => {
  const uploadFile = async (bytes: Buffer, fileName: string) => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), fileName);
    return (await hangar.request('POST', '/api/attachments', { rawBody: form as never })).body;
  };

  it('hands images to the model as image parts and text files as text, and keeps references in the session', async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      Buffer.from('IHDR'),
      Buffer.alloc(17),
      Buffer.from([0, 0, 0, 0]),
      Buffer.from('IEND'),
      Buffer.alloc(4),
    ]);
    const image = await uploadFile(png, 'chart.png');
    const notes = await uploadFile(Buffer.from('quarterly numbers: 42'), 'notes.txt');
    expect([image.mediaType, notes.mediaType]).toEqual(['image/png', 'text/plain']);
    const done = (await run('plain', { message: 'look at these', sessionId: 'with-files', attachments: [image.id, notes.id] })).frames.at(
      -1,
    )!;
    expect(done.event).toBe('done');
    const content = mock.requests.at(-1)!.messages.at(-1)!.content as Array<Record<string, any>>;
    expect(content[0]).toEqual({ type: 'text', text: 'look at these' });
    expect(content).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } });
    expect(content).toContainEqual({ type: 'text', text: 'Attachment notes.txt:\nquarterly numbers: 42' });
    const session = await hangar.request('GET', '/api/sessions/with-files');
    expect(session.body.messages[0].content).toEqual([
      { type: 'text', text: 'look at these' },
      { type: 'attachment', attachmentId: image.id, fileName: 'chart.png', mediaType: 'image/png' },
      { type: 'attachment', attachmentId: notes.id, fileName: 'notes.txt', mediaType: 'text/plain' },
    ]);
  });
});

describe('refused runs record nothing', () => {
  it.each([
    ['an unknown agent', 'nobody', { message: 'hi' }, {}, 404, 'not_found'],
    ['both message and messages', 'plain', { message: 'a', messages: [{ role: 'user', content: 'b' }] }, {}, 400, 'validation_failed'],
    ['no message', 'plain', {}, {}, 400, 'validation_failed'],
    ['an unknown field', 'plain', { message: 'a', temperature: 2 }, {}, 400, 'validation_failed'],
    [
      'a parameter over 4096 bytes',
      'param',
      { message: 'a', parameters: [{ name: 'customer', value: 'é'.repeat(2049) }] },
      {},
      400,
      'validation_failed',
    ],
    ['a missing required parameter', 'param', { message: 'a' }, {}, 400, 'validation_failed'],
    [
      'an unknown parameter',
      'param',
      {
        message: 'a',
        parameters: [
          { name: 'customer', value: 'x' },
          { name: 'mood', value: 'y' },
        ],
      },
      {},
      400,
      'validation_failed',
    ],
    ['a bad session id', 'plain', { message: 'a', sessionId: 'no spaces allowed' }, {}, 400, 'validation_failed'],
    ['a queued run for an unknown agent', 'nobody', { message: 'a' }, { prefer: 'respond-async' }, 404, 'not_found'],
    ['a queued run with a missing parameter', 'param', { message: 'a' }, { prefer: 'respond-async' }, 400, 'validation_failed'],
    [
      'an unknown attachment',
      'plain',
      { message: 'a', attachments: ['00000000-0000-4000-8000-000000000000'] },
      {},
      400,
      'validation_failed',
    ],
    [
      'a repeated attachment',
      'plain',
      { message: 'a', attachments: ['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000'] },
      {},
      400,
      'validation_failed',
    ],
    ['a factory agent whose build has no model', 'code-factory', { message: 'a' }, {}, 501, 'not_implemented'],
    ['a factory agent whose factory throws', 'opaque-factory', { message: 'a' }, {}, 501, 'not_implemented'],
  ])('%s', async (_case, name, body, headers, status, errorType) => {
    const before = await runCount();
    const result = await run(name, body, headers);
    expect(result.status, result.text).toBe(status);
    expect(result.body).toMatchObject({ status, errorType });
    expect(await runCount()).toBe(before);
  });

  it('accepts a parameter of exactly 4096 bytes and fills {{placeholders}} in the instructions', async () => {
    const result = await run('param', { message: 'a', parameters: [{ name: 'customer', value: 'é'.repeat(2048) }] });
    expect(result.frames.at(-1)!.event).toBe('done');
  });
});

describe('session ownership in runs', () => {
  let owned: HangarUnderTest;
  let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;

  beforeAll(async () => {
    issuer = await createJwtIssuer();
    owned = await startHangar({
      modules: allInOneModules(),
      overrides: { SessionOwnership: { Enabled: true }, Hangar: { Api: { Jwt: { Enabled: true, Jwks: issuer.jwks } } } },
    });
  });

  afterAll(async () => {
    await owned?.stop();
  });

  it('refuses another user’s session with 403 and a new session without a user with session_owner_required', async () => {
    const alice = await issuer.sign({ sub: 'alice', roles: ['Operator'] });
    const bob = await issuer.sign({ sub: 'bob', roles: ['Operator'] });
    const post = (token: string, body: unknown) =>
      owned.request('POST', '/api/agents/code-helper/run', { token, body, headers: { 'idempotency-key': `k-${Math.random()}` } });
    expect((await post(alice, { message: 'mine', sessionId: 'alice-chat' })).status).toBe(200);
    const runsBefore = (await owned.request('GET', '/api/runs?take=200')).body.length;
    expectProblem(await post(bob, { message: 'let me in', sessionId: 'alice-chat' }), 403, 'forbidden');
    expectProblem(await post(TEST_TOKEN, { message: 'nobody owns this', sessionId: 'fresh-chat' }), 403, 'session_owner_required');
    expect((await owned.request('GET', '/api/runs?take=200')).body).toHaveLength(runsBefore);
    expect((await owned.request('GET', '/api/sessions/alice-chat')).body.messageCount).toBe(2);
  });

  it('reads the audit trail only with the Admin role and the AuditRead scope', async () => {
    const operator = await issuer.sign({ sub: 'op', roles: ['Operator'] });
    const narrowAdmin = await issuer.sign({ sub: 'ad', roles: ['Admin'], scope: 'RunsRead' });
    const admin = await issuer.sign({ sub: 'ad', roles: ['Admin'], scope: 'AuditRead' });
    expectProblem(await owned.request('GET', '/api/audit', { token: operator }), 403, 'forbidden');
    expectProblem(await owned.request('GET', '/api/audit', { token: narrowAdmin }), 403, 'forbidden');
    expect((await owned.request('GET', '/api/audit', { token: admin })).status).toBe(200);
    expectProblem(await owned.request('GET', '/api/audit?take=lots', { token: admin }), 400, 'validation_failed');
  });

  it('records userId and labels from the credential, never from the request body', async () => {
    const carol = await issuer.sign({
      sub: 'carol',
      roles: ['Operator'],
      hangar_labels: { team: 'billing', region: 'eu', 'bad key!': 'dropped', nested: { no: 'objects' } },
    });
    const spoofed = await owned.request('POST', '/api/agents/code-helper/run', {
      token: carol,
      body: { message: 'hi', userId: 'mallory', labels: { team: 'security' } },
      headers: { 'idempotency-key': 'k-spoof' },
    });
    expectProblem(spoofed, 400, 'validation_failed');
    const result = await owned.request('POST', '/api/agents/code-helper/run', {
      token: carol,
      body: { message: 'attribute me' },
      headers: { 'idempotency-key': 'k-attributed' },
    });
    expect(result.status, result.text).toBe(200);
    const record = (await owned.request('GET', `/api/runs/${result.body.runId}`)).body;
    expect(record).toMatchObject({ userId: 'carol', labels: { team: 'billing', region: 'eu' } });
    expect(Object.keys(record.labels).sort()).toEqual(['region', 'team']);
    const ids = async (query: string) => (await owned.request('GET', `/api/runs?${query}`)).body.map((run: any) => run.id);
    expect(await ids('label=team:billing')).toEqual([result.body.runId]);
    expect(await ids('label=region')).toEqual([result.body.runId]);
    expect(await ids('label=team:security')).toEqual([]);
    expect(await ids('userId=carol')).toEqual([result.body.runId]);
  });
});

describe('agent graph budgets', () => {
  let limited: HangarUnderTest;

  beforeAll(async () => {
    limited = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        AgentGraph: { MaxTotalTokens: 20, MaxTotalRuns: 1, MaxTotalCost: 0 },
      },
    });
    for (const [name, agents] of [
      ['leaf', []],
      ['middle', ['leaf']],
      ['top', ['middle']],
    ] as const) {
      const created = await limited.request('POST', '/api/agents', {
        body: { name, model: { provider: 'mock', model: 'delegator' }, agents },
      });
      expect(created.status).toBe(201);
    }
  });

  afterAll(async () => {
    await limited?.stop();
  });

  it('refuses child runs past MaxTotalRuns and stops the tree between turns past MaxTotalTokens (MaxTotalCost 0 is no limit)', async () => {
    const result = await limited.request('POST', '/api/agents/top/run', {
      body: { message: 'go' },
      headers: { 'idempotency-key': 'k-budget' },
    });
    expect(result.status).toBe(503);
    expect(result.body).toMatchObject({ errorType: 'agent_graph_limit' });
    expect(result.body.detail).toContain('AgentGraph:MaxTotalTokens');
    const tree = (await limited.request('GET', `/api/runs/${result.body.runId}/tree`)).body;
    expect(tree.map((entry: any) => [entry.agentName, entry.status])).toEqual([
      ['top', 'Failed'],
      ['middle', 'Completed'],
    ]);
    const response = await fetch(`${limited.url}/api/runs/${tree[1].id}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    expect(await response.text()).toContain('AgentGraph:MaxTotalRuns 1');
  });
});

describe('ModelConcurrency:MaxConcurrentCallsPerProvider', () => {
  let limited: HangarUnderTest;

  beforeAll(async () => {
    limited = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        ModelConcurrency: { MaxConcurrentCallsPerProvider: 1 },
      },
    });
    for (const [name, model, agents] of [
      ['one-at-a-time', 'live', []],
      ['sub', 'delegator', []],
      ['lead', 'delegator', ['sub']],
    ] as const) {
      expect((await limited.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model }, agents } })).status).toBe(
        201,
      );
    }
  });

  afterAll(async () => {
    await limited?.stop();
  });

  const runOn = (agentName: string, key: string) =>
    limited.request('POST', `/api/agents/${agentName}/run`, { body: { message: 'go' }, headers: { 'idempotency-key': key } });

  it('lets one model call per provider run at a time; the others wait their turn', async () => {
    mock.resetPeakConcurrency();
    const results = await Promise.all([runOn('one-at-a-time', 'mc-1'), runOn('one-at-a-time', 'mc-2'), runOn('one-at-a-time', 'mc-3')]);
    expect(results.map((result) => result.status)).toEqual([200, 200, 200]);
    expect(mock.peakConcurrency()).toBe(1);
  });

  it('does not hold the slot while a tool runs: a child agent on the same provider gets its turn', async () => {
    const result = await runOn('lead', 'mc-tree');
    expect(result.status, result.text).toBe(200);
    expect(result.body.output.text).toContain('relayed');
  });
});

describe('payload limits', () => {
  let limited: HangarUnderTest;

  beforeAll(async () => {
    limited = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        Tools: { DefaultMaxOutputBytes: 60 },
        RunRecording: { MaxPayloadLength: 40 },
      },
    });
    const created = await limited.request('POST', '/api/agents', {
      body: { name: 'tooly', model: { provider: 'mock', model: 'tooly' }, tools: ['clock'] },
    });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await limited?.stop();
  });

  it('cuts tool results to Tools:DefaultMaxOutputBytes for the model and records payloads up to RunRecording:MaxPayloadLength', async () => {
    const ran = await limited.request('POST', '/api/agents/tooly/run', {
      body: { message: 'what time is it?' },
      headers: { 'idempotency-key': 'k-limits' },
    });
    expect(ran.status, ran.text).toBe(200);
    const toolMessage = mock.requests
      .filter((request) => request.model === 'tooly')
      .at(-1)!
      .messages.find((message) => message.role === 'tool')!;
    const sent = String(toolMessage.content);
    expect(Buffer.byteLength(sent, 'utf8')).toBeLessThanOrEqual(62); // the cut string, JSON-quoted
    expect(sent).toMatch(/\[truncated \d+ bytes\]/);
    const response = await fetch(`${limited.url}/api/runs/${ran.body.runId}/events`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    const completed = events.find((event) => event.type === 'tool.completed');
    expect(completed.data.result).toMatchObject({ truncated: true, length: expect.any(Number), preview: expect.any(String) });
    expect(completed.data.result.preview).toHaveLength(40);
    expect(events.find((event) => event.type === 'message.completed').data.text).toBe('It is noon.');
  });
});

describe('structured responses', () => {
  let structured: HangarUnderTest;
  const schema = { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } }, additionalProperties: false };

  beforeAll(async () => {
    structured = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        StructuredResponse: { Enabled: true, MaxRepairAttempts: 1 },
      },
    });
    mock.script('json-fenced', [{ text: '```json\n{"anything": true}\n```' }]);
    mock.script('json-repair', [{ text: 'not json at all' }, { text: '{"answer": "forty-two"}' }]);
    mock.script('json-never', [{ text: '{"answer": 42}' }]);
    for (const [name, model, responseFormat] of [
      ['json-agent', 'json-fenced', { kind: 'Json' }],
      ['schema-agent', 'json-repair', { kind: 'JsonSchema', schema }],
      ['stubborn-agent', 'json-never', { kind: 'JsonSchema', schema }],
    ] as const) {
      const created = await structured.request('POST', '/api/agents', {
        body: { name, instructions: 'Answer.', model: { provider: 'mock', model }, responseFormat },
      });
      expect(created.status, created.text).toBe(201);
    }
  });

  afterAll(async () => {
    await structured?.stop();
  });

  const json = (agentName: string) =>
    structured.request('POST', `/api/agents/${agentName}/run`, {
      body: { message: 'answer me' },
      headers: { 'idempotency-key': `k-${agentName}` },
    });

  it('accepts JSON for a Json agent (a code fence around it is tolerated) and tells the model to answer in JSON', async () => {
    const result = await json('json-agent');
    expect(result.status, result.text).toBe(200);
    expect(mock.requests.filter((request) => request.model === 'json-fenced').at(-1)!.messages[0].content).toBe(
      'Answer.\n\nReply with JSON only.',
    );
  });

  it('asks again after an invalid answer, within MaxRepairAttempts, and counts both calls', async () => {
    const result = await json('schema-agent');
    expect(result.status, result.text).toBe(200);
    expect(result.body.output.text).toBe('{"answer": "forty-two"}');
    expect(result.body.usage.totalTokens).toBe(30);
    const calls = mock.requests.filter((request) => request.model === 'json-repair');
    expect(calls).toHaveLength(2);
    expect(String(calls[1].messages.at(-1)!.content)).toContain('That answer is not valid: it is not JSON');
    expect(String(calls[0].messages[0].content)).toContain('"required":["answer"]');
  });

  it('fails the run after MaxRepairAttempts + 1 invalid answers', async () => {
    const result = await json('stubborn-agent');
    expect(result.status).toBe(503);
    expect(result.body).toMatchObject({ errorType: 'invalid_structured_response' });
    expect(result.body.detail).toContain('does not match the schema');
    expect(mock.callsTo('json-never')).toBe(2);
    expect((await structured.request('GET', `/api/runs/${result.body.runId}`)).body).toMatchObject({
      status: 'Failed',
      errorType: 'invalid_structured_response',
    });
  });
});

describe('run reconciliation', () => {
  let reconciling: HangarUnderTest;

  beforeAll(async () => {
    reconciling = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Providers: { backup: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        RunReconciliation: { Enabled: true, HeartbeatInterval: '100ms', OrphanThreshold: '600ms', ScanInterval: '150ms' },
      },
    });
    const created = await reconciling.request('POST', '/api/agents', {
      body: { name: 'patient', model: { provider: 'backup', model: 'hanging' } },
    });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await reconciling?.stop();
  });

  it('closes a run whose process stopped beating as Failed/orphaned, and leaves a live run alone', async () => {
    const { db } = await reconciling.openStore<RunDatabase>('runs', runMigrations);
    const orphanId = randomUUID();
    await createRunRepository(db).insert('default', {
      id: orphanId,
      agentName: 'patient',
      agentVersion: 1,
      sessionId: null,
      kind: 'Interactive',
      isStreaming: true,
      rootRunId: orphanId,
      parentRunId: null,
      depth: 0,
      userId: null,
      labels: {},
    });
    await db
      .updateTable('runs')
      .set({ heartbeat_at: new Date(Date.now() - 60_000) })
      .where('id', '=', orphanId)
      .execute();

    const live = fetch(`${reconciling.url}/api/agents/patient/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'wait' }),
    });
    const liveRun = await runningRun(reconciling, 'patient', orphanId);
    await new Promise((resolve) => setTimeout(resolve, 1200)); // two thresholds: the live run keeps beating

    expect((await reconciling.request('GET', `/api/runs/${orphanId}`)).body).toMatchObject({
      status: 'Failed',
      errorType: 'orphaned',
      completedAt: expect.any(String),
    });
    const events = await fetch(`${reconciling.url}/api/runs/${orphanId}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    expect(await events.text()).toContain('event: run.failed');
    expect((await reconciling.request('GET', `/api/runs/${liveRun.id}`)).body.status).toBe('Running');
    expect((await reconciling.request('POST', `/api/runs/${liveRun.id}/cancel`)).status).toBe(202);
    await (await live).text();
  });
});
