import { governanceMigrations, type GovernanceDatabase } from '@hangar/governance';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionRepository } from '../src/retention/retention.repository.js';

/** Stored retention policies and the sweep lease on both engines: one holder at a time, taken over once it runs out. */
describe.each(SQL_ENGINES)('retention repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<GovernanceDatabase>;
  let retention: ReturnType<typeof createRetentionRepository>;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<GovernanceDatabase>('governance', governanceMigrations)).db;
    retention = createRetentionRepository(db);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('stores, replaces and forgets policies, a null age included', async () => {
    expect(await retention.put({ target: 'RunEvents', maxAgeMs: 5 * 86_400_000, archive: true })).toEqual({ created: true });
    expect(await retention.put({ target: 'RunEvents', maxAgeMs: null, archive: false })).toEqual({ created: false });
    expect(await retention.list()).toEqual([{ target: 'RunEvents', maxAgeMs: null, archive: false }]);
    expect(await retention.delete('RunEvents')).toBe(true);
    expect(await retention.delete('RunEvents')).toBe(false);
  });

  it('lets one instance hold the sweep lease; another gets it once released or run out', async () => {
    expect(await retention.takeLease('a', 60_000)).toBe(true);
    expect(await retention.takeLease('b', 60_000)).toBe(false);
    expect(await retention.takeLease('a', 60_000)).toBe(true);
    await retention.releaseLease('b');
    expect(await retention.takeLease('b', 60_000)).toBe(false);
    await retention.releaseLease('a');
    expect(await retention.takeLease('b', 60_000)).toBe(true);
    await db
      .updateTable('retention_lease')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .execute();
    expect(await retention.takeLease('a', 60_000)).toBe(true);
  });
});
