import { QUOTA_CHANGES_CHANNEL } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import type { Caller, Logger } from '@hangar/platform';
import type { ExceededQuota, QuotaAdmission } from './ports.js';

/** How long an executor trusts that no rule covers an agent: the longest a new rule takes to apply when its announcement is lost. */
export const QUOTA_COVERAGE_CACHE_MS = 30_000;

/** Governance's answer to an admission: the used-up rule if any, and whether any rule covers the agent at all. */
export type GovernanceAdmission = (caller: Caller, agentName: string) => Promise<{ exceeded?: ExceededQuota; governed: boolean }>;

/**
 * Quota admission that asks governance only for agents some rule covers: an agent no rule covers
 * is admitted the same way every time until the tenant's rules change, which governance announces
 * before it answers the change. Per tenant, the agents governance said no rule covers are kept.
 */
export function createQuotaCoverage(deps: { admitRun: GovernanceAdmission; pubsub: PubSub; logger: Logger }) {
  const cache = createAnnouncedCache<Set<string>>({
    pubsub: deps.pubsub,
    channel: QUOTA_CHANGES_CHANNEL,
    ttlMs: QUOTA_COVERAGE_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `quota rule changes cannot be heard; a new rule applies within ${QUOTA_COVERAGE_CACHE_MS} ms`),
  });
  const admitRun: QuotaAdmission = async (caller, agentName) => {
    // The set of this tenant as it was before asking: an announcement meanwhile makes it stale, so
    // what is learnt from an answer that predates a new rule is not used after the announcement.
    const uncovered = await cache.get(caller.tenantId, async () => new Set<string>());
    if (uncovered.has(agentName)) return undefined;
    const decision = await deps.admitRun(caller, agentName);
    if (!decision.governed) uncovered.add(agentName);
    return decision.exceeded;
  };
  return { admitRun, start: cache.start, stop: cache.stop };
}
