import { governancePb as pb } from '@hangar/contracts';
import { notFound, type CallerContext, type Role } from '@hangar/platform';
import type { ApiKeyRecord } from './api-key.repository.js';
import type { ApiKeyService } from './api-key.service.js';

type ApiKeyMethods = Pick<
  pb.GovernanceServiceImplementation<CallerContext>,
  'createApiKey' | 'listApiKeys' | 'getApiKey' | 'revokeApiKey' | 'authenticateApiKey'
>;

const toProto = (key: ApiKeyRecord): pb.ApiKey => ({
  id: key.id,
  tenantId: key.tenantId,
  name: key.name,
  role: key.role,
  scopes: key.scopes ?? [],
  everyScope: key.scopes === null,
  prefix: key.prefix,
  userId: key.userId ?? undefined,
  labels: key.labels,
  expiresAt: key.expiresAt ?? undefined,
  createdAt: key.createdAt,
  createdBy: key.createdBy,
  lastUsedAt: key.lastUsedAt ?? undefined,
  revokedAt: key.revokedAt ?? undefined,
});

/** gRPC ↔ API key rules; translation only. */
export function apiKeyGrpc(apiKeys: ApiKeyService): ApiKeyMethods {
  return {
    async createApiKey(request, { caller }) {
      const { apiKey, key } = await apiKeys.create(caller, {
        name: request.name,
        role: request.role as Role,
        scopes: request.everyScope ? null : request.scopes,
        expiresAt: request.expiresAt ?? null,
        userId: request.userId ?? null,
        labels: request.labels,
      });
      return { apiKey: toProto(apiKey), key };
    },
    async listApiKeys(_request, { caller }) {
      return { apiKeys: (await apiKeys.list(caller)).map(toProto) };
    },
    async getApiKey({ id }, { caller }) {
      return { apiKey: toProto(await apiKeys.get(caller, id)) };
    },
    async revokeApiKey({ id }, { caller }) {
      await apiKeys.revoke(caller, id);
      return {};
    },
    async authenticateApiKey({ keyHash }) {
      const apiKey = await apiKeys.authenticate(keyHash);
      if (!apiKey) throw notFound('no API key in force has this hash');
      return { apiKey: toProto(apiKey) };
    },
  };
}
