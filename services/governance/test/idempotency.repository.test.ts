import { createIdempotencyRepository, governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture, sealingCipher } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DAY = 24 * 60 * 60 * 1000;

describe.each(SQL_ENGINES)('idempotency repository on %s', (engine) => {
  let fixture: EngineFixture;
  let keys: ReturnType<typeof createIdempotencyRepository>;
  let db: Kysely<GovernanceDatabase>;
  const target = (key: string, tenantId = 't1') => ({ tenantId, scope: 'POST /api/agents/{name}/run', key });
  const stored = { status: 200, headers: { location: '/x' }, body: '{"ok":true}' };

  beforeAll(async () => {
    fixture = await openEngine(engine);
    const database = await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations);
    db = database.db;
    keys = createIdempotencyRepository(database.db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('starts a new key, holds it while in progress, then replays the stored response for the same request only', async () => {
    expect(await keys.begin(target('a'), 'fp-1', 60_000, DAY)).toEqual({ outcome: 'started' });
    expect(await keys.begin(target('a'), 'fp-1', 60_000, DAY)).toEqual({ outcome: 'in_progress' });
    expect(await keys.begin(target('a'), 'fp-2', 60_000, DAY)).toEqual({ outcome: 'mismatch' });
    await keys.complete(target('a'), stored);
    expect(await keys.begin(target('a'), 'fp-1', 60_000, DAY)).toEqual({ outcome: 'replay', response: stored });
    expect(await keys.begin(target('a'), 'fp-2', 60_000, DAY)).toEqual({ outcome: 'mismatch' });
    expect(await keys.begin(target('a', 't2'), 'fp-2', 60_000, DAY)).toEqual({ outcome: 'started' });
  });

  it('lets a retry take over a key whose holder stopped, and forgets released and expired keys', async () => {
    expect(await keys.begin(target('b'), 'fp', 1, DAY)).toEqual({ outcome: 'started' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await keys.begin(target('b'), 'fp', 60_000, DAY)).toEqual({ outcome: 'started' });

    await keys.release(target('b'));
    expect(await keys.begin(target('b'), 'other', 60_000, DAY)).toEqual({ outcome: 'started' });
    await keys.complete(target('b'), stored);
    await keys.release(target('b')); // a completed key is not released
    expect((await keys.begin(target('b'), 'other', 60_000, DAY)).outcome).toBe('replay');

    await db
      .updateTable('idempotency_keys')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('key', '=', 'b')
      .execute();
    expect(await keys.begin(target('b'), 'fresh', 60_000, DAY)).toEqual({ outcome: 'started' });
    await db
      .updateTable('idempotency_keys')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('key', '=', 'a')
      .execute();
    expect(await keys.purgeExpired()).toBe(2);
  });

  it('seals the stored response when content protection is on, and replays it as it was', async () => {
    const sealed = createIdempotencyRepository(db, sealingCipher());
    expect(await sealed.begin(target('sealed'), 'fp', 60_000, DAY)).toEqual({ outcome: 'started' });
    await sealed.complete(target('sealed'), { ...stored, body: '{"canary":"5e0"}' });
    const row = await db.selectFrom('idempotency_keys').select('response').where('key', '=', 'sealed').executeTakeFirstOrThrow();
    expect(JSON.stringify(row.response)).not.toContain('canary');
    expect(await sealed.begin(target('sealed'), 'fp', 60_000, DAY)).toEqual({
      outcome: 'replay',
      response: { ...stored, body: '{"canary":"5e0"}' },
    });
  });
});
