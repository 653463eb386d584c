import type { Caller, Logger } from '@hangar/platform';
import type { Subscription } from '@hangar/messaging';
import type { TenantProvider } from '../clients/ports.js';
import { channels, type TypedPubSub } from '../events/channels.js';

/** How long an executor trusts a tenant's providers: the longest a change takes when its announcement is lost. */
export const TENANT_PROVIDERS_CACHE_MS = 30_000;
const MAX_CACHED_TENANTS = 10_000;

/**
 * A tenant's own provider bindings (API.md "Tenants"), asked of governance and cached per tenant;
 * a change announced over pub/sub drops it at once. When governance cannot answer, the last known
 * bindings stand; with none known the run is refused (503) rather than sent to the global provider
 * the tenant replaced.
 */
export function createTenantProviders(deps: {
  fetch: (caller: Caller) => Promise<Record<string, TenantProvider>>;
  pubsub: TypedPubSub;
  logger: Logger;
}) {
  const known = new Map<string, { providers: Record<string, TenantProvider>; until: number }>();
  let subscription: Subscription | undefined;
  let changesHeard = 0;

  return {
    async of(caller: Caller): Promise<Record<string, TenantProvider>> {
      const cached = known.get(caller.tenantId);
      if (cached && cached.until > Date.now()) return cached.providers;
      const heardBefore = changesHeard;
      let providers;
      try {
        providers = await deps.fetch(caller);
      } catch (error) {
        if (!cached) throw error;
        deps.logger.warn(
          { err: (error as Error).message, tenantId: caller.tenantId },
          'tenant providers unavailable; the last known stand',
        );
        return cached.providers;
      }
      if (changesHeard === heardBefore) {
        known.delete(caller.tenantId);
        if (known.size >= MAX_CACHED_TENANTS) known.delete(known.keys().next().value!);
        known.set(caller.tenantId, { providers, until: Date.now() + TENANT_PROVIDERS_CACHE_MS });
      }
      return providers;
    },

    async start() {
      subscription = await deps.pubsub
        .subscribe(channels.tenantChanges(), ({ id }) => {
          changesHeard += 1;
          known.delete(id);
        })
        .catch((error) => {
          deps.logger.warn({ err: error }, `tenant changes cannot be heard; a change takes up to ${TENANT_PROVIDERS_CACHE_MS} ms`);
          return undefined;
        });
    },

    stop: () => subscription?.unsubscribe(),
  };
}

export type TenantProviders = ReturnType<typeof createTenantProviders>;
