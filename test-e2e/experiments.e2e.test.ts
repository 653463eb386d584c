import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI, type RecordedRequest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Evaluations and experiments": experiments split an agent's runs by version; a canary that scores low is rolled back. */

const acme = { 'x-hangar-tenant': 'acme' };
let hangar: HangarUnderTest;
let mock: MockOpenAI;

const lastUserText = (request: RecordedRequest) =>
  String([...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '');
const call = (method: string, path: string, body?: unknown) =>
  hangar.request(method, path, { headers: acme, ...(body !== undefined && { body }) });
const run = async (sessionId?: string) => {
  const answer = await hangar.request('POST', '/api/agents/assistant/run', {
    body: { message: 'help me', ...(sessionId && { sessionId }) },
    headers: { ...acme, 'idempotency-key': `run-${Math.random()}` },
  });
  expect(answer.status, answer.text).toBe(200);
  return (await call('GET', `/api/runs/${answer.body.runId}`)).body as { id: string; agentVersion: number; labels: Record<string, string> };
};

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('model-a', () => ({ text: 'A good answer.', usage: { prompt: 5, completion: 3 } }));
  mock.script('model-b', () => ({ text: 'A bad answer.', usage: { prompt: 5, completion: 3 } }));
  mock.script('judge', (request) => ({
    text: /Answer: A good/.test(lastUserText(request)) ? '{"score": 90, "reason": "helpful"}' : '{"score": 20, "reason": "unhelpful"}',
  }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      OnlineEvaluation: {
        Enabled: true,
        SampleRate: 1,
        JudgeAgent: 'judge',
        MinSampleSize: 3,
        LowScoreThreshold: 60,
        MaxScoresPerHour: 1000,
      },
      Canary: { AutoRollbackEnabled: true, ScanInterval: '500ms' },
      Hangar: { WebhookSecrets: { canary: 'a-webhook-secret-of-32-characters!!' } },
    },
  });
  const created = [
    await call('POST', '/api/agents', { name: 'judge', model: { provider: 'mock', model: 'judge' } }),
    await call('POST', '/api/agents', { name: 'assistant', model: { provider: 'mock', model: 'model-a' } }),
    await call('PUT', '/api/agents/assistant', { name: 'assistant', model: { provider: 'mock', model: 'model-b' } }),
    await call('PUT', '/api/webhooks/canary', {
      url: 'https://hooks.example.com/canary',
      events: ['canary.rolled-back'],
      secretKey: 'Hangar:WebhookSecrets:canary',
    }),
  ];
  for (const answer of created) expect(answer.status, answer.text).toBeLessThan(300);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('experiments', () => {
  it('refuses unknown versions, too few variants and a second running experiment of the agent', async () => {
    expectProblem(
      await call('PUT', '/api/experiments/bad', {
        agentName: 'assistant',
        variants: [
          { version: 1, weight: 1 },
          { version: 9, weight: 1 },
        ],
      }),
      404,
      'not_found',
    );
    expectProblem(
      await call('PUT', '/api/experiments/bad', { agentName: 'assistant', variants: [{ version: 1, weight: 1 }] }),
      400,
      'validation_failed',
    );
    expect((await call('GET', '/api/experiments/bad')).status).toBe(404);
    const first = await call('PUT', '/api/experiments/first', {
      agentName: 'assistant',
      variants: [
        { version: 1, weight: 1 },
        { version: 2, weight: 1 },
      ],
    });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ status: 'Draft', canary: null });
    expect(
      (
        await call('PUT', '/api/experiments/second', {
          agentName: 'assistant',
          variants: [
            { version: 1, weight: 1 },
            { version: 2, weight: 3 },
          ],
        })
      ).status,
    ).toBe(201);
    expect((await call('POST', '/api/experiments/first/start')).body.status).toBe('Running');
    expectProblem(await call('POST', '/api/experiments/second/start'), 409, 'conflict');
    expectProblem(
      await call('PUT', '/api/experiments/first', {
        agentName: 'assistant',
        variants: [
          { version: 1, weight: 1 },
          { version: 2, weight: 1 },
        ],
      }),
      409,
      'conflict',
    );
    expect((await call('POST', '/api/experiments/first/stop')).body).toMatchObject({ status: 'Stopped', reason: 'stopped by auth-token' });
    expect((await call('DELETE', '/api/experiments/second')).status).toBe(204);
    expect((await hangar.request('GET', '/api/experiments/first', { headers: { 'x-hangar-tenant': 'globex' } })).status).toBe(404);
  });

  it('splits runs by weight, keeps a session on its variant, labels each run, and compares the variants', async () => {
    const created = await call('PUT', '/api/experiments/ab', {
      agentName: 'assistant',
      variants: [
        { version: 1, weight: 1 },
        { version: 2, weight: 1 },
      ],
    });
    expect(created.status, created.text).toBe(201);
    expect((await call('POST', '/api/experiments/ab/start')).status).toBe(200);
    const runs = [];
    for (let index = 0; index < 24; index++) runs.push(await run());
    const versions = new Set(runs.map((one) => one.agentVersion));
    expect(versions).toEqual(new Set([1, 2]));
    for (const one of runs) expect(one.labels).toMatchObject({ experiment: 'ab', variant: String(one.agentVersion) });
    const session = [];
    for (let index = 0; index < 4; index++) session.push((await run('sticky-session')).agentVersion);
    expect(new Set(session).size).toBe(1);
    const results = await eventually(
      async () => {
        const answer = (await call('GET', '/api/experiments/ab/results')).body;
        return answer.variants.every((variant: { scored: number; runs: number }) => variant.scored === variant.runs) ? answer : undefined;
      },
      'every run of the experiment scored',
      20_000,
    );
    const [one, two] = results.variants;
    expect(one.runs + two.runs).toBe(28);
    expect(one).toMatchObject({ version: 1, meanScore: 90, failed: 0 });
    expect(two).toMatchObject({ version: 2, meanScore: 20, failed: 0 });
    expect((await call('POST', '/api/experiments/ab/stop')).body.status).toBe('Stopped');
    const after = await run();
    expect(after.agentVersion).toBe(2);
    expect(after.labels.experiment).toBeUndefined();
  });

  it('rolls a canary that scores low back to its baseline as a new version, audited and offered as a webhook', async () => {
    const created = await call('PUT', '/api/experiments/canary', {
      agentName: 'assistant',
      canary: { baselineVersion: 1, canaryVersion: 2, initialPercent: 50 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.variants).toEqual([
      { version: 1, weight: 50 },
      { version: 2, weight: 50 },
    ]);
    expect((await call('POST', '/api/experiments/canary/start')).status).toBe(200);
    const experiment = await eventually(
      async () => {
        await run();
        const now = (await call('GET', '/api/experiments/canary')).body;
        return now.status === 'RolledBack' ? now : undefined;
      },
      'the canary’s rollback',
      30_000,
    );
    expect(experiment.reason).toMatch(
      /^canary version 2 scored 20\.0 on average over \d+ runs, below OnlineEvaluation:LowScoreThreshold 60$/,
    );
    const versions = (await call('GET', '/api/agents/assistant/versions')).body;
    expect(versions.find((entry: { version: number }) => entry.version === 3)).toMatchObject({
      createdBy: 'canary',
      model: { model: 'model-a' },
    });
    expect((await run()).agentVersion).toBe(3);
    const audit = (await call('GET', '/api/audit?action=canary.rolled-back')).body;
    expect(audit.items ?? audit).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'canary.rolled-back', details: expect.objectContaining({ rolledBackToVersion: 3 }) }),
      ]),
    );
    const deliveries = await eventually(
      async () => {
        const listed = (await call('GET', '/api/webhooks/canary/deliveries')).body;
        return listed.length ? listed : undefined;
      },
      'the canary webhook',
      10_000,
    );
    expect(deliveries[0]).toMatchObject({ eventType: 'canary.rolled-back' });
  });
});
