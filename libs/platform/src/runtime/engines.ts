import { createInProcessEventLog, createInProcessPubSub, createRedisPubSub, type EventLog, type PubSub } from '@hangar/messaging';
import { createStorageProvider, type StorageProvider } from '@hangar/storage';
import type { HangarConfig } from '../config/schema.js';

/** The engines behind the ports: SQL storage, the event log and pub/sub. */
export interface Engines {
  storage: StorageProvider;
  eventLog: EventLog;
  pubsub: PubSub;
  close(): Promise<void>;
}

export async function createEngines(config: HangarConfig, onRedisError: (error: Error) => void = () => {}): Promise<Engines> {
  if (config.Kafka.Brokers.length > 0) {
    // Refuse rather than silently fall back to an in-process log in a distributed deployment.
    throw new Error('Kafka:Brokers is set, but the Kafka event-log adapter is not built yet');
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
  const redis = config.Redis;
  const pubsub = redis.ConnectionString
    ? await createRedisPubSub({ url: redis.ConnectionString, channelPrefix: redis.ChannelPrefix, onError: onRedisError }).catch(
        async (error) => {
          await storage.close();
          throw error;
        },
      )
    : createInProcessPubSub();
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
