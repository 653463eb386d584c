import {
  PostgresAdapter,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Dialect,
  type Kysely,
  type MigrationLockOptions,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/**
 * What Kysely's migrator asks (does my schema exist, does my migration table) answered from this
 * process's schemas only. Kysely's own Postgres introspector reads every table in the database and
 * calls functions such as pg_get_serial_sequence on each: slow on a shared database, and it fails
 * with `schema "…" does not exist` when another tenant of that database drops a schema meanwhile.
 */
class ServiceSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schemaPrefix: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace where starts_with(nspname, ${this.prefix()})`.execute(this.db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select ns.nspname as schema, c.relname as name, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where starts_with(ns.nspname, ${this.prefix()}) and c.relkind in ('r', 'v', 'p')`.execute(this.db);
    // The migrator reads names only; columns are not needed and not read.
    return rows.map((row) => ({ schema: row.schema, name: row.name, isView: row.kind === 'v', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }

  private prefix() {
    return `${this.schemaPrefix}_`;
  }
}

/**
 * Kysely's Postgres adapter takes one advisory lock, the same number for every schema, while it
 * migrates: every service of every Hangar on a database then waits for all the others' migrations,
 * and a waiter past the statement timeout fails its start (a split-shape start in CI, 2026-11-29:
 * `canceling statement due to statement timeout`). The lock here is the migrated schema's own, so
 * only processes migrating the same schema wait for each other.
 */
class SchemaMigrationLockAdapter extends PostgresAdapter {
  // Tried, not waited for in one statement: a wait under the statement timeout would fail the start
  // of a process that finds a long migration of its schema under way (the migration Job's).
  override async acquireMigrationLock(db: Kysely<any>, options: MigrationLockOptions): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      const { rows } = await sql<{
        locked: boolean;
      }>`select pg_try_advisory_lock(hashtextextended(${lockKeyOf(options)}, 0)) as locked`.execute(db);
      if (rows[0]?.locked) return;
      if (Date.now() > deadline)
        throw new Error(
          `the migration lock of schema ${options.lockTableSchema} was held by another process for ${LOCK_WAIT_MS / 60_000} minutes`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  override async releaseMigrationLock(db: Kysely<any>, options: MigrationLockOptions): Promise<void> {
    await sql`select pg_advisory_unlock(hashtextextended(${lockKeyOf(options)}, 0))`.execute(db);
  }
}

/** How long a process waits for another's migrations of its schema before its start fails. */
const LOCK_WAIT_MS = 10 * 60_000;

const lockKeyOf = (options: MigrationLockOptions) => `hangar-migrations:${options.lockTableSchema ?? 'public'}`;

/**
 * `inner` with introspection narrowed to the schemas named `{schemaPrefix}_…`, and a migration lock
 * per schema.
 */
export function withServiceSchemaMigrator(inner: Dialect, schemaPrefix: string): Dialect {
  return {
    createDriver: () => inner.createDriver(),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createAdapter: () => new SchemaMigrationLockAdapter(),
    createIntrospector: (db) => new ServiceSchemaIntrospector(db, schemaPrefix),
  };
}
