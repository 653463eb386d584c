import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { parseSseFrames, startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * SPEC Limits "Core" `UtilityModel`: a session whose history no longer fits its agent's context
 * window (200 tokens, 160 allowed with the 0.2 reserve) has its oldest messages summarized by the
 * utility model for the run's prompt; the session keeps them all, and the run pays for the summary.
 */
let hangar: HangarUnderTest;
let mock: MockOpenAI;

/** About 30 tokens a turn: six turns are well past the 160 allowed. */
const TURN = (index: number) =>
  `Turn ${index}: the customer ACME-${index} ordered ${index * 7} crates of apples, delivered on day ${index}.`;
const SUMMARY = 'ACME customers ordered crates of apples on days 1 to 4.';

const runJson = async (agent: string, sessionId: string, message: string) => {
  const run = await hangar.request('POST', `/api/agents/${agent}/run`, {
    body: { message, sessionId },
    headers: { 'idempotency-key': randomBytes(6).toString('hex') },
  });
  expect(run.status, run.text).toBe(200);
  return run.body as { runId: string; cost: { total: number } | null; output: { text: string } };
};
const eventsOf = async (runId: string) => {
  const response = await fetch(`${hangar.url}/api/runs/${runId}/events`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  return parseSseFrames(await response.text()).map((frame) => frame.data as { type: string; data: Record<string, unknown> });
};
const systemOf = (request: MockOpenAI['requests'][number]) =>
  String(request.messages.find((message) => message.role === 'system')?.content ?? '');

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('small-window', () => ({ text: 'Noted.', usage: { prompt: 100, completion: 2 } }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url, Models: { 'small-window': { ContextWindowTokens: 200 } } } },
      UtilityModel: 'mock/summarizer',
      Preflight: { Enabled: true },
      Pricing: {
        Currency: 'EUR',
        mock: { summarizer: { Input: 1000, Output: 2000 }, 'small-window': { Input: 100, Output: 100 } },
      },
    },
  });
  const created = await hangar.request('POST', '/api/agents', {
    body: { name: 'clerk', model: { provider: 'mock', model: 'small-window' }, instructions: 'You keep the order book.' },
  });
  expect(created.status, created.text).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('history compaction', () => {
  it('sends a session that fits as it is, asking no utility model', async () => {
    await runJson('clerk', 'short-session', TURN(1));
    const second = await runJson('clerk', 'short-session', TURN(2));
    expect(mock.callsTo('summarizer')).toBe(0);
    expect((await eventsOf(second.runId)).some((event) => event.type === 'history.compacted')).toBe(false);
  });

  it('summarizes the oldest messages of a session past the window with the utility model, for the run’s prompt only', async () => {
    mock.script('summarizer', () => ({ text: SUMMARY, usage: { prompt: 120, completion: 15 } }));
    for (let index = 1; index <= 6; index++) await runJson('clerk', 'long-session', TURN(index));
    const summarized = mock.requests.filter((request) => request.model === 'summarizer');
    expect(summarized.length).toBeGreaterThan(0);
    // The first summary read the oldest turns; the run's model then got the summary instead of them.
    expect(JSON.stringify(summarized[0].messages)).toContain('ACME-1');
    const last = mock.requests.filter((request) => request.model === 'small-window').at(-1)!;
    // The summary is the conversation's first message, not an instruction: its words are the users', rephrased.
    expect(systemOf(last)).toBe('You keep the order book.');
    const [first, ...rest] = last.messages.filter((message) => message.role !== 'system');
    expect(first).toMatchObject({ role: 'user', content: expect.stringContaining(SUMMARY) });
    expect(JSON.stringify(rest)).not.toContain('ACME-1 ');
    expect(JSON.stringify(rest)).toContain('ACME-6');

    const latest = (await hangar.request('GET', '/api/runs?sessionId=long-session&take=1')).body[0];
    const compacted = (await eventsOf(latest.id)).find((event) => event.type === 'history.compacted');
    expect(compacted?.data).toMatchObject({
      provider: 'mock',
      model: 'summarizer',
      summarizedMessages: expect.any(Number),
      keptMessages: expect.any(Number),
      inputTokens: 120,
      outputTokens: 15,
    });
    expect(compacted!.data.summarizedMessages).toBeGreaterThan(0);
    // The summary is paid by the run (prices per million tokens): 120 × 1,000 + 15 × 2,000 beside its own turn, 100 × 100 + 2 × 100.
    expect(compacted!.data.cost).toBeCloseTo(0.15, 6);
    expect(latest.cost.total).toBeCloseTo(0.15 + 0.0102, 6);
    // The session keeps every message.
    const session = (await hangar.request('GET', '/api/sessions/long-session')).body;
    expect(session.messages).toHaveLength(12);
    expect(session.messages[0].content).toBe(TURN(1));
  });

  it('refuses a run whose new message leaves no room for the history even summarized, before any model is asked', async () => {
    mock.script('summarizer', () => ({ text: SUMMARY }));
    await runJson('clerk', 'crowded', TURN(1));
    const [summaries, turns] = [mock.callsTo('summarizer'), mock.callsTo('small-window')];
    const refused = await hangar.request('POST', '/api/agents/clerk/run', {
      body: { message: 'word '.repeat(130), sessionId: 'crowded' },
      headers: { 'idempotency-key': randomBytes(6).toString('hex') },
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body).toMatchObject({ errorType: 'context_window_exceeded', allowedPromptTokens: 160 });
    expect([mock.callsTo('summarizer'), mock.callsTo('small-window')]).toEqual([summaries, turns]);
  });

  it('sends the history whole when the utility model fails, saying so in an event', async () => {
    mock.script('summarizer', () => ({ status: 500, body: 'summarizer down' }));
    for (let index = 1; index <= 6; index++) await runJson('clerk', 'unsummarized', TURN(index));
    const latest = (await hangar.request('GET', '/api/runs?sessionId=unsummarized&take=1')).body[0];
    expect(latest.status).toBe('Completed');
    const failed = (await eventsOf(latest.id)).find((event) => event.type === 'history.compaction_failed');
    expect(failed?.data.message).toEqual(expect.any(String));
    const last = mock.requests.filter((request) => request.model === 'small-window').at(-1)!;
    expect(JSON.stringify(last.messages)).toContain('ACME-1 ');
  });
});
