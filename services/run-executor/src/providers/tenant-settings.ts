import { TENANT_CHANGES_CHANNEL } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import type { Caller, Logger } from '@hangar/platform';
import type { TenantSettings, TenantSettingsSource } from '../clients/ports.js';

/** How long an executor trusts what it learnt of a tenant: the longest a change takes when its announcement is lost. */
export const TENANT_SETTINGS_CACHE_MS = 30_000;

/**
 * Whether a tenant is enabled and its own provider bindings (API.md "Tenants"), asked of
 * governance and cached per tenant; a change announced over pub/sub has them asked again at once.
 * When governance cannot answer, the last known stand; with none known the run is refused (503)
 * rather than sent to the global provider the tenant may have replaced.
 */
export function createTenantSettings(deps: { fetch: TenantSettingsSource; pubsub: PubSub; logger: Logger }) {
  const cache = createAnnouncedCache<TenantSettings>({
    pubsub: deps.pubsub,
    channel: TENANT_CHANGES_CHANNEL,
    ttlMs: TENANT_SETTINGS_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `tenant changes cannot be heard; a change takes up to ${TENANT_SETTINGS_CACHE_MS} ms`),
  });
  return {
    of: (caller: Caller) =>
      cache.get(
        caller.tenantId,
        () => deps.fetch(caller),
        (error) =>
          deps.logger.warn(
            { err: (error as Error).message, tenantId: caller.tenantId },
            'tenant settings unavailable; the last known stand',
          ),
      ),
    start: cache.start,
    stop: cache.stop,
  };
}
