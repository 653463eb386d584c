import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC Agents 11: after run authorization, quota; a used-up rule refuses the run with 429 before it starts. */

let mock: MockOpenAI;
let hangar: HangarUnderTest;
const acme = { 'x-hangar-tenant': 'acme' };

const run = (agentName: string, headers: Record<string, string> = {}) =>
  hangar.request('POST', `/api/agents/${agentName}/run`, {
    body: { message: 'count me' },
    headers: { 'idempotency-key': `q-${Math.random()}`, ...headers },
  });
const rules = async (headers: Record<string, string> = {}) => (await hangar.request('GET', '/api/quotas', { headers })).body as any[];
const usedBy = (name: string, expected: number, headers: Record<string, string> = {}) =>
  eventually(
    async () => ((await rules(headers)).find((rule) => rule.name === name)?.used === expected ? true : undefined),
    `${name} to reach ${expected}`,
  );
const runCount = async (headers: Record<string, string> = {}) =>
  (await hangar.request('GET', '/api/runs?take=200&includeChildren=true', { headers })).body.length;

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('metered', [{ text: 'fifteen tokens', usage: { prompt: 10, completion: 5 } }]);
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Quotas: { TimeZone: 'Europe/Berlin' },
    },
  });
  const created = await hangar.request('POST', '/api/agents', {
    body: { name: 'metered', model: { provider: 'mock', model: 'metered' } },
    headers: acme,
  });
  expect(created.status, created.text).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('quota rules', () => {
  it('creates, replaces, lists and deletes rules, and refuses malformed ones', async () => {
    const created = await hangar.request('PUT', '/api/quotas/scratch', { body: { metric: 'Runs', period: 'Hour', limit: 5 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: 'scratch', metric: 'Runs', period: 'Hour', limit: 5, agentName: null, used: 0 });
    expect(Date.parse(created.body.resetsAt) - Date.parse(created.body.windowStart)).toBe(3_600_000);
    const replaced = await hangar.request('PUT', '/api/quotas/scratch', { body: { metric: 'Runs', period: 'Day', limit: 7 } });
    expect([replaced.status, replaced.body.limit, replaced.body.period]).toEqual([200, 7, 'Day']);
    expect((await rules()).map((rule) => rule.name)).toEqual(['scratch']);
    expect(await rules(acme)).toEqual([]);

    expectProblem(
      await hangar.request('PUT', '/api/quotas/bad', { body: { metric: 'Bananas', period: 'Day', limit: 1 } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('PUT', '/api/quotas/bad', { body: { metric: 'Runs', period: 'Day', limit: 0 } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('PUT', '/api/quotas/not%20ok', { body: { metric: 'Runs', period: 'Day', limit: 1 } }),
      400,
      'validation_failed',
    );
    expect((await hangar.request('DELETE', '/api/quotas/scratch')).status).toBe(204);
    expectProblem(await hangar.request('DELETE', '/api/quotas/scratch'), 404, 'not_found');
  });
});

describe('admission', () => {
  it('refuses runs of the covered agent once its runs are used up, with which quota and when it resets', async () => {
    await hangar.request('PUT', '/api/quotas/two-helper-runs', {
      body: { metric: 'Runs', period: 'Day', limit: 2, agentName: 'code-helper' },
    });
    expect((await run('code-helper')).status).toBe(200);
    expect((await run('code-helper')).status).toBe(200);
    await usedBy('two-helper-runs', 2);
    const before = await runCount();

    const refused = await run('code-helper');
    expectProblem(refused, 429, 'quota_exceeded');
    expect(refused.body).toMatchObject({ quota: 'two-helper-runs', limit: 2, used: 2, resetsAt: expect.any(String) });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(25 * 3600);
    const queued = await hangar.request('POST', '/api/agents/code-helper/run', {
      body: { message: 'later' },
      headers: { prefer: 'respond-async' },
    });
    expectProblem(queued, 429, 'quota_exceeded');
    expect(await runCount()).toBe(before);

    // Another agent, and another tenant, are not covered by the rule.
    expect(
      (await hangar.request('POST', '/api/agents', { body: { name: 'free-bot', model: { provider: 'demo', model: 'echo' } } })).status,
    ).toBe(201);
    expect((await run('free-bot')).status).toBe(200);
    expect((await run('code-helper', acme)).status).toBe(200);

    await hangar.request('DELETE', '/api/quotas/two-helper-runs');
    expect((await run('code-helper')).status).toBe(200);
  });

  it('counts the tokens runs report and refuses the next run once the window is spent', async () => {
    await hangar.request('PUT', '/api/quotas/tokens', {
      body: { metric: 'Tokens', period: 'Month', limit: 20, agentName: 'metered' },
      headers: acme,
    });
    expect((await run('metered', acme)).status).toBe(200);
    await usedBy('tokens', 15, acme);
    expect((await run('metered', acme)).status).toBe(200);
    await usedBy('tokens', 30, acme);
    const refused = await run('metered', acme);
    expectProblem(refused, 429, 'quota_exceeded');
    expect(refused.body).toMatchObject({ quota: 'tokens', limit: 20, used: 30 });
    expect(mock.callsTo('metered')).toBe(2);
  });
});
