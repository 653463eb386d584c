import { createStorageProvider, type StorageProvider } from '@hangar/storage';
import { pgliteSeed } from './pglite-seed.js';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from './postgres.js';

export type EngineName = 'pglite' | 'postgres';

/** The real Redis the pub/sub contract and multi-instance tests use; channels get a unique prefix. */
export const TEST_REDIS_URL = process.env.HANGAR_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The real Kafka broker of the event-log contract and outbox tests (started by the test setup when absent). */
export const TEST_KAFKA_BROKERS = (process.env.HANGAR_TEST_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

/** Both SQL engines: repository suites run `describe.each(SQL_ENGINES)` so each passes the same tests. */
export const SQL_ENGINES: EngineName[] = ['pglite', 'postgres'];

export interface EngineFixture {
  storage: StorageProvider;
  close(): Promise<void>;
}

export async function openEngine(engine: EngineName): Promise<EngineFixture> {
  const schemaPrefix = engine === 'postgres' ? uniqueSchemaPrefix() : 'hangar';
  const storage = await createStorageProvider({
    postgresConnectionString: engine === 'postgres' ? TEST_POSTGRES_URL : null,
    schemaPrefix,
    embeddedDataDir: 'memory://',
    embeddedSeed: pgliteSeed(),
    autoApplyMigrations: true,
    commandTimeoutSeconds: 30,
  });
  return {
    storage,
    async close() {
      await storage.close();
      if (engine === 'postgres') await dropSchemas(schemaPrefix);
    },
  };
}
