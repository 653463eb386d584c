import { TENANT_CHANGES_CHANNEL, type GovernanceServiceDefinition } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import { classifyError, forbidden, type Caller, type CallerOptions, type Logger } from '@hangar/platform';
import type { Client } from 'nice-grpc';

/** How long a gateway trusts what it learnt of a tenant: the longest a change takes when its announcement is lost. */
export const TENANT_STATUS_CACHE_MS = 30_000;
/** How long a request waits for governance to say whether its tenant is enabled. */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Whether a tenant is enabled (API.md "Tenants"), asked of governance and cached; a change
 * announced over pub/sub makes every gateway ask again at once. While governance cannot answer
 * (unavailable, or silent for LOOKUP_TIMEOUT_MS), the last known state stands, and a tenant never
 * seen is let through (logged): a governance outage does not take the whole API down. Any other
 * failure is the request's error.
 */
export function createTenantStatus(deps: {
  governance: Client<typeof GovernanceServiceDefinition, CallerOptions>;
  pubsub: PubSub;
  systemCaller: Caller;
  logger: Logger;
}) {
  const cache = createAnnouncedCache<boolean>({
    pubsub: deps.pubsub,
    channel: TENANT_CHANGES_CHANNEL,
    ttlMs: TENANT_STATUS_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `tenant changes cannot be heard; a change takes up to ${TENANT_STATUS_CACHE_MS} ms`),
  });
  const unavailable = (tenantId: string) => (error: unknown) =>
    deps.logger.warn({ err: (error as Error).message, tenantId }, 'tenant status unavailable; its last known state stands');

  async function enabled(tenantId: string): Promise<boolean> {
    const load = async () =>
      (await deps.governance.getTenant({ id: tenantId }, { caller: deps.systemCaller, signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) }))
        .tenant!.enabled;
    try {
      return await cache.get(tenantId, load, unavailable(tenantId));
    } catch (error) {
      if (!isOutage(error)) throw error;
      unavailable(tenantId)(error);
      return true;
    }
  }

  return {
    /** Refuses a disabled tenant: 403 `tenant_disabled`. */
    async requireEnabled(tenantId: string): Promise<void> {
      if (!(await enabled(tenantId))) throw forbidden(`tenant "${tenantId}" is disabled`, 'tenant_disabled');
    },
    start: cache.start,
    stop: cache.stop,
  };
}

export type TenantStatus = ReturnType<typeof createTenantStatus>;

/** Governance is away or silent (not: it answered with an error). */
const isOutage = (error: unknown) =>
  classifyError(error)?.status === 503 || ['AbortError', 'TimeoutError'].includes((error as Error)?.name);
