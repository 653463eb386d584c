import {
  createInProcessEventLog,
  createInProcessPubSub,
  createKafkaEventLog,
  createRedisPubSub,
  type EventLog,
  type PubSub,
} from '@hangar/messaging';
import { createStorageProvider, type StorageProvider, type StorageSettings } from '@hangar/storage';
import type { HangarConfig } from '../config/schema.js';

/** The engines behind the ports: SQL storage, the event log and pub/sub. */
export interface Engines {
  storage: StorageProvider;
  eventLog: EventLog;
  pubsub: PubSub;
  close(): Promise<void>;
}

/** The SQL store `config` names: PostgreSQL when it has a connection string, else the embedded one. */
export function storageSettingsOf(config: HangarConfig, onConnectionError?: (error: Error) => void): StorageSettings {
  const postgres = config.Stores.Postgres;
  const store = postgres.ConnectionString ? postgres : config.Stores.Embedded;
  return {
    postgresConnectionString: postgres.ConnectionString,
    schemaPrefix: postgres.SchemaName,
    embeddedDataDir: config.Stores.Embedded.DataDir,
    autoApplyMigrations: store.AutoApplyMigrations,
    commandTimeoutSeconds: store.CommandTimeoutSeconds,
    onConnectionError,
  };
}

/** `embeddedSeed`: see {@link StorageSettings.embeddedSeed} (the tests' throw-away stores). */
export async function createEngines(
  config: HangarConfig,
  onEngineError: (error: Error) => void = () => {},
  embeddedSeed?: string,
): Promise<Engines> {
  const storage = await createStorageProvider({ ...storageSettingsOf(config, onEngineError), embeddedSeed });
  const kafka = config.Kafka;
  const eventLog = kafka.Brokers.length
    ? await createKafkaEventLog({
        brokers: kafka.Brokers,
        clientId: kafka.ClientId,
        prefix: kafka.TopicPrefix,
        onError: onEngineError,
      }).catch(async (error) => {
        await storage.close();
        throw error;
      })
    : createInProcessEventLog();
  const redis = config.Redis;
  const pubsub = redis.ConnectionString
    ? await createRedisPubSub({ url: redis.ConnectionString, channelPrefix: redis.ChannelPrefix, onError: onEngineError }).catch(
        async (error) => {
          await Promise.all([storage.close(), eventLog.close()]);
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
