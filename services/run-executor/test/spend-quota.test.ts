import { createLogger, HangarError, type Caller } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import type { ExceededQuota, SpendQuotaGateway } from '../src/clients/ports.js';
import { createSpendQuota } from '../src/spend/spend-quota.js';

const CALLER: Caller = { tenantId: 'acme', actor: 'test', role: 'Operator', scopes: [], labels: {} } as unknown as Caller;
const usedUp: ExceededQuota = { name: 'spend', metric: 'Cost', period: 'Day', limit: 1, used: 1.2, resetsAt: '2026-11-30T00:00:00.000Z' };
const unreachable = () => new HangarError('unavailable', 'governance is unreachable');

/** A gateway whose calls are only those a test gives it: any other call fails the test. */
function gateway(calls: Partial<SpendQuotaGateway>): SpendQuotaGateway {
  return {
    admit: calls.admit ?? (async () => expect.fail('admit was not expected')),
    count: calls.count ?? (async () => expect.fail('count was not expected')),
  };
}

function spendQuota(calls: Partial<SpendQuotaGateway>, quotas: { Enabled?: boolean; AllowOnStoreFailure?: boolean } = {}) {
  const warnings: string[] = [];
  const logger = createLogger({ name: 'spend-test', level: 'silent' });
  logger.warn = ((_fields: unknown, message: string) => void warnings.push(message)) as typeof logger.warn;
  const settings = { Quotas: { Enabled: true, AllowOnStoreFailure: true, ...quotas } } as never;
  return { spend: createSpendQuota({ gateway: gateway(calls), logger, settings }), warnings };
}

describe('quotas of spend outside any run', () => {
  it('refuses with 429 quota_exceeded naming the used-up rule', async () => {
    const { spend } = spendQuota({ admit: async () => usedUp });
    expect(await spend.admit(CALLER).catch((error) => error)).toMatchObject({
      status: 429,
      errorType: 'quota_exceeded',
      extensions: { quota: 'spend', limit: 1, used: 1.2, resetsAt: usedUp.resetsAt },
    });
    expect(await spendQuota({ admit: async () => undefined }).spend.admit(CALLER)).toBeUndefined();
  });

  it('does not ask while Quotas:Enabled is false', async () => {
    // Strict, with no store failure allowed: a call to the gateway would be thrown, not admitted.
    expect(await spendQuota({}, { Enabled: false, AllowOnStoreFailure: false }).spend.admit(CALLER)).toBeUndefined();
  });

  it('admits when governance cannot answer, unless Quotas:AllowOnStoreFailure is false', async () => {
    const down = async () => {
      throw unreachable();
    };
    const lenient = spendQuota({ admit: down });
    expect(await lenient.spend.admit(CALLER)).toBeUndefined();
    expect(lenient.warnings).toEqual(['quota store unavailable; spend admitted (Quotas:AllowOnStoreFailure)']);
    expect(
      await spendQuota({ admit: down }, { AllowOnStoreFailure: false })
        .spend.admit(CALLER)
        .catch((error) => error),
    ).toMatchObject({
      status: 503,
    });
  });

  it('counts a priced spend once under a fresh id, and nothing without a price', async () => {
    const counted: Array<{ id: string; cost: number; at: Date }> = [];
    const { spend } = spendQuota({ count: async (_caller, each) => void counted.push(each) });
    await spend.count(CALLER, 0.25);
    await spend.count(CALLER, 0.5);
    await spend.count(CALLER, null);
    await spend.count(CALLER, 0);
    expect(counted.map((each) => each.cost)).toEqual([0.25, 0.5]);
    expect(counted[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(counted[0].id).not.toBe(counted[1].id);
    // Counted whether or not quotas refuse anything now, as run usage is.
    const off = spendQuota({ count: async () => void counted.push({ id: 'off', cost: 1, at: new Date() }) }, { Enabled: false });
    await off.spend.count(CALLER, 1);
    expect(counted).toHaveLength(3);
  });

  it('counts again while governance is away for a moment, and logs a count it cannot make instead of failing the caller', async () => {
    const tried: string[] = [];
    const flaky = spendQuota({
      count: async (_caller, { id }) => {
        tried.push(id);
        if (tried.length === 1) throw unreachable();
      },
    });
    await flaky.spend.count(CALLER, 0.1);
    // The same id again: counted once however often it is sent.
    expect(tried).toHaveLength(2);
    expect(tried[1]).toBe(tried[0]);
    expect(flaky.warnings).toEqual([]);

    const refusing = spendQuota({
      count: async () => {
        throw new HangarError('validation', 'the spend is not valid');
      },
    });
    await expect(refusing.spend.count(CALLER, 0.1)).resolves.toBeUndefined();
    expect(refusing.warnings).toEqual(['spend not counted toward quotas']);
  });
});
