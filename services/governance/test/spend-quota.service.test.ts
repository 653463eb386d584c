import {
  createAuditRepository,
  createGovernanceService,
  createIdempotencyRepository,
  createQuotaRepository,
  governanceMigrations,
  type GovernanceDatabase,
} from '@hangar/governance';
import type { Caller } from '@hangar/platform';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const caller = (tenantId: string) => ({ tenantId, actor: 'test', role: 'Operator', scopes: [], labels: {} }) as unknown as Caller;

describe.each(SQL_ENGINES)('quotas of spend outside any run on %s', (engine) => {
  let fixture: EngineFixture;
  let quotas: ReturnType<typeof createQuotaRepository>;
  let service: ReturnType<typeof createGovernanceService>;
  const checked: Array<{ tenantId: string; agentName: string; metrics: string[] }> = [];

  beforeAll(async () => {
    fixture = await openEngine(engine);
    const { db } = await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations);
    quotas = createQuotaRepository(db);
    service = createGovernanceService({
      audit: createAuditRepository(db),
      idempotency: createIdempotencyRepository(db),
      quotas,
      quotaSettings: { enabled: true, timeZone: 'UTC' },
      thresholds: {
        check: async (event, metrics) => void checked.push({ tenantId: event.tenantId, agentName: event.agentName, metrics }),
      },
      announceQuotaChange: async () => undefined,
    });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('counts spend once per id under Cost rules for every agent only, and admits until one of those is used up', async () => {
    const tenant = caller(`spend-${engine}`);
    await quotas.putRule(tenant.tenantId, { name: 'bot-spend', metric: 'Cost', period: 'Day', limit: 0.01, agentName: 'bot' });
    await quotas.putRule(tenant.tenantId, { name: 'tokens', metric: 'Tokens', period: 'Day', limit: 1, agentName: null });
    await quotas.putRule(tenant.tenantId, { name: 'spend', metric: 'Cost', period: 'Day', limit: 1, agentName: null });
    const spend = { id: '00000000-0000-4000-8000-00000000a001', cost: 0.6, at: new Date() };
    expect(await service.countSpend(tenant, spend)).toBe(true);
    expect(await service.countSpend(tenant, spend)).toBe(false);
    expect(checked.at(-1)).toEqual({ tenantId: tenant.tenantId, agentName: '', metrics: ['Cost'] });

    const usedOf = async (name: string) => (await service.listQuotaRules(tenant)).find((rule) => rule.name === name)!.used;
    expect(await usedOf('spend')).toBeCloseTo(0.6);
    expect(await usedOf('bot-spend')).toBe(0);
    expect(await usedOf('tokens')).toBe(0);
    // Runs of an agent see their own Cost rule only: spend without an agent is not theirs.
    expect(await service.admitRun(tenant, 'bot')).toEqual({ admitted: true, governed: true });

    // Used-up rules of an agent or of another metric are not about spend without an agent.
    await quotas.countEvents([
      {
        runId: '00000000-0000-4000-8000-00000000a0f1',
        seq: 1,
        tenantId: tenant.tenantId,
        agentName: 'bot',
        at: new Date(),
        amounts: [
          { metric: 'Cost', amount: 0.02 },
          { metric: 'Tokens', amount: 5 },
        ],
      },
    ]);
    expect(await usedOf('bot-spend')).toBeCloseTo(0.02);
    expect(await usedOf('tokens')).toBe(5);
    expect(await service.admitRun(tenant, 'bot')).toMatchObject({ admitted: false });
    expect(await service.admitSpend(tenant)).toEqual({ admitted: true });
    await service.countSpend(tenant, { ...spend, id: '00000000-0000-4000-8000-00000000a002', cost: 0.4 });
    const refused = await service.admitSpend(tenant);
    expect(refused).toMatchObject({ admitted: false, exceeded: { name: 'spend', metric: 'Cost', limit: 1 } });
    expect(await service.admitSpend(caller(`other-${engine}`))).toEqual({ admitted: true });
  });

  it('refuses a spend that is not valid and counts nothing of it', async () => {
    const tenant = caller(`invalid-${engine}`);
    await quotas.putRule(tenant.tenantId, { name: 'spend', metric: 'Cost', period: 'Day', limit: 1, agentName: null });
    const valid = { id: '00000000-0000-4000-8000-00000000b001', cost: 0.5, at: new Date() };
    for (const spend of [
      { ...valid, id: 'not-a-uuid' },
      { ...valid, cost: -1 },
      { ...valid, cost: Number.NaN },
      { ...valid, at: new Date(Number.NaN) },
    ])
      expect(await service.countSpend(tenant, spend).catch((error) => error)).toMatchObject({ status: 400 });
    expect(await service.countSpend(tenant, { ...valid, cost: 0 })).toBe(false);
    expect((await service.listQuotaRules(tenant))[0].used).toBe(0);
  });
});
