import { createQuotaRepository, governanceMigrations, type CountedEvent, type GovernanceDatabase } from '@hangar/governance';
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

  const countOne = async (event: Omit<CountedEvent, 'amounts'>, amounts: CountedEvent['amounts']) =>
    (await quotas.countEvents([{ ...event, amounts }])).size === 1;

  it('counts each run event once, by UTC hour, and sums a window for one agent or all', async () => {
    const event = {
      runId: '00000000-0000-4000-8000-000000000001',
      seq: 1,
      tenantId: 't1',
      agentName: 'bot',
      at: at('2026-11-22T10:15:00Z'),
    };
    expect(await countOne(event, [{ metric: 'Tokens', amount: 40 }])).toBe(true);
    expect(await countOne(event, [{ metric: 'Tokens', amount: 40 }])).toBe(false);
    await countOne({ ...event, seq: 2, at: at('2026-11-22T10:59:00Z') }, [{ metric: 'Tokens', amount: 2.5 }]);
    await countOne({ ...event, seq: 3, agentName: 'helper', at: at('2026-11-22T11:01:00Z') }, [{ metric: 'Tokens', amount: 7 }]);
    await countOne({ ...event, seq: 4, tenantId: 't2' }, [{ metric: 'Tokens', amount: 1000 }]);

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
    expect(await countOne(finished, amounts)).toBe(true);
    expect(await countOne(finished, amounts)).toBe(false);
    expect(await quotas.used('t3', 'Tokens', 'bot', ...day)).toBe(12);
    expect(await quotas.used('t3', 'Cost', 'bot', ...day)).toBe(0.25);
  });

  it('counts a batch in one call: each event once, even when the batch holds it twice or it was counted before', async () => {
    const runId = '00000000-0000-4000-8000-0000000000b1';
    const base = { runId, tenantId: 't4', agentName: 'bot', at: at('2026-11-22T10:15:00Z') };
    expect(await countOne({ ...base, seq: 1 }, [{ metric: 'Runs', amount: 1 }])).toBe(true);
    const counted = await quotas.countEvents([
      { ...base, seq: 1, amounts: [{ metric: 'Runs', amount: 1 }] }, // counted before
      {
        ...base,
        seq: 5,
        amounts: [
          { metric: 'Tokens', amount: 30 },
          { metric: 'Cost', amount: 0.5 },
        ],
      },
      {
        ...base,
        seq: 5,
        amounts: [
          { metric: 'Tokens', amount: 30 },
          { metric: 'Cost', amount: 0.5 },
        ],
      }, // redelivered in the same batch
      { ...base, runId: '00000000-0000-4000-8000-0000000000b2', seq: 1, amounts: [{ metric: 'Runs', amount: 1 }] },
      {
        ...base,
        runId: '00000000-0000-4000-8000-0000000000b3',
        seq: 1,
        agentName: 'helper',
        at: at('2026-11-22T11:30:00Z'),
        amounts: [{ metric: 'Runs', amount: 1 }],
      },
    ]);
    expect([...counted].sort()).toEqual([`${runId}:5`, '00000000-0000-4000-8000-0000000000b2:1', '00000000-0000-4000-8000-0000000000b3:1']);
    const day = [at('2026-11-22T00:00:00Z'), at('2026-11-23T00:00:00Z')] as const;
    expect(await quotas.used('t4', 'Runs', 'bot', ...day)).toBe(2);
    expect(await quotas.used('t4', 'Runs', null, ...day)).toBe(3);
    expect(await quotas.used('t4', 'Runs', null, at('2026-11-22T11:00:00Z'), at('2026-11-22T12:00:00Z'))).toBe(1);
    expect(await quotas.used('t4', 'Tokens', 'bot', ...day)).toBe(30);
    expect(await quotas.used('t4', 'Cost', 'bot', ...day)).toBe(0.5);
    expect((await quotas.countEvents([])).size).toBe(0);
  });
});
