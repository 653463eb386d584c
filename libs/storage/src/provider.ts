import { mkdirSync } from 'node:fs';
import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { PGliteWorker } from './pglite-worker-client.js';
import { withNulReplaced } from './nul-safe-dialect.js';
import { withServiceSchemaIntrospection } from './schema-introspector.js';

export type EngineKind = 'postgres' | 'pglite';

export interface StorageSettings {
  /** PostgreSQL connection string; when absent the embedded PGlite store is used. */
  postgresConnectionString: string | null;
  /** Prefix of every service schema: `{schemaPrefix}_{service}`, e.g. `hangar_registry`. */
  schemaPrefix: string;
  /** PGlite data directory, or `memory://` for a throw-away database. */
  embeddedDataDir: string;
  autoApplyMigrations: boolean;
  commandTimeoutSeconds: number;
  /** Told when a connection drops outside a query (the server restarted or went away); the pool reconnects by itself. */
  onConnectionError?: (error: Error) => void;
}

export interface ServiceDatabase<DB> {
  db: Kysely<DB>;
  schema: string;
  engine: EngineKind;
}

/**
 * Opens the databases of one process. The all-in-one process shares one provider (one PGlite
 * or one pool) among its services; each service still lives in, and migrates, its own schema.
 */
export interface StorageProvider {
  engine: EngineKind;
  open<DB>(service: string, migrations: Record<string, Migration>): Promise<ServiceDatabase<DB>>;
  close(): Promise<void>;
}

/**
 * The engine is opened on the first `open()`: a process whose modules keep no data (the gateway)
 * never connects to PostgreSQL nor creates an embedded database.
 */
export async function createStorageProvider(settings: StorageSettings): Promise<StorageProvider> {
  const engine: EngineKind = settings.postgresConnectionString ? 'postgres' : 'pglite';
  let opened: Promise<{ root: Kysely<unknown>; closeEngine: () => Promise<void> }> | undefined;

  async function openEngine() {
    if (settings.postgresConnectionString) {
      const pool = new pg.Pool({
        connectionString: settings.postgresConnectionString,
        statement_timeout: settings.commandTimeoutSeconds * 1000,
        // Waiting longer than a statement may run for a connection (an unreachable server, a full pool) fails the query.
        connectionTimeoutMillis: settings.commandTimeoutSeconds * 1000,
        max: 10,
      });
      // A server that restarts or dies makes its connections emit 'error'; unheard, that event ends
      // the process. The pool reports idle ones here and drops them; a checked-out one fails its
      // query (or the next), is dropped on release, and the next query opens a fresh connection.
      pool.on('error', (error) => settings.onConnectionError?.(error));
      pool.on('connect', (client) => client.on('error', () => {}));
      // Kysely's destroy() ends the pool.
      const dialect = withServiceSchemaIntrospection(withNulReplaced(new PostgresDialect({ pool })), settings.schemaPrefix);
      return { root: new Kysely<unknown>({ dialect }), closeEngine: async () => {} };
    }
    if (!settings.embeddedDataDir.startsWith('memory://')) mkdirSync(settings.embeddedDataDir, { recursive: true });
    // In its own thread, so the embedded engine uses another core than the services.
    const store = await PGliteWorker.create(settings.embeddedDataDir);
    const dialect = withServiceSchemaIntrospection(withNulReplaced(new PGliteDialect(store)), settings.schemaPrefix);
    return { root: new Kysely<unknown>({ dialect }), closeEngine: () => store.close() };
  }

  return {
    engine,
    async open<DB>(service: string, migrations: Record<string, Migration>) {
      const { root } = await (opened ??= openEngine());
      const schema = `${settings.schemaPrefix}_${service}`;
      const db = root.withSchema(schema) as unknown as Kysely<DB>;
      if (settings.autoApplyMigrations) await migrate(root, schema, migrations);
      return { db, schema, engine };
    },
    async close() {
      if (!opened) return;
      const { root, closeEngine } = await opened;
      await root.destroy();
      await closeEngine();
    },
  };
}

async function migrate(root: Kysely<unknown>, schema: string, migrations: Record<string, Migration>) {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(root);
  const migrator = new Migrator({
    db: root.withSchema(schema),
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(unknown)'} of schema ${schema} failed: ${(error as Error).message}`);
  }
}
