import { mkdirSync } from 'node:fs';
import { Kysely, Migrator, PostgresDialect, type Migration } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { PGliteWorker } from './pglite-worker-client.js';
import { withNulReplaced } from './nul-safe-dialect.js';
import { withServiceSchemaMigrator } from './service-schema-migrator.js';

export type EngineKind = 'postgres' | 'pglite';

export interface StorageSettings {
  /** PostgreSQL connection string; when absent the embedded PGlite store is used. */
  postgresConnectionString: string | null;
  /** Prefix of every service schema: `{schemaPrefix}_{service}`, e.g. `hangar_registry`. */
  schemaPrefix: string;
  /** PGlite data directory, or `memory://` for a throw-away database. */
  embeddedDataDir: string;
  /**
   * A `memory://` store starts from this image of a data directory (PGlite's `dumpDataDir`, a tar
   * file) instead of a fresh cluster: PGlite's initdb takes 3–5 s, loading an image about 1 s. The
   * tests start hundreds of throw-away stores from one image made per run.
   */
  embeddedSeed?: string;
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
  /** The service's schema; its migrations are applied first when `autoApplyMigrations` is on. */
  open<DB>(service: string, migrations: Record<string, Migration>): Promise<ServiceDatabase<DB>>;
  /** Applies the migrations the schema lacks; safe while other processes migrate the same database. */
  migrate(service: string, migrations: Record<string, Migration>): Promise<void>;
  /** Names of `migrations` not yet applied to the service's schema (read only). */
  pendingMigrations(service: string, migrations: Record<string, Migration>): Promise<string[]>;
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
      const dialect = withServiceSchemaMigrator(withNulReplaced(new PostgresDialect({ pool })), settings.schemaPrefix);
      return { root: new Kysely<unknown>({ dialect }), closeEngine: async () => {} };
    }
    const inMemory = settings.embeddedDataDir.startsWith('memory://');
    if (!inMemory) mkdirSync(settings.embeddedDataDir, { recursive: true });
    // In its own thread, so the embedded engine uses another core than the services.
    const store = await PGliteWorker.create(settings.embeddedDataDir, inMemory ? settings.embeddedSeed : undefined);
    const dialect = withServiceSchemaMigrator(withNulReplaced(new PGliteDialect(store)), settings.schemaPrefix);
    return { root: new Kysely<unknown>({ dialect }), closeEngine: () => store.close() };
  }

  const schemaOf = (service: string) => `${settings.schemaPrefix}_${service}`;
  const rootDb = async () => (await (opened ??= openEngine())).root;

  const provider: StorageProvider = {
    engine,
    async open<DB>(service: string, migrations: Record<string, Migration>) {
      const root = await rootDb();
      const schema = schemaOf(service);
      if (settings.autoApplyMigrations) await provider.migrate(service, migrations);
      return { db: root.withSchema(schema) as unknown as Kysely<DB>, schema, engine };
    },
    async migrate(service: string, migrations: Record<string, Migration>) {
      const schema = schemaOf(service);
      const { error, results } = await migratorOf(await rootDb(), schema, migrations).migrateToLatest();
      if (error) {
        const failed = results?.find((result) => result.status === 'Error')?.migrationName;
        throw new Error(`migration ${failed ?? '(unknown)'} of schema ${schema} failed: ${(error as Error).message}`);
      }
    },
    async pendingMigrations(service: string, migrations: Record<string, Migration>) {
      const known = await migratorOf(await rootDb(), schemaOf(service), migrations).getMigrations();
      return known.filter((migration) => !migration.executedAt).map((migration) => migration.name);
    },
    async close() {
      if (!opened) return;
      const { root, closeEngine } = await opened;
      await root.destroy();
      await closeEngine();
    },
  };
  return provider;
}

/**
 * Kysely's migrator creates the schema and its bookkeeping tables tolerating a concurrent creator
 * (a plain `create schema if not exists` fails on PostgreSQL when two run at once), and applies
 * migrations under one advisory lock, reading what is applied once it holds it: processes that
 * start together (replicas, the migration Job) apply each migration once.
 */
function migratorOf(root: Kysely<unknown>, schema: string, migrations: Record<string, Migration>) {
  return new Migrator({
    db: root.withSchema(schema),
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
}
