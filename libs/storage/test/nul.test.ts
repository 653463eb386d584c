import { SQL_ENGINES, openEngine, type EngineFixture } from '@hangar/testing';
import type { Kysely, Migration } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb } from '../src/index.js';

interface NotesDatabase {
  note: { id: number; body: string; doc: unknown };
}

const NOTES: Record<string, Migration> = {
  '0001_notes': {
    up: (db) =>
      db.schema
        .createTable('note')
        .addColumn('id', 'integer', (column) => column.primaryKey())
        .addColumn('body', 'text', (column) => column.notNull())
        .addColumn('doc', 'jsonb', (column) => column.notNull())
        .execute(),
  },
};

/** Text and jsonb cannot hold U+0000: a NUL from a model or tool is stored as U+FFFD instead of failing the write. */
describe.each(SQL_ENGINES)('NUL characters on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<NotesDatabase>;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<NotesDatabase>('nul', NOTES)).db;
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('are stored as U+FFFD in text and jsonb, keys included; everything else is kept as written', async () => {
    await db
      .insertInto('note')
      .values({ id: 1, body: 'a\u0000b\u0000', doc: jsonb({ text: 'x\u0000\u0000y', 'k\u0000': ['\u0000'], literal: '\\u0000 stays' }) })
      .execute();
    const row = await db.selectFrom('note').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    expect(row.body).toBe('a\ufffdb\ufffd');
    expect(row.doc).toEqual({ text: 'x\ufffd\ufffdy', 'k\ufffd': ['\ufffd'], literal: '\\u0000 stays' });
    // In a filter too: the stored value is found by what was written.
    expect((await db.selectFrom('note').select('id').where('body', '=', 'a\u0000b\u0000').execute()).length).toBe(1);
  });
});
