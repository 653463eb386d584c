import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, startMockOpenAI, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 9, finding 8: with two worker slots, tenant A's two queued runs waiting for approval (a day by
 * default) held both, and tenant B's queued run waited for A's decisions. A run waiting for people
 * now gives its slot back; once decided it takes one again.
 */
let mock: MockOpenAI;
let hangar: HangarUnderTest;

const asTenant = (tenant: string) => ({ 'x-hangar-tenant': tenant });

async function queueRun(tenant: string, agent: string, message: string): Promise<string> {
  const queued = await hangar.request('POST', `/api/agents/${agent}/run`, {
    body: { message },
    headers: { ...asTenant(tenant), prefer: 'respond-async' },
  });
  expect(queued.status, queued.text).toBe(202);
  return queued.body.runId;
}

async function statusOf(tenant: string, runId: string): Promise<string> {
  return (await hangar.request('GET', `/api/runs/${runId}`, { headers: asTenant(tenant) })).body.status;
}

async function waitForStatus(tenant: string, runId: string, wanted: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if ((await statusOf(tenant, runId)) === wanted) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`run ${runId} is ${await statusOf(tenant, runId)}, not ${wanted}, after ${timeoutMs} ms`);
}

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('asks-for-clock', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    return result ? { text: `tool said ${JSON.stringify(result.content)}` } : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } };
  });
  mock.script('plain', () => ({ text: 'done' }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Approvals: { RequiredTools: ['clock'] },
      Scheduling: { MaxConcurrentJobs: 2, PollInterval: '100ms' },
    },
  });
  for (const tenant of ['tenant-a', 'tenant-b']) {
    for (const [name, model, tools] of [
      ['guarded', 'asks-for-clock', ['clock']],
      ['plain', 'plain', []],
    ] as const) {
      const created = await hangar.request('POST', '/api/agents', {
        body: { name, model: { provider: 'mock', model }, tools },
        headers: asTenant(tenant),
      });
      expect(created.status, created.text).toBe(201);
    }
  }
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('queued runs waiting for people', () => {
  it('hold no worker slot: tenant B’s queued run completes while tenant A has two runs awaiting approval', async () => {
    const waitingA = [await queueRun('tenant-a', 'guarded', 'time?'), await queueRun('tenant-a', 'guarded', 'time again?')];
    for (const runId of waitingA) await waitForStatus('tenant-a', runId, 'AwaitingApproval', 10_000);

    const runB = await queueRun('tenant-b', 'plain', 'hello');
    const tookMs = await waitForStatus('tenant-b', runB, 'Completed', 5_000);
    expect(tookMs).toBeLessThan(5_000);

    // Decided, A's runs take slots again and complete.
    for (const runId of waitingA) {
      const [approval] = (await hangar.request('GET', `/api/runs/${runId}/approvals`, { headers: asTenant('tenant-a') })).body;
      const decided = await hangar.request('POST', `/api/runs/${runId}/approvals/${approval.id}`, {
        body: { approved: true },
        headers: asTenant('tenant-a'),
      });
      expect(decided.status, decided.text).toBe(200);
    }
    for (const runId of waitingA) await waitForStatus('tenant-a', runId, 'Completed', 10_000);
  }, 40_000);
});
