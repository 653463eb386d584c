import { randomUUID } from 'node:crypto';
import { governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyRepository } from '../src/api-keys/api-key.repository.js';

/** API keys on both engines: only a hash is stored, a key is in force until revoked or expired, last use moves forward. */
describe.each(SQL_ENGINES)('API key repository on %s', (engine) => {
  let fixture: EngineFixture;
  let keys: ReturnType<typeof createApiKeyRepository>;
  const key = (overrides: Partial<Parameters<typeof keys.insert>[0]> = {}) => ({
    id: randomUUID(),
    tenantId: 't1',
    name: 'ci',
    role: 'Reader',
    scopes: ['RunsRead'],
    prefix: 'hgk_abcdefgh',
    keyHash: randomUUID(),
    userId: null,
    labels: { team: 'ml' },
    expiresAt: null,
    createdBy: 'alice',
    ...overrides,
  });

  beforeAll(async () => {
    fixture = await openEngine(engine);
    keys = createApiKeyRepository((await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('finds a key in force by its hash, until it is revoked; other tenants never see it', async () => {
    const stored = await keys.insert(key({ scopes: null }));
    expect(stored).toMatchObject({ scopes: null, labels: { team: 'ml' }, lastUsedAt: null, revokedAt: null });
    expect(await keys.inForce(key().keyHash)).toBeUndefined();
    const hash = (await keys.insert(key({ keyHash: 'hash-1' }))).id;
    expect((await keys.inForce('hash-1'))?.id).toBe(hash);
    expect(await keys.get('t2', hash)).toBeUndefined();
    expect(await keys.revoke('t2', hash)).toBeUndefined();
    expect((await keys.revoke('t1', hash))?.revokedAt).not.toBeNull();
    expect(await keys.revoke('t1', hash)).toBeUndefined();
    expect(await keys.inForce('hash-1')).toBeUndefined();
  });

  it('is not in force once expired', async () => {
    await keys.insert(key({ keyHash: 'hash-2', expiresAt: new Date(Date.now() - 1000).toISOString() }));
    expect(await keys.inForce('hash-2')).toBeUndefined();
    await keys.insert(key({ keyHash: 'hash-3', expiresAt: new Date(Date.now() + 60_000).toISOString() }));
    expect(await keys.inForce('hash-3')).toBeDefined();
  });

  it('records the last use, which only moves forward', async () => {
    const { id } = await keys.insert(key({ keyHash: 'hash-4' }));
    const later = new Date('2030-01-02T03:04:05.000Z');
    await keys.touch(new Map([[id, later]]));
    await keys.touch(new Map([[id, new Date('2029-01-01T00:00:00.000Z')]]));
    expect((await keys.get('t1', id))?.lastUsedAt).toBe(later.toISOString());
  });
});
