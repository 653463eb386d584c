import { createQuotaRepository, governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.each(SQL_ENGINES)('quota repository on %s', (engine) => {
  let fixture: EngineFixture;
  let quotas: ReturnType<typeof createQuotaRepository>;
  const at = (iso: string) => new Date(iso);

  beforeAll(async () => {
    fixture = await openEngine(engine);
    quotas = createQuotaRepository((await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates then replaces a rule, lists the rules that cover an agent, deletes once', async () => {
    expect((await quotas.putRule('t1', { name: 'all', metric: 'Runs', period: 'Day', limit: 10, agentName: null })).created).toBe(true);
    expect((await quotas.putRule('t1', { name: 'all', metric: 'Runs', period: 'Day', limit: 12, agentName: null })).created).toBe(false);
    await quotas.putRule('t1', { name: 'bot-only', metric: 'Tokens', period: 'Hour', limit: 100, agentName: 'bot' });
    await quotas.putRule('t2', { name: 'other-tenant', metric: 'Cost', period: 'Month', limit: 1, agentName: null });
    expect((await quotas.rules('t1')).map((rule) => [rule.name, rule.limit])).toEqual([
      ['all', 12],
      ['bot-only', 100],
    ]);
    expect((await quotas.rules('t1', 'helper')).map((rule) => rule.name)).toEqual(['all']);
    expect((await quotas.rules('t1', 'bot')).map((rule) => rule.name)).toEqual(['all', 'bot-only']);
    expect(await quotas.deleteRule('t1', 'all')).toBe(true);
    expect(await quotas.deleteRule('t1', 'all')).toBe(false);
  });

  it('counts each run event once, by UTC hour, and sums a window for one agent or all', async () => {
    const event = {
      runId: '00000000-0000-4000-8000-000000000001',
      seq: 1,
      tenantId: 't1',
      agentName: 'bot',
      at: at('2026-11-22T10:15:00Z'),
    };
    expect(await quotas.count(event, [{ metric: 'Tokens', amount: 40 }])).toBe(true);
    expect(await quotas.count(event, [{ metric: 'Tokens', amount: 40 }])).toBe(false);
    await quotas.count({ ...event, seq: 2, at: at('2026-11-22T10:59:00Z') }, [{ metric: 'Tokens', amount: 2.5 }]);
    await quotas.count({ ...event, seq: 3, agentName: 'helper', at: at('2026-11-22T11:01:00Z') }, [{ metric: 'Tokens', amount: 7 }]);
    await quotas.count({ ...event, seq: 4, tenantId: 't2' }, [{ metric: 'Tokens', amount: 1000 }]);

    const day = [at('2026-11-22T00:00:00Z'), at('2026-11-23T00:00:00Z')] as const;
    expect(await quotas.used('t1', 'Tokens', 'bot', ...day)).toBe(42.5);
    expect(await quotas.used('t1', 'Tokens', null, ...day)).toBe(49.5);
    expect(await quotas.used('t1', 'Tokens', null, at('2026-11-22T11:00:00Z'), at('2026-11-22T12:00:00Z'))).toBe(7);
    expect(await quotas.used('t1', 'Runs', null, ...day)).toBe(0);

    // A finished run's event carries several amounts: each is added once.
    const finished = { ...event, seq: 9, tenantId: 't3' };
    const amounts = [
      { metric: 'Tokens' as const, amount: 12 },
      { metric: 'Cost' as const, amount: 0.25 },
    ];
    expect(await quotas.count(finished, amounts)).toBe(true);
    expect(await quotas.count(finished, amounts)).toBe(false);
    expect(await quotas.used('t3', 'Tokens', 'bot', ...day)).toBe(12);
    expect(await quotas.used('t3', 'Cost', 'bot', ...day)).toBe(0.25);
  });
});
