import { allInOneModules } from '@hangar/all-in-one';
import { parseSseFrames, startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC Agents 13: a registered content guard (ContentGuard:Pattern) blocks denied terms and masks personal data. */

let mock: MockOpenAI;
let buffered: HangarUnderTest;
let streaming: HangarUnderTest;

const GUARD = { Pattern: { DeniedTerms: ['forbidden project', 'secret-sauce'], MaskedPii: ['Email', 'CreditCard', 'Phone'] } };

async function sse(target: HangarUnderTest, message: string, agentName = 'guarded') {
  const response = await fetch(`${target.url}/api/agents/${agentName}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  expect(response.status).toBe(200);
  return parseSseFrames(await response.text());
}

const json = (target: HangarUnderTest, message: string, key: string) =>
  target.request('POST', '/api/agents/guarded/run', { body: { message }, headers: { 'idempotency-key': key } });

beforeAll(async () => {
  mock = await startMockOpenAI();
  // Echoes the user; says what it is told to say after "say:"; "leak it" makes it say a denied term.
  mock.script('guarded-model', (request) => {
    const last = String([...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '');
    // Its chunks 30 ms apart: chunks that arrive together reach a run as one text delta, and 5 ms
    // was close enough for a loaded CI machine (split shape) to join the four before the term.
    if (last.includes('leak it')) return { text: 'well, here is the secret-sauce: ketchup', chunkDelayMs: 30 };
    return { text: last.includes('say:') ? last.slice(last.indexOf('say:') + 4).trim() : `you said: ${last}` };
  });
  const providers = { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } } };
  buffered = await startHangar({ modules: allInOneModules(), overrides: { ...providers, ContentGuard: GUARD } });
  streaming = await startHangar({
    modules: allInOneModules(),
    overrides: { ...providers, ContentGuard: { ...GUARD, BufferStreamingOutput: false } },
  });
  for (const target of [buffered, streaming]) {
    const created = await target.request('POST', '/api/agents', {
      body: { name: 'guarded', model: { provider: 'mock', model: 'guarded-model' } },
    });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await Promise.all([buffered?.stop(), streaming?.stop()]);
  await mock?.close();
});

describe('content guard on input', () => {
  it('blocks a request with a denied term: SSE error frame, JSON 422, the run failed content_blocked, no model call', async () => {
    const calls = mock.callsTo('guarded-model');
    const frames = await sse(buffered, 'Tell me about the FORBIDDEN   project'.replace('   ', ' '));
    expect(frames.map((frame) => frame.event)).toEqual(['run', 'error']);
    expect(frames[1].data).toMatchObject({ errorType: 'content_blocked' });
    const record = (await buffered.request('GET', `/api/runs/${frames[0].data.runId}`)).body;
    expect(record).toMatchObject({ status: 'Failed', errorType: 'content_blocked' });

    const refused = await json(buffered, 'the secret-sauce recipe please', 'guard-in-1');
    expectProblem(refused, 422, 'content_blocked');
    expect(refused.body.runId).toEqual(expect.any(String));
    expect(mock.callsTo('guarded-model')).toBe(calls);
  });

  it('masks personal data before the model, the record and the session see it', async () => {
    const frames = await sse(buffered, 'write to jane.doe@example.com, card 4111 1111 1111 1111, phone +1 (415) 555-0100; order 12345');
    const sent = mock.requests.filter((request) => request.model === 'guarded-model').at(-1)!;
    const userText = String(sent.messages.find((message) => message.role === 'user')?.content);
    expect(userText).toBe('write to [redacted], card [redacted], phone [redacted]; order 12345');
    const input = (await buffered.request('GET', `/api/runs/${frames[0].data.runId}/input`)).body;
    expect(JSON.stringify(input)).not.toContain('jane.doe');
    expect(JSON.stringify(input)).not.toContain('4111');
  });

  it('leaves a card-like number that fails the Luhn check alone, and whole words only', async () => {
    const frames = await sse(buffered, 'ticket 1234 5678 9012 3456 about the forbidden projector');
    expect(frames.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    const sent = mock.requests.filter((request) => request.model === 'guarded-model').at(-1)!;
    expect(String(sent.messages.find((message) => message.role === 'user')?.content)).toContain('1234 5678 9012 3456');
  });
});

describe('content guard on output', () => {
  it('buffered: a blocked answer never reaches the caller; a masked one arrives in one piece', async () => {
    const blocked = await sse(buffered, 'say: the Secret-Sauce is ketchup');
    expect(blocked.map((frame) => frame.event)).toEqual(['run', 'error']);
    expect(blocked[1].data.errorType).toBe('content_blocked');
    expectProblem(await json(buffered, 'say: secret-sauce again', 'guard-out-1'), 422, 'content_blocked');
    const events = await fetch(`${buffered.url}/api/runs/${blocked[0].data.runId}/events`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(await events.text()).not.toMatch(/ketchup/i);

    const masked = await sse(buffered, 'say: reach me at bob@example.org tomorrow');
    const deltas = masked.filter((frame) => frame.event === 'update' && frame.data.type === 'text-delta');
    expect(deltas.map((frame) => frame.data.text)).toEqual(['reach me at [redacted] tomorrow']);
    expect(masked.at(-1)!.data.output.text).toBe('reach me at [redacted] tomorrow');
  });

  it('unbuffered (BufferStreamingOutput false): text streams as it comes, then the block arrives as an error frame', async () => {
    const frames = await sse(streaming, 'please leak it');
    const events = frames.map((frame) => frame.event);
    expect(events[0]).toBe('run');
    expect(events.filter((event) => event === 'update').length).toBeGreaterThan(1);
    expect(frames.at(-1)).toMatchObject({ event: 'error', data: { errorType: 'content_blocked' } });
  });
});
