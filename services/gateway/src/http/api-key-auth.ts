import { API_KEY_PREFIX, API_KEY_REVOCATIONS_CHANNEL, hashApiKey, type GovernanceServiceDefinition } from '@hangar/contracts';
import { announcedId, type PubSub, type Subscription } from '@hangar/messaging';
import { unauthorized, type Caller, type CallerOptions, type Logger, type Role } from '@hangar/platform';
import type { Client } from 'nice-grpc';
import { SCOPES, type Principal, type Scope } from './auth.js';

/** How long a gateway trusts a key it looked up: the longest a revocation can take when its announcement is lost. */
export const API_KEY_CACHE_MS = 30_000;
const MAX_CACHED_KEYS = 10_000;
const KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{43}$`);

export const isApiKey = (credential: string) => credential.startsWith(API_KEY_PREFIX);

interface Cached {
  id: string;
  principal: Principal;
  until: number;
}

/**
 * API keys at the edge: a key is looked up by its SHA-256 in governance, then trusted for
 * API_KEY_CACHE_MS (and never past its expiry); a revocation announced over pub/sub drops it from
 * every gateway's cache at once. Governance notes each lookup as a use (written in batches), so
 * `lastUsedAt` is exact to the cache period.
 */
export function createApiKeyVerifier(deps: {
  governance: Client<typeof GovernanceServiceDefinition, CallerOptions>;
  pubsub: PubSub;
  /** Who the gateway is when it asks governance (no tenant is known before the key is). */
  systemCaller: Caller;
  logger: Logger;
}) {
  const cache = new Map<string, Cached>();
  let subscription: Subscription | undefined;
  // Revocations heard so far: a lookup that overlapped one is answered but not cached (it may be stale).
  let revocationsHeard = 0;

  async function lookUp(hash: string): Promise<Cached> {
    let apiKey;
    try {
      apiKey = (await deps.governance.authenticateApiKey({ keyHash: hash }, { caller: deps.systemCaller })).apiKey!;
    } catch (error) {
      if ((error as { status?: number }).status === 404) throw unauthorized('the API key is not valid, expired or revoked');
      throw error;
    }
    const expires = apiKey.expiresAt ? Date.parse(apiKey.expiresAt) : Infinity;
    const principal: Principal = {
      actor: `api-key:${apiKey.id}`,
      ...(apiKey.userId && { userId: apiKey.userId }),
      role: apiKey.role as Role,
      scopes: new Set<Scope>(
        apiKey.everyScope ? SCOPES : (apiKey.scopes.filter((scope) => (SCOPES as readonly string[]).includes(scope)) as Scope[]),
      ),
      method: 'apiKey',
      tenantId: apiKey.tenantId,
      labels: apiKey.labels,
    };
    return { id: apiKey.id, principal, until: Math.min(Date.now() + API_KEY_CACHE_MS, expires) };
  }

  return {
    async verify(key: string): Promise<Principal> {
      // Malformed (or 10 KB long) is refused here, without asking anyone.
      if (!KEY_FORMAT.test(key)) throw unauthorized('the API key is not valid, expired or revoked');
      const hash = hashApiKey(key);
      const cached = cache.get(hash);
      if (cached && cached.until > Date.now()) return cached.principal;
      cache.delete(hash);
      const heardBefore = revocationsHeard;
      const found = await lookUp(hash);
      if (revocationsHeard === heardBefore) {
        if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
        cache.set(hash, found);
      }
      return found.principal;
    },

    /** Listens for revocations; without pub/sub, the cache period bounds how long a revoked key works. */
    async start() {
      subscription = await deps.pubsub
        .subscribe(API_KEY_REVOCATIONS_CHANNEL, (message) => {
          const id = announcedId(message);
          revocationsHeard += 1;
          for (const [hash, entry] of cache) if (entry.id === id) cache.delete(hash);
        })
        .catch((error) => {
          deps.logger.warn({ err: error }, `API key revocations cannot be heard; a revoked key works for up to ${API_KEY_CACHE_MS} ms`);
          return undefined;
        });
    },

    stop: () => subscription?.unsubscribe(),
  };
}

export type ApiKeyVerifier = ReturnType<typeof createApiKeyVerifier>;
