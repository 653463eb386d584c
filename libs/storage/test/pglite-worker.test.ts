import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pgliteSeed } from '@hangar/testing/pglite-seed';
import { CompiledQuery, Kysely, sql } from 'kysely';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PGliteDialect, PGliteWorker } from '../src/index.js';

/** PGlite in its own thread answers as the in-thread PGlite did: same values, same errors, one turn at a time. */

const VALUES_SQL = `select $1::timestamptz as at, $2::jsonb as doc, $3::bytea as bytes, 9007199254740993::bigint as big,
  12.50::numeric as amount, 42::int as small, 1.5::float8 as ratio, true as flag, array['a','b']::text[] as tags,
  '0b7a4e62-5d7c-4c9e-9a57-0f1f6b1d2c3e'::uuid as id, null::text as nothing, '{"a":[1,{"b":null}]}'::json as plain,
  interval '1 day' as span`;
/** An in-thread PGlite from the run's seed when there is one: initdb is the slow part of a start. */
const fromTheRunSeed = () => {
  const seed = pgliteSeed();
  return { loadDataDir: seed ? new Blob([readFileSync(seed)]) : undefined };
};
const threadOf = (store: PGliteWorker) => (store as unknown as { worker: Worker }).worker;

const VALUES_PARAMS = () => [
  new Date('2024-05-06T07:08:09.123Z'),
  JSON.stringify({ x: [1, 'two', { y: null }] }),
  Buffer.from([0, 1, 255]),
];

