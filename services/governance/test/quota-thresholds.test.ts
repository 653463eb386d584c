import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { createQuotaThresholds } from '../src/quota-thresholds.js';
import type { QuotaRepository, QuotaRuleRow } from '../src/quota.repository.js';

/** The notice rules with strict fakes: which thresholds a usage reaches, once per window, and who is told what. */

const RULE: QuotaRuleRow = { name: 'daily', metric: 'Tokens', period: 'Day', limit: 100, agentName: null };
const EVENT = { tenantId: 't1', agentName: 'bot', rootRunId: 'root-1', at: new Date('2026-11-25T10:00:00Z') };

function thresholdsWith(used: number, options: { noticed?: number[]; recorded?: (percent: number) => boolean } = {}) {
  const offered: number[] = [];
  const announced: number[] = [];
  const thresholds = createQuotaThresholds({
    quotas: strictFake<Pick<QuotaRepository, 'rules' | 'used' | 'noticed' | 'recordNotice'>>('quotas', {
      rules: async () => [RULE, { ...RULE, name: 'runs', metric: 'Runs' }],
      used: async () => used,
      noticed: async () => options.noticed ?? [],
      recordNotice: async (_tenant, _rule, _window, percent) => options.recorded?.(percent) ?? true,
    }),
    percents: [100, 80, 80, 0],
    timeZone: 'UTC',
    offer: async (notice, context) => {
      expect(context).toMatchObject({
        tenantId: 't1',
        rootRunId: 'root-1',
        noticeKey: `t1:daily:2026-11-25T00:00:00.000Z:${notice.percent}`,
      });
      offered.push(notice.percent);
    },
    announce: async (notice) => {
      expect(notice).toEqual({ quota: 'daily', percent: notice.percent, limit: 100, used, resetsAt: '2026-11-26T00:00:00.000Z' });
      announced.push(notice.percent);
    },
  });
  return { thresholds, offered, announced };
}

describe('quota threshold notices', () => {
  it('announce nothing below the lowest threshold, and only rules of the counted metric', async () => {
    const { thresholds, offered } = thresholdsWith(79);
    await thresholds.check(EVENT, ['Tokens']);
    expect(offered).toEqual([]);
  });

  it('announce each threshold a step reaches, lowest first (duplicates and 0 in the setting ignored)', async () => {
    const { thresholds, offered, announced } = thresholdsWith(120);
    await thresholds.check(EVENT, ['Tokens']);
    expect([offered, announced]).toEqual([
      [80, 100],
      [80, 100],
    ]);
  });

  it('skip thresholds already announced in the window', async () => {
    const { thresholds, offered } = thresholdsWith(120, { noticed: [80] });
    await thresholds.check(EVENT, ['Tokens']);
    expect(offered).toEqual([100]);
  });

  it('offer to webhooks again but audit once when another instance recorded the notice first', async () => {
    const { thresholds, offered, announced } = thresholdsWith(90, { recorded: () => false });
    await thresholds.check(EVENT, ['Tokens']);
    expect([offered, announced]).toEqual([[80], []]);
  });
});

describe('quota threshold notices on cached rules', () => {
  it('decide a reached threshold by the rule as stored, not by a cached copy a change outdated', async () => {
    const offered: Array<{ percent: number; limit: number }> = [];
    const stored = { ...RULE, limit: 200 };
    const thresholds = createQuotaThresholds({
      quotas: strictFake<Pick<QuotaRepository, 'rules' | 'used' | 'noticed' | 'recordNotice'>>('quotas', {
        rules: async () => [stored],
        used: async () => 120,
        noticed: async () => [],
        recordNotice: async () => true,
      }),
      // The cache still holds the limit before the change: 120 of 100 would reach 80 % and 100 %.
      rules: async () => [RULE],
      percents: [50, 80, 100],
      timeZone: 'UTC',
      offer: async (notice) => void offered.push({ percent: notice.percent, limit: notice.limit }),
      announce: async () => {},
    });
    await thresholds.check(EVENT, ['Tokens']);
    expect(offered).toEqual([{ percent: 50, limit: 200 }]);
  });

  it('read nothing more from the store while the cached rules reach no threshold', async () => {
    const thresholds = createQuotaThresholds({
      // Strict: the store's rules (or anything but usage) would fail the test.
      quotas: strictFake<Pick<QuotaRepository, 'rules' | 'used' | 'noticed' | 'recordNotice'>>('quotas', { used: async () => 10 }),
      rules: async () => [RULE],
      percents: [80],
      timeZone: 'UTC',
      offer: async () => expect.unreachable(),
      announce: async () => expect.unreachable(),
    });
    await thresholds.check(EVENT, ['Tokens']);
  });
});
