import { QUOTA_CHANGES_CHANNEL } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import type { Logger } from '@hangar/platform';
import type { QuotaRepository, QuotaRuleRow } from './quota.repository.js';

/** How long a tenant's rules are trusted: the longest a changed rule takes to reach threshold notices when its announcement is lost. */
export const QUOTA_RULE_CACHE_MS = 30_000;

/**
 * A tenant's quota rules as threshold notices read them after every counted run event: kept per
 * tenant until a change of its rules is announced (governance announces before it answers the
 * change) or the TTL passes, so counting a run's events reads no rule from the store.
 */
export function createQuotaRuleCache(deps: { quotas: Pick<QuotaRepository, 'rules'>; pubsub: PubSub; logger: Logger }) {
  const cache = createAnnouncedCache<QuotaRuleRow[]>({
    pubsub: deps.pubsub,
    channel: QUOTA_CHANGES_CHANNEL,
    ttlMs: QUOTA_RULE_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `quota rule changes cannot be heard; notices follow a change within ${QUOTA_RULE_CACHE_MS} ms`),
  });
  return {
    /** The tenant's rules covering `agentName` (a rule of no agent covers every agent), ordered by name. */
    async rules(tenantId: string, agentName: string): Promise<QuotaRuleRow[]> {
      const rules = await cache.get(tenantId, () => deps.quotas.rules(tenantId));
      return rules.filter((rule) => rule.agentName === null || rule.agentName === agentName);
    },
    /** This process changed the tenant's rules: its own reads see the change before the announcement returns. */
    forget: cache.forget,
    start: cache.start,
    stop: cache.stop,
  };
}