describe('PGliteWorker', () => {
  let store: PGliteWorker;
  let db: Kysely<any>;

  beforeAll(async () => {
    store = await PGliteWorker.create('memory://', pgliteSeed());
    db = new Kysely<any>({ dialect: new PGliteDialect(store) });
    await sql`create table t (id int primary key, name text not null constraint t_name_key unique)`.execute(db);
  });

  afterAll(async () => {
    await db.destroy();
    await store.close();
  });

  it('returns the values PGlite returns in-thread, types included', async () => {
    const local = await PGlite.create('memory://', fromTheRunSeed());
    try {
      const expected = (await local.query(VALUES_SQL, VALUES_PARAMS())).rows[0] as Record<string, unknown>;
      const { rows } = await db.executeQuery(CompiledQuery.raw(VALUES_SQL, VALUES_PARAMS()));
      const row = rows[0] as Record<string, unknown>;
      expect(row).toEqual(expected);
      expect(row.at).toBeInstanceOf(Date);
      expect(row.bytes).toBeInstanceOf(Uint8Array);
      expect([...(row.bytes as Uint8Array)]).toEqual([0, 1, 255]);
      for (const key of Object.keys(expected)) expect(typeof row[key]).toBe(typeof expected[key]);
      expect(row.doc).toEqual({ x: [1, 'two', { y: null }] });
    } finally {
      await local.close();
    }
  });

  it('reports affected rows', async () => {
    const result = await db
      .insertInto('t')
      .values([
        { id: 1, name: 'one' },
        { id: 2, name: 'two' },
      ])
      .executeTakeFirst();
    expect(result.numInsertedOrUpdatedRows).toBe(2n);
    const deleted = await db.deleteFrom('t').where('id', '=', 2).executeTakeFirst();
    expect(deleted.numDeletedRows).toBe(1n);
  });

  it('rebuilds database errors with their fields', async () => {
    const error = await db
      .insertInto('t')
      .values({ id: 3, name: 'one' })
      .execute()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      message: 'duplicate key value violates unique constraint "t_name_key"',
      code: '23505',
      constraint: 't_name_key',
      detail: 'Key (name)=(one) already exists.',
      severity: 'ERROR',
      table: 't',
      schema: 'public',
    });
    const syntax = await sql`selec 1`.execute(db).catch((caught: unknown) => caught);
    expect(syntax).toMatchObject({ code: '42601', position: '1' });
  });

  it('gives a transaction the connection until it ends', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 10, name: 'ten' }).execute();
      outside = db
        .selectFrom('t')
        .select('id')
        .where('id', '=', 10)
        .execute()
        .then((rows) => order.push(`outside saw ${rows.length}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await trx.updateTable('t').set({ name: 'TEN' }).where('id', '=', 10).execute();
      order.push('commit');
    });
    await outside;
    expect(order).toEqual(['commit', 'outside saw 1']);
    await db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('t').values({ id: 11, name: 'eleven' }).execute();
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await db.selectFrom('t').select('id').where('id', '=', 11).execute()).toEqual([]);
  });

  it('rolls back a transaction left open by a released connection', async () => {
    const careless = store.connect();
    await careless.query('begin', []);
    await careless.query("insert into t values (20, 'twenty')", []);
    const other = store.connect().query('select count(*)::int as n from t where id = 20', []);
    careless.release();
    expect((await other).rows).toEqual([{ n: 0 }]);
  });

  it('fails a query whose parameters cannot be cloned, and goes on', async () => {
    await expect(db.executeQuery(CompiledQuery.raw('select $1::text', [() => 1]))).rejects.toThrow();
    expect((await db.executeQuery(CompiledQuery.raw('select 1 as one'))).rows).toEqual([{ one: 1 }]);
  });

  it('fails only that query when it crosses in one batch with others', async () => {
    // Sent in one turn, the three cross to the thread together.
    const [before, unclonable, after] = await Promise.allSettled([
      db.executeQuery(CompiledQuery.raw('select 1 as one')),
      db.executeQuery(CompiledQuery.raw('select $1::text', [() => 1])),
      db.executeQuery(CompiledQuery.raw('select 2 as two')),
    ]);
    expect(before).toMatchObject({ status: 'fulfilled', value: { rows: [{ one: 1 }] } });
    expect(unclonable.status).toBe('rejected');
    expect(after).toMatchObject({ status: 'fulfilled', value: { rows: [{ two: 2 }] } });
  });

  it('rolls back a transaction whose last query failed when its connection is released', async () => {
    const careless = store.connect();
    await careless.query('begin', []);
    await careless.query("insert into t values (21, 'twenty-one')", []);
    await expect(careless.query('select no_such_column from t', [])).rejects.toThrow();
    careless.release();
    // The block was released, not left open: another connection runs, and the insert is gone.
    expect((await store.connect().query('select count(*)::int as n from t where id = 21', [])).rows).toEqual([{ n: 0 }]);
  });

  it('runs a query sent in the same turn as close before closing', async () => {
    const closing = await PGliteWorker.create('memory://', pgliteSeed());
    const last = closing.connect().query('select 42 as answer', []);
    const closed = closing.close();
    expect((await last).rows).toEqual([{ answer: 42 }]);
    await closed;
  });

  // A thread is never terminated here while WASM runs (a query in flight): that has crashed Node.
  // The query left pending waits, in the idle thread, for another connection's transaction block.
  it('rejects pending queries when the thread dies, without ending the process', async () => {
    const doomed = await PGliteWorker.create('memory://', pgliteSeed());
    await doomed.connect().query('begin', []);
    const pending = doomed.connect().query('select 1', []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Not a batch: the thread's message handler throws, uncaught, and the thread dies.
    threadOf(doomed).postMessage(42);
    await expect(pending).rejects.toMatchObject({ code: '08006', message: expect.stringMatching(/not iterable/) });
    await expect(doomed.connect().query('select 1', [])).rejects.toMatchObject({ code: '08006' });
    await doomed.close();

    const killed = await PGliteWorker.create('memory://', pgliteSeed());
    await killed.connect().query('begin', []);
    const waiting = killed.connect().query('select 1', []);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await threadOf(killed).terminate();
    await expect(waiting).rejects.toMatchObject({ code: '08006' });
    await killed.close();
  });

  it('ends the thread on close by itself, not terminated; later queries fail', async () => {
    const closing = await PGliteWorker.create('memory://', pgliteSeed());
    const thread = threadOf(closing);
    const terminate = vi.spyOn(thread, 'terminate');
    let exitCode: number | undefined;
    thread.once('exit', (code) => (exitCode = code));
    expect((await closing.connect().query('select 1 as one', [])).rows).toEqual([{ one: 1 }]);
    await closing.close();
    expect(exitCode).toBe(0);
    expect(terminate).not.toHaveBeenCalled();
    await expect(closing.connect().query('select 1', [])).rejects.toThrow(/closed/);
  });

  it('starts a memory store from a seed image, with what the image held', async () => {
    const source = await PGlite.create('memory://', fromTheRunSeed());
    const dir = mkdtempSync(join(tmpdir(), 'hangar-seed-'));
    try {
      await source.exec("create table seeded (name text); insert into seeded values ('from the image')");
      const image = join(dir, 'seed.tar');
      writeFileSync(image, new Uint8Array(await (await source.dumpDataDir('none')).arrayBuffer()));
      const seeded = await PGliteWorker.create('memory://', image);
      try {
        expect((await seeded.connect().query('select name from seeded', [])).rows).toEqual([{ name: 'from the image' }]);
      } finally {
        await seeded.close();
      }
    } finally {
      await source.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
