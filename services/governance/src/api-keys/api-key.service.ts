import { randomBytes, randomUUID } from 'node:crypto';
import { API_KEY_PREFIX, hashApiKey } from '@hangar/contracts';
import { forbidden, isUuid, notFound, roleIncludes, validationError, type AuditWriter, type Caller, type Role } from '@hangar/platform';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters: more than 32 random bytes' worth (256 bits). */
const KEY_CHARACTERS = 43;
const SHOWN_PREFIX = 12;

/** Plaintext key: `hgk_` + base62 from uniform random bytes (rejection sampling keeps it unbiased). */
function newKey(): string {
  let key = API_KEY_PREFIX;
  while (key.length < API_KEY_PREFIX.length + KEY_CHARACTERS) {
    for (const byte of randomBytes(64)) {
      if (byte >= 248) continue; // 248 = 4 × 62: larger bytes would favour the first characters
      key += BASE62[byte % 62];
      if (key.length === API_KEY_PREFIX.length + KEY_CHARACTERS) break;
    }
  }
  return key;
}

export interface ApiKeyServiceDeps {
  repository: ApiKeyRepository;
  audit: AuditWriter;
  /** Tells every gateway to forget a revoked key now (a hint: the gateways' caches also expire). */
  announceRevocation: (id: string) => Promise<void>;
}

/** API keys (SPEC Authentication 4): hashed at rest, the plaintext shown once, never above the creator's role. */
export function createApiKeyService(deps: ApiKeyServiceDeps) {
  const { repository } = deps;
  // When keys were used since the last flush: written in batches, not once per request.
  let lastUsed = new Map<string, Date>();

  return {
    async create(
      caller: Caller,
      request: {
        name: string;
        role: Role;
        scopes: string[] | null;
        expiresAt: string | null;
        userId: string | null;
        labels: Record<string, string>;
      },
    ): Promise<{ apiKey: ApiKeyRecord; key: string }> {
      if (!roleIncludes(caller.role, request.role))
        throw forbidden(`a key cannot hold a role above its creator's (${caller.role ?? 'none'})`);
      if (request.expiresAt !== null && Date.parse(request.expiresAt) <= Date.now())
        throw validationError('the key would never be in force', [{ path: 'expiresAt', message: 'must be in the future' }]);
      const key = newKey();
      const apiKey = await repository.insert({
        id: randomUUID(),
        tenantId: caller.tenantId,
        name: request.name,
        role: request.role,
        scopes: request.scopes,
        prefix: key.slice(0, SHOWN_PREFIX),
        keyHash: hashApiKey(key),
        userId: request.userId,
        labels: request.labels,
        expiresAt: request.expiresAt,
        createdBy: caller.actor,
      });
      await deps.audit(caller, {
        action: 'api-key.created',
        resourceType: 'api-key',
        resourceId: apiKey.id,
        details: { name: apiKey.name, role: apiKey.role, scopes: apiKey.scopes, expiresAt: apiKey.expiresAt },
      });
      return { apiKey, key };
    },

    list: (caller: Caller) => repository.list(caller.tenantId),

    async get(caller: Caller, id: string): Promise<ApiKeyRecord> {
      const apiKey = isUuid(id) ? await repository.get(caller.tenantId, id) : undefined;
      if (!apiKey) throw notFound(`API key ${id} not found`);
      return apiKey;
    },

    async revoke(caller: Caller, id: string): Promise<void> {
      const revoked = isUuid(id) ? await repository.revoke(caller.tenantId, id) : undefined;
      if (!revoked) throw notFound(`API key ${id} not found, or revoked already`);
      await deps.announceRevocation(id);
      await deps.audit(caller, { action: 'api-key.revoked', resourceType: 'api-key', resourceId: id, details: { name: revoked.name } });
    },

    /** The key in force with this hash (its use noted for the next flush); undefined otherwise. */
    async authenticate(keyHash: string): Promise<ApiKeyRecord | undefined> {
      const apiKey = await repository.inForce(keyHash);
      if (apiKey) lastUsed.set(apiKey.id, new Date());
      return apiKey;
    },

    /** Writes the last-use moments noted since the previous flush. */
    async flushLastUsed(): Promise<void> {
      const batch = lastUsed;
      lastUsed = new Map();
      await repository.touch(batch);
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
