import { TENANT_PROVIDER_KINDS, type governancePb } from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { requirePlatform } from '../http/platform-tenant.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Tenants';

const TenantProviderSchema = z
  .strictObject({
    kind: z.enum(TENANT_PROVIDER_KINDS),
    endpoint: z.string().max(2048).optional().describe('Required for AzureOpenAI and OpenAICompatible'),
    apiKeyKey: z
      .string()
      .min(1)
      .max(256)
      .describe('The NAME of the configuration key that holds the API key, under TenantProviders:AllowedConfigurationPrefix'),
  })
  .meta({ id: 'TenantProvider' });

const TenantRequestSchema = z
  .strictObject({
    displayName: z.string().min(1).max(200),
    enabled: z.boolean(),
    providers: z
      .record(z.string(), TenantProviderSchema)
      .refine((providers) => Object.keys(providers).length <= 20, 'at most 20 providers')
      .optional()
      .describe('Each overrides the global provider of the same name for this tenant’s runs'),
  })
  .meta({ id: 'TenantRequest' });

const TenantSchema = z
  .object({
    id: z.string(),
    displayName: z.string(),
    enabled: z.boolean(),
    providers: z.record(z.string(), TenantProviderSchema),
    stored: z.boolean().describe('False for a tenant that exists only implicitly (enabled, never stored)'),
    createdAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Tenant' });

const IdParams = z.object({ id: z.string() });

const tenantJson = (tenant: governancePb.Tenant) => ({
  id: tenant.id,
  displayName: tenant.displayName,
  enabled: tenant.enabled,
  providers: Object.fromEntries(
    Object.entries(tenant.providers).map(([name, provider]) => [
      name,
      { kind: provider.kind, ...(provider.endpoint !== undefined && { endpoint: provider.endpoint }), apiKeyKey: provider.apiKeyKey },
    ]),
  ),
  stored: tenant.stored,
  createdAt: tenant.createdAt ?? null,
  updatedAt: tenant.updatedAt ?? null,
});

export const tenantRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/tenants',
    operationId: 'listTenants',
    summary: 'List tenants',
    description:
      'Returns the stored tenants by id; a tenant never stored exists implicitly and enabled, and is not listed. Needs the platform tenant or the static token (403 otherwise).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformRead' },
    responses: { 200: { description: 'Stored tenants', schema: TenantSchema.array() }, 403: problemResponse('Not the platform tenant') },
    async handler({ caller, principal }, context) {
      requirePlatform(principal, caller, context);
      return { status: 200, body: (await context.governance.listTenants({}, { caller })).tenants.map(tenantJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/tenants/{id}',
    operationId: 'getTenant',
    summary: 'Get a tenant',
    description:
      'Returns one tenant: the stored one, or the implicit (enabled) tenant its id names. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformRead' },
    params: IdParams,
    responses: {
      200: { description: 'The tenant', schema: TenantSchema },
      403: problemResponse('Not the platform tenant'),
      404: problemResponse('Not a tenant id'),
    },
    async handler({ params, caller, principal }, context) {
      requirePlatform(principal, caller, context);
      return { status: 200, body: tenantJson((await context.governance.getTenant({ id: params.id }, { caller })).tenant!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/tenants/{id}',
    operationId: 'putTenant',
    summary: 'Create or replace a tenant',
    description:
      'Stores a tenant’s display name, enabled state and own model providers; a disabled tenant gets 403 tenant_disabled on every route. A provider apiKeyKey outside TenantProviders:AllowedConfigurationPrefix is 400. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: IdParams,
    body: TenantRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: TenantSchema },
      201: { description: 'Created', schema: TenantSchema },
      400: problemResponse('Invalid tenant id, or a provider key outside TenantProviders:AllowedConfigurationPrefix'),
      403: problemResponse('Not the platform tenant'),
    },
    async handler({ params, body, caller, principal }, context) {
      requirePlatform(principal, caller, context);
      const { tenant, created } = await context.governance.putTenant(
        { id: params.id, displayName: body.displayName, enabled: body.enabled, providers: body.providers ?? {} },
        { caller },
      );
      return { status: created ? 201 : 200, body: tenantJson(tenant!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/tenants/{id}',
    operationId: 'deleteTenant',
    summary: 'Forget a tenant',
    description:
      'Deletes a stored tenant: it exists implicitly again, enabled and with the global providers. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: IdParams,
    responses: {
      204: { description: 'Deleted' },
      403: problemResponse('Not the platform tenant'),
      404: problemResponse('No stored tenant'),
    },
    async handler({ params, caller, principal }, context) {
      requirePlatform(principal, caller, context);
      await context.governance.deleteTenant({ id: params.id }, { caller });
      return { status: 204 };
    },
  }),
];
