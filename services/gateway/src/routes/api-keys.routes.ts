import type { governancePb } from '@hangar/contracts';
import { forbidden, roleIncludes, ROLES, type Role } from '@hangar/platform';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import type { GatewayContext } from '../gateway.context.js';
import { SCOPES } from '../http/auth.js';
import { defineRoute } from '../http/route.js';

const TAG = 'API keys';

const ApiKeyRequestSchema = z
  .strictObject({
    name: z.string().min(1).max(128),
    role: z.enum(ROLES),
    scopes: z
      .array(z.enum(SCOPES, { error: 'must be an exact scope name (PascalCase, e.g. RunsRead)' }))
      .optional()
      .describe('Narrows the role; absent: every scope of the role'),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('Must be in the future; absent: no expiry'),
    userId: z.string().min(1).max(256).optional().describe('The user runs started with this key are attributed to'),
    labels: z
      .record(
        z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_./-]{0,63}$/, 'must be 1–64 of letters, digits, `_`, `.`, `/`, `-`'),
        z.string().max(256),
      )
      .refine((labels) => Object.keys(labels).length <= 20, 'at most 20 labels')
      .optional(),
  })
  .meta({ id: 'ApiKeyRequest' });

const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(ROLES),
    scopes: z.array(z.enum(SCOPES)),
    prefix: z.string().describe('The first characters of the key'),
    userId: z.string().nullable(),
    labels: z.record(z.string(), z.string()),
    expiresAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    createdBy: z.string(),
    lastUsedAt: z.iso.datetime().nullable().describe('Exact to about 30 s (keys are cached at the gateway)'),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });

const CreatedApiKeySchema = ApiKeySchema.extend({ key: z.string().describe('The key itself, shown only in this response') }).meta({
  id: 'CreatedApiKey',
});

const IdParams = z.object({ id: z.string() });

const keyJson = (key: governancePb.ApiKey, context: GatewayContext) => ({
  id: key.id,
  name: key.name,
  role: key.role,
  scopes: key.everyScope ? context.roleScopes(key.role as Role) : key.scopes,
  prefix: key.prefix,
  userId: key.userId ?? null,
  labels: key.labels,
  expiresAt: key.expiresAt ?? null,
  createdAt: key.createdAt,
  createdBy: key.createdBy,
  lastUsedAt: key.lastUsedAt ?? null,
  revokedAt: key.revokedAt ?? null,
});

export const apiKeyRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key',
    description:
      'Creates an API key for the caller’s tenant; the key (hgk_…) is in this answer once and never again. Omitted scopes mean every scope of the role; a role or scope above the creator’s is 403.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'SecurityAdmin' },
    body: ApiKeyRequestSchema,
    responses: { 201: { description: 'Created', schema: CreatedApiKeySchema } },
    async handler({ body, caller, principal }, context) {
      // A key is capped by its creator's effective authority (API.md "API keys"): role, then scopes.
      if (!roleIncludes(principal!.role, body.role)) throw forbidden(`a key cannot hold a role above its creator's (${principal!.role})`);
      const wanted = body.scopes ?? context.roleScopes(body.role);
      const beyond = wanted.filter((scope) => !principal!.scopes.has(scope));
      if (beyond.length) throw forbidden(`a key cannot hold scopes its creator lacks: ${beyond.join(', ')}`);
      const { apiKey, key } = await context.governance.createApiKey(
        { ...body, scopes: body.scopes ?? [], everyScope: body.scopes === undefined, labels: body.labels ?? {} },
        { caller },
      );
      return { status: 201, body: { ...keyJson(apiKey!, context), key } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/api-keys',
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description: 'Returns the tenant’s API keys, oldest first, with their prefix, role, scopes and last use; never the keys themselves.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'SecurityAdmin' },
    responses: { 200: { description: 'API keys, oldest first', schema: ApiKeySchema.array() } },
    async handler({ caller }, context) {
      return { status: 200, body: (await context.governance.listApiKeys({}, { caller })).apiKeys.map((key) => keyJson(key, context)) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/api-keys/{id}',
    operationId: 'getApiKey',
    summary: 'Get an API key',
    description: 'Returns one API key’s record, never the key itself. An unknown key is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'SecurityAdmin' },
    params: IdParams,
    responses: { 200: { description: 'The API key', schema: ApiKeySchema }, 404: problemResponse('Unknown API key') },
    async handler({ params, caller }, context) {
      return { status: 200, body: keyJson((await context.governance.getApiKey({ id: params.id }, { caller })).apiKey!, context) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/api-keys/{id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: 'Revokes an API key: it stops working at once on every gateway. An unknown or already revoked key is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'SecurityAdmin' },
    params: IdParams,
    responses: { 204: { description: 'Revoked' }, 404: problemResponse('Unknown or already revoked API key') },
    async handler({ params, caller }, context) {
      await context.governance.revokeApiKey({ id: params.id }, { caller });
      return { status: 204 };
    },
  }),
];
