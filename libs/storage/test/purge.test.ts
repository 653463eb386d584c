import { purgeInBatches } from '@hangar/storage';
import { SQL_ENGINES, openEngine, type EngineFixture } from '@hangar/testing';
import { sql, type Kysely, type Migration } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Retention's batched purge on both engines: exactly the rows older than the cutoff, in batches, archived when asked. */

const EVENTS: Record<string, Migration> = {
  '0001_events': {
    async up(db) {
      await db.schema
        .createTable('events')
        .addColumn('run', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('at', 'timestamptz', (c) => c.notNull())
        .addColumn('body', 'jsonb', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_pk', ['run', 'seq'])
        .execute();
    },
  },
};

describe.each(SQL_ENGINES)('purge in batches on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<any>;
  let schema: string;
  const now = Date.now();
  const day = 86_400_000;
  const target = { table: 'events', key: ['run', 'seq'], older: (cutoff: Date) => sql<boolean>`at < ${cutoff}` };

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db, schema } = await fixture.storage.open<any>('purge', EVENTS));
  });
  afterAll(async () => {
    await fixture?.close();
  });

  /** 25 rows 40 days old and 5 of 10 days, in two runs. */
  const seed = async () => {
    await db.deleteFrom('events').execute();
    const rows = Array.from({ length: 30 }, (_, index) => ({
      run: index % 2 ? 'a' : 'b',
      seq: index,
      at: new Date(now - (index < 25 ? 40 : 10) * day),
      body: JSON.stringify({ index }),
    }));
    await db.insertInto('events').values(rows).execute();
  };
  const left = async () => (await db.selectFrom('events').select('seq').orderBy('seq').execute()).map((row) => row.seq);

  it('deletes exactly the rows older than the cutoff, batch by batch', async () => {
    await seed();
    const deleted = await purgeInBatches(db, schema, target, {
      cutoff: new Date(now - 30 * day),
      archive: false,
      batchSize: 10,
      batchDelayMs: 5,
    });
    expect(deleted).toEqual({ deleted: 25, archived: 0 });
    expect(await left()).toEqual([25, 26, 27, 28, 29]);
    expect(
      await purgeInBatches(db, schema, target, { cutoff: new Date(now - 30 * day), archive: false, batchSize: 10, batchDelayMs: 0 }),
    ).toEqual({
      deleted: 0,
      archived: 0,
    });
  });

  it('copies the rows it deletes to <table>_archive when asked', async () => {
    await seed();
    const result = await purgeInBatches(db, schema, target, {
      cutoff: new Date(now - 30 * day),
      archive: true,
      batchSize: 7,
      batchDelayMs: 0,
    });
    expect(result).toEqual({ deleted: 25, archived: 25 });
    const archived = await db.selectFrom('events_archive').select(['seq', 'body']).orderBy('seq').execute();
    expect(archived.map((row) => row.seq)).toEqual(Array.from({ length: 25 }, (_, index) => index));
    expect(archived[3].body).toEqual({ index: 3 });
    expect(await left()).toEqual([25, 26, 27, 28, 29]);
  });

  it('keeps archiving after a migration added a column to the table', async () => {
    await seed();
    await purgeInBatches(db, schema, target, { cutoff: new Date(now - 30 * day), archive: true, batchSize: 50, batchDelayMs: 0 });
    await sql`alter table ${sql.id(schema, 'events')} add column note text`.execute(db);
    await db
      .insertInto('events')
      .values({ run: 'c', seq: 1, at: new Date(now - 40 * day), body: '{}', note: 'added later' })
      .execute();
    expect(
      await purgeInBatches(db, schema, target, { cutoff: new Date(now - 30 * day), archive: true, batchSize: 50, batchDelayMs: 0 }),
    ).toEqual({
      deleted: 1,
      archived: 1,
    });
    expect(await db.selectFrom('events_archive').select('note').where('run', '=', 'c').execute()).toEqual([{ note: 'added later' }]);
  });
});
