import { QUOTA_CHANGES_CHANNEL } from '@hangar/contracts';
import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { createQuotaRuleCache } from '../src/quota-rule-cache.js';
import type { QuotaRepository, QuotaRuleRow } from '../src/quota.repository.js';

const logger = createLogger({ name: 'test', level: 'silent' });
const rule = (name: string, agentName: string | null): QuotaRuleRow => ({ name, metric: 'Runs', period: 'Day', limit: 10, agentName });

describe('the quota rules threshold notices read', () => {
  function setUp(stored: Map<string, QuotaRuleRow[]>) {
    const pubsub = createInProcessPubSub();
    const reads: string[] = [];
    const quotas = strictFake<Pick<QuotaRepository, 'rules'>>('quotas', {
      async rules(tenantId, agentName) {
        // The cache asks for the tenant's every rule and picks the agent's itself.
        expect(agentName).toBeUndefined();
        reads.push(tenantId);
        return stored.get(tenantId) ?? [];
      },
    });
    const cache = createQuotaRuleCache({ quotas, pubsub, logger });
    const announce = (tenantId: string) => pubsub.publish(QUOTA_CHANGES_CHANNEL, JSON.stringify({ id: tenantId }));
    return { cache, reads, announce };
  }

  it('reads a tenant’s rules once until a change of that tenant’s rules is announced', async () => {
    const stored = new Map([['acme', [rule('all', null)]]]);
    const { cache, reads, announce } = setUp(stored);
    await cache.start();
    expect(await cache.rules('acme', 'bot')).toEqual([rule('all', null)]);
    await cache.rules('acme', 'other');
    await cache.rules('globex', 'bot');
    stored.set('acme', [rule('all', null), rule('bots', 'bot')]);
    await announce('globex');
    expect(await cache.rules('acme', 'bot')).toEqual([rule('all', null)]);
    await announce('acme');
    expect(await cache.rules('acme', 'bot')).toEqual([rule('all', null), rule('bots', 'bot')]);
    expect(reads).toEqual(['acme', 'globex', 'acme']);
    await cache.stop();
  });

  it('reads the rules again at once in the process that changed them, before any announcement', async () => {
    const stored = new Map([['acme', [rule('all', null)]]]);
    const { cache, reads } = setUp(stored);
    await cache.rules('acme', 'bot');
    stored.set('acme', []);
    cache.forget('acme');
    expect(await cache.rules('acme', 'bot')).toEqual([]);
    expect(reads).toEqual(['acme', 'acme']);
  });

  it('gives each agent the rules that cover it: its own and those of no agent', async () => {
    const { cache } = setUp(new Map([['acme', [rule('all', null), rule('bots', 'bot'), rule('helpers', 'helper')]]]));
    await cache.start();
    expect((await cache.rules('acme', 'helper')).map((each) => each.name)).toEqual(['all', 'helpers']);
    expect((await cache.rules('acme', 'nobody')).map((each) => each.name)).toEqual(['all']);
    await cache.stop();
  });
});
