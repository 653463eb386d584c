import { createStorageProvider } from '@hangar/storage';
import { SQL_ENGINES, TEST_POSTGRES_URL, dropSchemas, openEngine, uniqueSchemaPrefix } from '@hangar/testing';
import { sql, type Kysely, type Migration } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

const NOTES: Record<string, Migration> = {
  '0001_notes': {
    up: (db) =>
      db.schema
        .createTable('note')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('body', 'text')
        .execute(),
  },
};

const tablesOf = async (db: Kysely<unknown>, schema: string) =>
  (
    await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema} order by 1`.execute(
      db,
    )
  ).rows.map((row) => row.name);

describe.each(SQL_ENGINES)('service schema migrations on %s', (engine) => {
  it('apply once into the service schema and record themselves there; opening again applies nothing', async () => {
    const fixture = await openEngine(engine);
    try {
      const first = await fixture.storage.open<{ note: { id: number; body: string } }>('notes', NOTES);
      expect(await tablesOf(first.db as Kysely<unknown>, first.schema)).toEqual(['kysely_migration', 'kysely_migration_lock', 'note']);
      await first.db
        .insertInto('note')
        .values({ body: 'kept' } as never)
        .execute();
      const again = await fixture.storage.open<{ note: { id: number; body: string } }>('notes', NOTES);
      expect((await again.db.selectFrom('note').select('body').execute()).map((row) => row.body)).toEqual(['kept']);
    } finally {
      await fixture.close();
    }
  });
});

describe('service schema migrations on a PostgreSQL database other tenants change meanwhile', () => {
  const others = uniqueSchemaPrefix();
  afterAll(() => dropSchemas(others));

  it('succeed while another process creates and drops its own schemas (introspection reads only this prefix)', async () => {
    const churn = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await churn.connect();
    let churning = true;
    // Another tenant of the database, dropping schemas that hold serial columns as fast as it can.
    const churner = (async () => {
      for (let round = 0; churning; round++) {
        const schema = `${others}_${round % 4}`;
        await churn.query(`create schema if not exists "${schema}"`);
        await churn.query(`create table if not exists "${schema}".t (id serial primary key, a int, b int, c int)`);
        await churn.query(`drop schema "${schema}" cascade`);
      }
    })();
    try {
      for (let attempt = 0; attempt < 6; attempt++) {
        const fixture = await openEngine('postgres');
        try {
          const opened = await fixture.storage.open('notes', NOTES);
          expect(await tablesOf(opened.db as Kysely<unknown>, opened.schema)).toContain('note');
        } finally {
          await fixture.close();
        }
      }
    } finally {
      churning = false;
      await churner;
      await churn.end();
    }
  }, 60_000);
});

describe('service schema migrations applied by several processes at once on PostgreSQL', () => {
  const prefix = uniqueSchemaPrefix();
  afterAll(() => dropSchemas(prefix));
  // As in Kubernetes, where the migration Job applies migrations and services only open their schemas.
  const provider = () =>
    createStorageProvider({
      postgresConnectionString: TEST_POSTGRES_URL,
      schemaPrefix: prefix,
      embeddedDataDir: 'memory://',
      autoApplyMigrations: false,
      commandTimeoutSeconds: 30,
    });
  let applied = 0;
  const COUNTED: Record<string, Migration> = {
    '0001_notes': {
      async up(db) {
        applied += 1;
        await NOTES['0001_notes'].up(db);
      },
    },
  };

  it('apply each migration once (pods and the migration Job starting together), and report none pending after', async () => {
    const providers = await Promise.all(Array.from({ length: 6 }, () => provider()));
    try {
      expect(await providers[0].pendingMigrations('notes', COUNTED)).toEqual(['0001_notes']);
      await Promise.all(providers.map((storage) => storage.migrate('notes', COUNTED)));
      expect(applied).toBe(1);
      expect(await providers[1].pendingMigrations('notes', COUNTED)).toEqual([]);
      // A process of an older image knows fewer migrations: none of its own is pending.
      expect(await providers[2].pendingMigrations('notes', {})).toEqual([]);
    } finally {
      await Promise.all(providers.map((storage) => storage.close()));
    }
  });

  it("of one schema do not wait for another schema being migrated (the lock is the schema's own)", async () => {
    const [slow, quick] = await Promise.all([provider(), provider()]);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const slowStarted = new Promise<void>((resolve) => (started = resolve));
    const HELD: Record<string, Migration> = {
      '0001_notes': {
        async up(db) {
          started();
          await held;
          await NOTES['0001_notes'].up(db);
        },
      },
    };
    try {
      const slowMigration = slow.migrate('slow', HELD);
      await slowStarted;
      // Kysely's own adapter takes one lock for every schema: this would wait for `held`, which it releases after.
      const quickMigration = quick.migrate('quick', NOTES).then(() => 'quick done');
      expect(await Promise.race([quickMigration, new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting'))])).toBe(
        'quick done',
      );
      release();
      await slowMigration;
      expect(await quick.pendingMigrations('quick', NOTES)).toEqual([]);
      expect(await slow.pendingMigrations('slow', NOTES)).toEqual([]);
    } finally {
      release();
      await Promise.all([slow.close(), quick.close()]);
    }
  });

  it('are not applied by open() when AutoApplyMigrations is false', async () => {
    const storage = await provider();
    try {
      const opened = await storage.open('unmigrated', NOTES);
      expect(await tablesOf(opened.db as Kysely<unknown>, opened.schema)).toEqual([]);
      expect(await storage.pendingMigrations('unmigrated', NOTES)).toEqual(['0001_notes']);
    } finally {
      await storage.close();
    }
  });
});
