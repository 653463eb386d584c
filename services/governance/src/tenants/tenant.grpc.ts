import type { governancePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { TenantProvider } from './tenant.repository.js';
import type { Tenant, TenantService } from './tenant.service.js';

type TenantMethods = Pick<pb.GovernanceServiceImplementation<CallerContext>, 'putTenant' | 'getTenant' | 'listTenants' | 'deleteTenant'>;

const toProto = (tenant: Tenant): pb.Tenant => ({
  id: tenant.id,
  displayName: tenant.displayName,
  enabled: tenant.enabled,
  providers: Object.fromEntries(
    Object.entries(tenant.providers).map(([name, provider]) => [
      name,
      { kind: provider.kind, endpoint: provider.endpoint ?? undefined, apiKeyKey: provider.apiKeyKey },
    ]),
  ),
  stored: tenant.stored,
  createdAt: tenant.createdAt ?? undefined,
  updatedAt: tenant.updatedAt ?? undefined,
});

const providerFromProto = (provider: pb.TenantProvider): TenantProvider => ({
  kind: provider.kind,
  endpoint: provider.endpoint ?? null,
  apiKeyKey: provider.apiKeyKey,
});

/** gRPC ↔ tenant rules; translation only. */
export function tenantGrpc(tenants: TenantService): TenantMethods {
  return {
    async putTenant(request, { caller }) {
      const { tenant, created } = await tenants.put(caller, {
        id: request.id,
        displayName: request.displayName,
        enabled: request.enabled,
        providers: Object.fromEntries(Object.entries(request.providers).map(([name, provider]) => [name, providerFromProto(provider)])),
      });
      return { tenant: toProto(tenant), created };
    },
    async getTenant({ id }) {
      return { tenant: toProto(await tenants.get(id)) };
    },
    async listTenants() {
      return { tenants: (await tenants.list()).map(toProto) };
    },
    async deleteTenant({ id }, { caller }) {
      await tenants.delete(caller, id);
      return {};
    },
  };
}
