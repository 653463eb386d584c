import { createInProcessEventLog, createInProcessPubSub, type EventLog, type PubSub } from '@hangar/messaging';
import { createStorageProvider, type StorageProvider } from '@hangar/storage';
import type { HangarConfig } from '../config/schema.js';

/** The engines behind the ports: SQL storage, the event log and pub/sub. */
export interface Engines {
  storage: StorageProvider;
  eventLog: EventLog;
  pubsub: PubSub;
  close(): Promise<void>;
}

export async function createEngines(config: HangarConfig): Promise<Engines> {
  if (config.Kafka.Brokers.length > 0 || config.Redis.ConnectionString) {
    // Refuse rather than silently fall back to in-process messaging in a distributed deployment.
    throw new Error('Kafka:Brokers / Redis:ConnectionString are set, but the Kafka and Redis adapters are not built yet');
  }
  const postgres = config.Stores.Postgres;
  const store = postgres.ConnectionString ? postgres : config.Stores.Embedded;
  const storage = await createStorageProvider({
    postgresConnectionString: postgres.ConnectionString,
    schemaPrefix: postgres.SchemaName,
    embeddedDataDir: config.Stores.Embedded.DataDir,
    autoApplyMigrations: store.AutoApplyMigrations,
    commandTimeoutSeconds: store.CommandTimeoutSeconds,
  });
  const eventLog = createInProcessEventLog();
  const pubsub = createInProcessPubSub();
  return {
    storage,
    eventLog,
    pubsub,
    async close() {
      await pubsub.close();
      await eventLog.close();
      await storage.close();
    },
  };
}
