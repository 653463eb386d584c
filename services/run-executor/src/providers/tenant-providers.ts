import { TENANT_CHANGES_CHANNEL } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import type { Caller, Logger } from '@hangar/platform';
import type { TenantProvider, TenantProviderSource } from '../clients/ports.js';

/** How long an executor trusts a tenant's providers: the longest a change takes when its announcement is lost. */
export const TENANT_PROVIDERS_CACHE_MS = 30_000;

/**
 * A tenant's own provider bindings (API.md "Tenants"), asked of governance and cached per tenant;
 * a change announced over pub/sub drops them at once. When governance cannot answer, the last
 * known bindings stand; with none known the run is refused (503) rather than sent to the global
 * provider the tenant replaced.
 */
export function createTenantProviders(deps: { fetch: TenantProviderSource; pubsub: PubSub; logger: Logger }) {
  const cache = createAnnouncedCache<Record<string, TenantProvider>>({
    pubsub: deps.pubsub,
    channel: TENANT_CHANGES_CHANNEL,
    ttlMs: TENANT_PROVIDERS_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `tenant changes cannot be heard; a change takes up to ${TENANT_PROVIDERS_CACHE_MS} ms`),
  });
  return {
    of: (caller: Caller) =>
      cache.get(
        caller.tenantId,
        () => deps.fetch(caller),
        (error) =>
          deps.logger.warn(
            { err: (error as Error).message, tenantId: caller.tenantId },
            'tenant providers unavailable; the last known stand',
          ),
      ),
    start: cache.start,
    stop: cache.stop,
  };
}
