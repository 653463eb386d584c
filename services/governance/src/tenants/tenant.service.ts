import { TENANT_ID, TENANT_PROVIDER_KINDS } from '@hangar/contracts';
import { checkServiceEndpoint, notFound, validationError, type AuditWriter, type Caller } from '@hangar/platform';
import type { TenantProvider, TenantRecord, TenantRepository } from './tenant.repository.js';

/** A tenant as the API shows it; `stored` is false for one that exists only implicitly. */
export type Tenant = Omit<TenantRecord, 'createdAt' | 'updatedAt'> & {
  stored: boolean;
  createdAt: string | null;
  updatedAt: string | null;
};

export interface TenantServiceDeps {
  repository: TenantRepository;
  audit: AuditWriter;
  /** Tells gateways and run executors that the tenant changed (a hint: their caches also expire). */
  announceChange: (id: string) => Promise<void>;
  settings: {
    /** `DefaultTenantId`: the platform tenant, which cannot be disabled. */
    platformTenantId: string;
    /** `TenantProviders:AllowedConfigurationPrefix`: where a provider's API key NAME must point. */
    providerKeyPrefix: string;
    /** `Egress:AllowPrivateNetworkTargets`: a provider endpoint may be a private target (and plain http: for a sidecar). */
    allowPrivateNetworkTargets: boolean;
  };
}

const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Kinds whose endpoint is the tenant's to give (the others have a default). */
const NEEDS_ENDPOINT = new Set(['AzureOpenAI', 'OpenAICompatible']);

/** API.md "Tenants": tenants exist implicitly (enabled) until stored; the platform tenant manages them. */
export function createTenantService(deps: TenantServiceDeps) {
  const { repository, settings } = deps;

  // Managing tenants is the platform's business: its trail, whichever tenant a static-token request named.
  const platform = (caller: Caller): Caller => ({ ...caller, tenantId: settings.platformTenantId });
  const implicit = (id: string): Tenant => ({
    id,
    displayName: id,
    enabled: true,
    providers: {},
    stored: false,
    createdAt: null,
    updatedAt: null,
  });
  const stored = (record: TenantRecord): Tenant => ({ ...record, stored: true });

  function checkProviders(providers: Record<string, TenantProvider>) {
    const errors: Array<{ path: string; message: string }> = [];
    for (const [name, provider] of Object.entries(providers)) {
      const at = `providers.${name}`;
      if (!PROVIDER_NAME.test(name)) errors.push({ path: at, message: 'a provider name is 1-64 letters, digits, "_" or "-"' });
      if (!(TENANT_PROVIDER_KINDS as readonly string[]).includes(provider.kind))
        errors.push({ path: `${at}.kind`, message: `must be one of ${TENANT_PROVIDER_KINDS.join(', ')}` });
      if (NEEDS_ENDPOINT.has(provider.kind) && !provider.endpoint)
        errors.push({ path: `${at}.endpoint`, message: `is required for ${provider.kind}` });
      // The platform's API key goes where the endpoint points: the tool-server rule (API.md), checked again on every connection.
      const endpoint = provider.endpoint === null ? undefined : checkServiceEndpoint(provider.endpoint, settings);
      if (endpoint && !endpoint.ok) errors.push({ path: `${at}.endpoint`, message: endpoint.reason });
      if (!provider.apiKeyKey.startsWith(settings.providerKeyPrefix) || provider.apiKeyKey.length === settings.providerKeyPrefix.length)
        errors.push({
          path: `${at}.apiKeyKey`,
          message: `must name a configuration key under "${settings.providerKeyPrefix}" (TenantProviders:AllowedConfigurationPrefix)`,
        });
    }
    if (errors.length) throw validationError('the tenant’s providers are not valid', errors);
  }

  return {
    async put(caller: Caller, tenant: Omit<TenantRecord, 'createdAt' | 'updatedAt'>): Promise<{ tenant: Tenant; created: boolean }> {
      if (!TENANT_ID.test(tenant.id))
        throw validationError(`the tenant id "${tenant.id}" is not valid`, [
          { path: 'id', message: 'must be 1-128 characters of letters, digits, ".", "_" or "-"' },
        ]);
      if (!tenant.enabled && tenant.id === settings.platformTenantId)
        throw validationError('the platform tenant cannot be disabled', [{ path: 'enabled', message: 'must be true for DefaultTenantId' }]);
      checkProviders(tenant.providers);
      const saved = await repository.put(tenant);
      await deps.announceChange(tenant.id);
      await deps.audit(platform(caller), {
        action: saved.created ? 'tenant.created' : 'tenant.updated',
        resourceType: 'tenant',
        resourceId: tenant.id,
        // Where each provider sends which key NAME (never a key's value): what a reviewer of the trail needs.
        details: { displayName: tenant.displayName, enabled: tenant.enabled, providers: tenant.providers },
      });
      return { tenant: stored(saved.tenant), created: saved.created };
    },

    /** A stored tenant, or the implicit one a tenant id names until it is stored. */
    async get(id: string): Promise<Tenant> {
      if (!TENANT_ID.test(id)) throw notFound(`tenant ${id} not found`);
      const record = await repository.get(id);
      return record ? stored(record) : implicit(id);
    },

    list: async (): Promise<Tenant[]> => (await repository.list()).map(stored),

    async delete(caller: Caller, id: string): Promise<void> {
      if (!TENANT_ID.test(id) || !(await repository.delete(id))) throw notFound(`tenant ${id} not found`);
      await deps.announceChange(id);
      await deps.audit(platform(caller), { action: 'tenant.deleted', resourceType: 'tenant', resourceId: id, details: {} });
    },
  };
}

export type TenantService = ReturnType<typeof createTenantService>;
