import { API_KEY_REVOCATIONS_CHANNEL } from '@hangar/contracts';
import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { createApiKeyVerifier } from '../src/http/api-key-auth.js';

/** The gateway's key cache: a revocation drops a cached key at once, and a lookup that overlapped one is not cached. */

const KEY = `hgk_${'a'.repeat(43)}`;
const apiKey = {
  id: 'key-1',
  tenantId: 't1',
  name: 'ci',
  role: 'Reader',
  scopes: [],
  everyScope: true,
  prefix: 'hgk_aaaaaaaa',
  labels: {},
  createdBy: 'x',
  createdAt: '2026-01-01T00:00:00.000Z',
};

function verifierWith(lookUp: () => Promise<unknown>) {
  const pubsub = createInProcessPubSub();
  let lookups = 0;
  const governance = {
    authenticateApiKey: async () => {
      lookups += 1;
      return lookUp();
    },
  };
  const verifier = createApiKeyVerifier({
    governance: governance as never,
    pubsub,
    systemCaller: { tenantId: 'default', actor: 'gateway' },
    logger: createLogger({ name: 'api-key-auth-test', level: 'silent' }),
  });
  return { verifier, pubsub, lookups: () => lookups };
}

describe('API key cache', () => {
  it('answers from the cache, and asks again once the key is revoked', async () => {
    const { verifier, pubsub, lookups } = verifierWith(async () => ({ apiKey }));
    await verifier.start();
    await verifier.verify(KEY);
    await verifier.verify(KEY);
    expect(lookups()).toBe(1);
    await pubsub.publish(API_KEY_REVOCATIONS_CHANNEL, JSON.stringify({ id: 'key-1' }));
    await verifier.verify(KEY);
    expect(lookups()).toBe(2);
    await verifier.stop();
  });

  it('does not cache a lookup that a revocation overlapped', async () => {
    let release!: () => void;
    const { verifier, pubsub, lookups } = verifierWith(() => new Promise((resolve) => (release = () => resolve({ apiKey }))));
    await verifier.start();
    const pending = verifier.verify(KEY);
    await new Promise((resolve) => setImmediate(resolve));
    await pubsub.publish(API_KEY_REVOCATIONS_CHANNEL, JSON.stringify({ id: 'key-1' }));
    release();
    await pending;
    const again = verifier.verify(KEY);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await again;
    expect(lookups()).toBe(2);
    await verifier.stop();
  });

  it('refuses a malformed key without asking governance', async () => {
    const { verifier, lookups } = verifierWith(async () => ({ apiKey }));
    await expect(verifier.verify('hgk_short')).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(lookups()).toBe(0);
  });
});
