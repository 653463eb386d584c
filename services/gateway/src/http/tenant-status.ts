import { TENANT_CHANGES_CHANNEL, type GovernanceServiceDefinition, type TenantChange } from '@hangar/contracts';
import type { PubSub, Subscription } from '@hangar/messaging';
import { forbidden, type Caller, type CallerOptions, type Logger } from '@hangar/platform';
import type { Client } from 'nice-grpc';

/** How long a gateway trusts what it learnt of a tenant: the longest a change takes when its announcement is lost. */
export const TENANT_STATUS_CACHE_MS = 30_000;
const MAX_CACHED_TENANTS = 10_000;

interface Known {
  enabled: boolean;
  until: number;
}

/**
 * Whether a tenant is enabled (API.md "Tenants"), asked of governance and cached for
 * TENANT_STATUS_CACHE_MS; a change announced over pub/sub drops it from every gateway's cache at
 * once. While governance cannot answer, the last known state stands, and a tenant never seen is
 * let through (logged): a governance outage does not take the whole API down.
 */
export function createTenantStatus(deps: {
  governance: Client<typeof GovernanceServiceDefinition, CallerOptions>;
  pubsub: PubSub;
  systemCaller: Caller;
  logger: Logger;
}) {
  const known = new Map<string, Known>();
  let subscription: Subscription | undefined;
  // Changes heard so far: a lookup that overlapped one is answered but not cached (it may be stale).
  let changesHeard = 0;

  async function enabled(tenantId: string): Promise<boolean> {
    const cached = known.get(tenantId);
    if (cached && cached.until > Date.now()) return cached.enabled;
    const heardBefore = changesHeard;
    let tenant;
    try {
      tenant = (await deps.governance.getTenant({ id: tenantId }, { caller: deps.systemCaller })).tenant!;
    } catch (error) {
      deps.logger.warn({ err: (error as Error).message, tenantId }, 'tenant status unavailable; its last known state stands');
      return cached?.enabled ?? true;
    }
    if (changesHeard === heardBefore) {
      known.delete(tenantId);
      if (known.size >= MAX_CACHED_TENANTS) known.delete(known.keys().next().value!);
      known.set(tenantId, { enabled: tenant.enabled, until: Date.now() + TENANT_STATUS_CACHE_MS });
    }
    return tenant.enabled;
  }

  return {
    /** Refuses a disabled tenant: 403 `tenant_disabled`. */
    async requireEnabled(tenantId: string): Promise<void> {
      if (!(await enabled(tenantId))) throw forbidden(`tenant "${tenantId}" is disabled`, 'tenant_disabled');
    },

    /** Listens for tenant changes; without pub/sub, the cache period bounds how long a change takes. */
    async start() {
      subscription = await deps.pubsub
        .subscribe(TENANT_CHANGES_CHANNEL, (message) => {
          changesHeard += 1;
          const id = changedId(message);
          if (id !== undefined) known.delete(id);
        })
        .catch((error) => {
          deps.logger.warn({ err: error }, `tenant changes cannot be heard; a change takes up to ${TENANT_STATUS_CACHE_MS} ms`);
          return undefined;
        });
    },

    stop: () => subscription?.unsubscribe(),
  };
}

export type TenantStatus = ReturnType<typeof createTenantStatus>;

function changedId(message: string): string | undefined {
  try {
    const id = (JSON.parse(message) as TenantChange).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
