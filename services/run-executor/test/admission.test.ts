import { describe, expect, it } from 'vitest';
import type { ExceededQuota } from '../src/clients/ports.js';
import { CALLER, createHarness, textAnswer, toolCallAnswer } from './engine-harness.js';

const usedUp: ExceededQuota = { name: 'daily', metric: 'Runs', period: 'Day', limit: 2, used: 2, resetsAt: '2026-11-26T00:00:00.000Z' };
const request = { agentName: 'assistant', messages: [{ role: 'user', content: 'hi' }], parameters: [], isStreaming: true, attachments: [] };

/** Drains a run's updates; the refusal a run gets before it starts is thrown. */
async function startRun(harness: ReturnType<typeof createHarness>, agentName = 'assistant', sessionId?: string) {
  const updates = [];
  for await (const update of harness.engine.start(CALLER, { ...request, agentName, sessionId }, new AbortController().signal))
    updates.push(update);
  return updates;
}

describe('quota admission (SPEC Agents 11)', () => {
  it('refuses a run with a used-up rule (429 quota_exceeded) before anything is written or opened', async () => {
    const harness = createHarness({
      models: { 'fake/primary': [] },
      admitRun: async () => usedUp,
      sessions: {}, // a strict fake: opening the session would fail the test
    });
    const refusal = await startRun(harness, 'assistant', 's1').catch((error) => error);
    expect(refusal).toMatchObject({
      status: 429,
      errorType: 'quota_exceeded',
      extensions: { quota: 'daily', limit: 2, used: 2, resetsAt: usedUp.resetsAt },
    });
    expect(harness.stores.runs.size).toBe(0);
    expect(harness.stores.events).toHaveLength(0);
  });

  it('names the used-up quota even for an agent that does not exist (quota is checked first)', async () => {
    const harness = createHarness({ admitRun: async () => usedUp });
    expect(await startRun(harness, 'nobody').catch((error) => error)).toMatchObject({ status: 429 });
    const admitting = createHarness({ admitRun: async () => undefined });
    expect(await startRun(admitting, 'nobody').catch((error) => error)).toMatchObject({ status: 404 });
  });

  it('admits a tree once: its child runs are part of the root’s admission', async () => {
    const asked: string[] = [];
    const harness = createHarness({
      agent: { agents: ['helper'] },
      agents: [{ name: 'helper', model: { provider: 'fake', model: 'child' } }],
      models: {
        'fake/primary': [toolCallAnswer('call_helper', { message: 'help' }), textAnswer('done')],
        'fake/child': [textAnswer('helped')],
      },
      admitRun: async (_caller, agentName) => void asked.push(agentName),
    });
    const { run } = await harness.run();
    expect(run.status).toBe('Completed');
    expect(asked).toEqual(['assistant']);
  });

  it('lets a run through when governance cannot answer, unless Quotas:AllowOnStoreFailure is false', async () => {
    const down = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    };
    const lenient = createHarness({ models: { 'fake/primary': [textAnswer('hi')] }, admitRun: down });
    expect((await lenient.run()).run.status).toBe('Completed');
    const strict = createHarness({
      models: { 'fake/primary': [] },
      admitRun: down,
      config: { Quotas: { AllowOnStoreFailure: false } },
    });
    expect(await startRun(strict).catch((error) => error)).toMatchObject({ message: 'connect ECONNREFUSED' });
    expect(strict.stores.runs.size).toBe(0);
  });

  it('asks nothing when Quotas:Enabled is false', async () => {
    const harness = createHarness({
      models: { 'fake/primary': [textAnswer('hi')] },
      admitRun: async () => {
        throw new Error('admission asked although quotas are off');
      },
      config: { Quotas: { Enabled: false } },
    });
    expect((await harness.run()).run.status).toBe('Completed');
  });
});

describe('a disabled tenant (API.md "Tenants")', () => {
  it('gets no run: refused 403 tenant_disabled before anything is written', async () => {
    const harness = createHarness({
      models: { 'fake/primary': [] },
      tenantSettings: async () => ({ enabled: false, providers: {} }),
    });
    expect(await startRun(harness).catch((error) => error)).toMatchObject({ status: 403, errorType: 'tenant_disabled' });
    expect(harness.stores.runs.size).toBe(0);
  });
});
